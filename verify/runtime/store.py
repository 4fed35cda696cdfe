r"""The result store: one JSON record per finished point, keyed by worker and point.

A point (a JSON-able mapping, usually ``{"config": RunConfig.to_dict(), ...}``) given to a
*worker* (a module-level function ``point -> dict``, so that it pickles by reference) is
identified by

.. math::

    \mathrm{key}(w, x) = \mathrm{SHA256}(\mathrm{canonical\ JSON}(\{\text{worker}: w,
    \text{point}: x\}))[:20],

and its record (point, configuration, seed, result, wall time, host, package version) is
written atomically to ``<store>/<key>.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from verify.output.files import atomic_write_json, jsonable

Worker = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def worker_name(worker: Worker) -> str:
    """``module:qualname`` of a worker function (part of each point's key)."""
    return f"{worker.__module__}:{worker.__qualname__}"


def canonical(value: Any) -> Any:
    """A JSON round trip of ``value`` (tuples become lists, non-finite floats strings)."""
    return json.loads(json.dumps(jsonable(value), sort_keys=True))


def point_key(worker: Worker | str, point: Mapping[str, Any]) -> str:
    """Stable 20-hex-digit key of (worker, point), independent of dict order."""
    name = worker if isinstance(worker, str) else worker_name(worker)
    text = json.dumps(
        {"worker": name, "point": canonical(point)}, sort_keys=True, separators=(",", ":")
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
        with open(self.path(key), encoding="utf-8") as stream:
            return json.load(stream)

    def save(self, key: str, record: Mapping[str, Any]) -> None:
        atomic_write_json(self.path(key), record)

    def keys(self) -> set[str]:
        return {path.stem for path in self.directory.glob("*.json")}


def make_record(
    worker: Worker,
    key: str,
    point: Mapping[str, Any],
    outcome: Mapping[str, Any],
    versions: Mapping[str, Any],
) -> dict[str, Any]:
    """The stored record of a finished point: its key, worker, point, configuration and
    seed, the worker's ``outcome`` (result, wall time, host, process id), the time it
    finished and ``versions`` (the provenance)."""
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
            "host": outcome["host"],
            "pid": outcome["pid"],
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "provenance": versions,
        }
    )


__all__ = ["Worker", "ResultStore", "point_key", "worker_name", "canonical", "make_record"]
