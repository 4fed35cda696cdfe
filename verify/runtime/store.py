r"""The result store: one JSON record per finished point, keyed by worker and point.

A point (a JSON-able mapping, usually ``{"config": RunConfig.to_dict(), ...}``) given to a
*worker* (a module-level function ``point -> dict``, so that it pickles by reference) is
identified by

.. math::

    \mathrm{key}(w, x) = \mathrm{SHA256}(\mathrm{canonical\ JSON}(\{\text{worker}: w,
    \text{point}: x\}))[:20],

and its record (point, configuration, seed, result, wall time, host, package version) is
written atomically to ``<store>/<key>.json`` with the SHA-256 of its content
(:func:`checksum`), so that a record changed after it was written is found on resume.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from verify.output.files import atomic_write_text, jsonable

Worker = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def worker_name(worker: Worker) -> str:
    """``module:qualname`` of a worker function (part of each point's key)."""
    return f"{worker.__module__}:{worker.__qualname__}"


def canonical(value: Any, spelled: bool = False) -> Any:
    """A JSON round trip of ``value`` (tuples become lists, non-finite floats ``None``, or
    with ``spelled`` the strings ``"nan"``, ``"inf"``: the spelling keys were made with)."""
    return json.loads(json.dumps(jsonable(value, spelled), sort_keys=True))


def point_key(worker: Worker | str, point: Mapping[str, Any]) -> str:
    """Stable 20-hex-digit key of (worker, point), independent of dict order."""
    name = worker if isinstance(worker, str) else worker_name(worker)
    text = json.dumps(
        {"worker": name, "point": canonical(point, spelled=True)},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


class ResultStore:
    """One JSON record per finished point in ``directory``, written atomically."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def load(self, key: str) -> dict[str, Any]:
        """The record as it was saved (its checksum left out)."""
        with open(self.path(key), encoding="utf-8") as stream:
            record = json.load(stream)
        record.pop("checksum", None)
        return record

    def save(self, key: str, record: Mapping[str, Any]) -> None:
        """Write ``record`` with its :func:`checksum`."""
        self.save_plain(key, canonical({k: v for k, v in record.items() if k != "checksum"}))

    def save_plain(self, key: str, plain: Mapping[str, Any]) -> None:
        """Write ``plain``, a record in plain JSON types already (:func:`canonical`, as
        :func:`make_record` gives it, without a checksum), with its :func:`checksum`."""
        atomic_write_text(self.path(key), signed_text(plain))

    def keys(self) -> set[str]:
        return {path.stem for path in self.directory.glob("*.json")}


def checksum_text(record: Mapping[str, Any]) -> str:
    """A record's canonical JSON (sorted keys, no spaces), its own ``checksum`` field left
    out: the text :func:`checksum` hashes."""
    return json.dumps(
        {k: v for k, v in record.items() if k != "checksum"},
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=False,
    )


def checksum(record: Mapping[str, Any]) -> str:
    """SHA-256 of a record's canonical JSON, its own ``checksum`` field left out."""
    return hashlib.sha256(checksum_text(record).encode("utf-8")).hexdigest()


def signed_text(plain: Mapping[str, Any]) -> str:
    """The stored text of a non-empty plain record: its canonical JSON
    (:func:`checksum_text`) with the ``checksum`` of that text added as the last field
    (one encoding for both)."""
    text = checksum_text(plain)
    if not text.endswith("}") or text == "{}":
        raise ValueError("a stored record is a non-empty JSON object")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f'{text[:-1]},"checksum":"{digest}"}}\n'


def record_problem(record: Any, key: str) -> str | None:
    """What is wrong with a stored record read back for ``key`` (``None``: nothing): not a
    JSON object, no ``result`` object, another key, or a checksum that does not match
    (changed after it was written; records written before checksums were added have
    none and are taken as they are)."""
    if not isinstance(record, dict):
        return f"a JSON object (it holds {type(record).__name__})"
    if not isinstance(record.get("result"), dict):
        return "a record with a result object (its result is missing or not an object)"
    if record.get("key", key) != key:
        return f"the record of key {key} (it holds key {record.get('key')!r})"
    if "checksum" in record and record["checksum"] != checksum(record):
        return "a record as it was written (its checksum does not match: it was changed)"
    return None


def make_record(
    worker: Worker,
    key: str,
    point: Mapping[str, Any],
    outcome: Mapping[str, Any],
    versions: Mapping[str, Any],
) -> dict[str, Any]:
    """The stored record of a finished point: its key, worker, point, configuration and
    seed, the worker's ``outcome`` (result, wall time, CPU time where the worker measured
    it, host, process id), the time it finished and ``versions`` (the provenance)."""
    config = point.get("config") if isinstance(point, Mapping) else None
    seed = config.get("seed") if isinstance(config, Mapping) else point.get("seed")
    return canonical(
        {
            "key": key,
            "worker": worker_name(worker),
            "point": point,
            "config": config,
            "seed": seed,
            "result": outcome["result"],
            "wall_seconds": outcome["wall_seconds"],
            **({"cpu_seconds": outcome["cpu_seconds"]} if "cpu_seconds" in outcome else {}),
            "host": outcome["host"],
            "pid": outcome["pid"],
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "provenance": versions,
        }
    )


__all__ = [
    "Worker",
    "ResultStore",
    "point_key",
    "worker_name",
    "canonical",
    "make_record",
    "checksum",
    "checksum_text",
    "signed_text",
    "record_problem",
]
