"""Atomic result files, and the checks an output place passes before any work starts.

Every file is written to a temporary sibling and moved into place with
:func:`os.replace`, so a reader never sees a half-written file and an interrupted
write leaves the previous version intact.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from theory.foundation.validation import InvalidParameter, require


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` atomically (temporary file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(payload)
            stream.flush()
            os.fsync(stream.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def jsonable(value: Any) -> Any:
    """``value`` in plain JSON types: mappings with string keys, lists, Python numbers
    (NumPy scalars and arrays converted; non-finite floats as the strings "inf", "nan")."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


def atomic_write_json(path: Path, payload: Any) -> None:
    """JSON with non-finite floats spelled as strings ("inf", "nan")."""
    atomic_write_text(path, json.dumps(jsonable(payload), indent=2, sort_keys=False) + "\n")


def atomic_write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(
            [
                "" if v is None else (repr(float(v)) if isinstance(v, (float, np.floating)) else v)
                for v in row
            ]
        )
    atomic_write_text(path, buffer.getvalue())


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


def numeric_csv(header: Sequence[str], prefixes: Sequence[str], values: np.ndarray) -> str:
    """CSV text: ``header``, then per row ``prefixes[i]`` followed by the row of ``values``
    formatted with 17 significant digits (exact float64 round trip; ``nan`` and ``inf``
    spelled out). Vectorised: one formatting pass over the whole matrix."""
    lines = [",".join(header)]
    if len(values):
        body = io.StringIO()
        np.savetxt(body, np.asarray(values, dtype=np.float64), fmt="%.17g", delimiter=",")
        lines += [
            prefix + line
            for prefix, line in zip(prefixes, body.getvalue().splitlines(), strict=True)
        ]
    return "\n".join(lines) + "\n"


def prepare_output_dir(
    path: str | Path, name: str = "out", overwrite: bool = False, guarded: Sequence[str] = ()
) -> Path:
    """Check, before any work, that ``path`` can take a command's results: a directory
    (created if missing) that this process can write into, and, unless ``overwrite``,
    holding none of the ``guarded`` files of an earlier result. Problems are
    :class:`~theory.foundation.validation.InvalidParameter` naming ``name``."""
    shown = str(path)
    path = Path(path)
    require(
        not path.exists() or path.is_dir(),
        name,
        shown,
        "a directory (this path is an existing file)",
    )
    try:
        path.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".write-check.", dir=path)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise InvalidParameter(
            name, shown, f"a directory this process can write into ({error.strerror or error})"
        ) from None
    existing = [file for file in guarded if (path / file).exists()]
    require(
        overwrite or not existing,
        name,
        shown,
        f"a directory without an earlier result, or --overwrite to replace it (it holds "
        f"{', '.join(existing)})",
    )
    return path
