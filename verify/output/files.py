"""Atomic result files, and the checks an output place passes before any work starts.

Every file is written to a temporary sibling with a unique name and moved into place
with :func:`os.replace`, so a reader never sees a half-written file, an interrupted
write leaves the previous version intact, and two writers never share a temporary file.

Missing values are written so that other tools read them as missing: ``null`` in JSON
(never the strings ``"nan"`` or ``"inf"``; a non-finite float is not a JSON number, so
an infinite value is ``null`` too), an empty cell in CSV, a float NaN in Parquet.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from theory.foundation.validation import InvalidParameter, require


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` atomically (temporary file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent
    )
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


def atomic_write_all(payloads: Mapping[Path, bytes]) -> None:
    """Write each ``payloads[path]`` to its ``path`` atomically (:func:`atomic_write_bytes`),
    the files at once, one thread each (most of a small file's write is the wait for the
    disk to sync it); the first error of any is raised when all are done."""
    errors: list[BaseException] = []

    def write(path: Path, payload: bytes) -> None:
        try:
            atomic_write_bytes(path, payload)
        except BaseException as error:  # raised in the caller's thread below
            errors.append(error)

    threads = [
        threading.Thread(target=write, args=(path, payload), name=f"write {Path(path).name}")
        for path, payload in payloads.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def jsonable(value: Any, spelled: bool = False) -> Any:
    """``value`` in plain JSON types: mappings with string keys, lists, Python numbers
    (NumPy scalars and arrays converted). A non-finite float becomes ``None`` (JSON
    ``null``), or with ``spelled`` the string ``"nan"``, ``"inf"`` or ``"-inf"`` (kept
    only for the keys of stored records, which must not change)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, spelled) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, spelled) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), spelled)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        if math.isfinite(value):
            return value
        return str(value) if spelled else None
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value


def json_text(payload: Any) -> str:
    """``payload`` as indented JSON text, non-finite floats as ``null`` (strict JSON)."""
    return json.dumps(jsonable(payload), indent=2, sort_keys=False, allow_nan=False) + "\n"


def atomic_write_json(path: Path, payload: Any) -> None:
    """JSON with missing and non-finite values as ``null`` (see :func:`jsonable`)."""
    atomic_write_text(path, json_text(payload))


def csv_cell(value: Any) -> Any:
    """A CSV cell: empty for a missing value (``None``, NaN); a float exactly
    (``repr``, so ``inf`` stays ``inf``); anything else as it is."""
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else repr(float(value))
    return value


def atomic_write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A CSV table (missing values as empty cells, see :func:`csv_cell`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell(v) for v in row])
    atomic_write_text(path, buffer.getvalue())


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


def numeric_csv(header: Sequence[str], prefixes: Sequence[str], values: np.ndarray) -> str:
    """CSV text: ``header``, then per row ``prefixes[i]`` followed by the row of ``values``
    formatted with 17 significant digits (exact float64 round trip; a NaN as an empty
    cell, ``inf`` spelled out). One ``%`` formatting of the whole matrix: a cell of
    ``%.17g`` is digits, sign, point and exponent, ``inf`` or ``nan``, so the only
    ``nan`` in the text are the NaN cells, which are then emptied."""
    lines = [",".join(header)]
    matrix = np.asarray(values, dtype=np.float64)
    if len(matrix):
        matrix = matrix[:, None] if matrix.ndim == 1 else matrix
        row = ",".join(["%.17g"] * matrix.shape[1])
        text = "\n".join([row] * len(matrix)) % tuple(matrix.ravel().tolist())
        text = text.replace("nan", "")
        lines += [prefix + line for prefix, line in zip(prefixes, text.split("\n"), strict=True)]
    return "\n".join(lines) + "\n"


def _writable_directory(path: Path, shown: str, name: str) -> None:
    """``path`` exists as a directory (created if missing) this process can write into."""
    try:
        require(
            not path.exists() or path.is_dir(),
            name,
            shown,
            "a directory (this path is an existing file)",
        )
        path.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".write-check.", dir=path)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise InvalidParameter(
            name, shown, f"a directory this process can write into ({error.strerror or error})"
        ) from None


def refuse_earlier_result(
    path: Path, shown: str, name: str, overwrite: bool, guarded: Sequence[str]
) -> None:
    """:class:`InvalidParameter` when ``path`` holds one of the ``guarded`` files of an
    earlier result and ``overwrite`` is not set."""
    existing = [file for file in guarded if (path / file).exists()]
    require(
        overwrite or not existing,
        name,
        shown,
        f"a directory without an earlier result, or --overwrite to replace it (it holds "
        f"{', '.join(existing)})",
    )


def prepare_output_dir(
    path: str | Path, name: str = "out", overwrite: bool = False, guarded: Sequence[str] = ()
) -> Path:
    """Check, before any work, that ``path`` can take a command's results: a directory
    (created if missing) that this process can write into, and, unless ``overwrite``,
    holding none of the ``guarded`` files of an earlier result. Problems are
    :class:`~theory.foundation.validation.InvalidParameter` naming ``name``. (A command
    holds its place with :func:`verify.output.claim.claim_output`, which makes these
    checks under a lock that keeps other writers out.)"""
    shown = str(path)
    path = Path(path)
    _writable_directory(path, shown, name)
    refuse_earlier_result(path, shown, name, overwrite, guarded)
    return path
