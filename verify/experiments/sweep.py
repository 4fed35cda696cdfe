r"""Resumable parameter sweeps: a worker mapped over points on any executor.

A sweep runs a *worker* (a module-level function ``point -> dict``) on every point not yet
in its :class:`~verify.runtime.store.ResultStore`, on one of the executors of
:mod:`verify.runtime.executors`, and writes each point's record the moment it arrives. A
rerun loads finished records instead of recomputing them; Ctrl-C (or a worker raising
``KeyboardInterrupt``) stops the sweep, and every point that had finished, including ones
finished but not yet collected, is on disk.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.output.provenance import provenance
from verify.runtime.executors import Executor, PointFailed, make_executor
from verify.runtime.progress import progress as progress_stage
from verify.runtime.store import ResultStore, Worker, canonical, make_record, point_key


def timed_call(worker: Worker, point: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``worker(point)`` and return its result with wall time, host and process id.

    A full garbage collection follows every point: a run's objects can form reference
    cycles (e.g. the flow engine and its ODE solver) that would otherwise keep its data
    (hundreds of MB at large d) alive in a long-lived worker process."""
    started = time.perf_counter()
    try:
        result = worker(point)
    finally:
        gc.collect()
    return {
        "result": result,
        "wall_seconds": time.perf_counter() - started,
        "host": platform.node(),
        "pid": os.getpid(),
    }


class SweepError(RuntimeError):
    """A point's worker raised; the message names the point (finished points are saved)."""


@dataclass
class SweepReport:
    """Records of the finished points (in the order of the points given) and counts."""

    records: list[dict[str, Any]] = field(default_factory=list)
    computed: int = 0
    skipped: int = 0
    pending: int = 0
    wall_seconds: float = 0.0

    def results(self) -> list[dict[str, Any]]:
        return [record["result"] for record in self.records]


def run_sweep(
    points: Iterable[Mapping[str, Any]],
    worker: Worker,
    store: ResultStore | str | Path,
    executor: Executor | None = None,
    *,
    limit: int | None = None,
    progress: bool = True,
    desc: str = "sweep",
) -> SweepReport:
    """Run ``worker`` on every point not yet in ``store``; persist each record on arrival.

    ``limit`` caps how many new points are computed (the rest stay pending). A
    ``KeyboardInterrupt`` (from Ctrl-C or from a worker) first saves every finished
    point, then propagates. Returns the records of all finished points, in point order.
    """
    started = time.perf_counter()
    store = store if isinstance(store, ResultStore) else ResultStore(store)
    keyed: dict[str, Mapping[str, Any]] = {}
    for point in points:
        keyed.setdefault(point_key(worker, point), point)
    records = {key: store.load(key) for key in keyed if store.has(key)}
    todo = [key for key in keyed if key not in records]
    report = SweepReport(skipped=len(records))
    if limit is not None:
        todo = todo[: max(limit, 0)]
    versions = provenance()
    owned = executor is None
    executor = executor if executor is not None else make_executor()
    bar = progress_stage(len(keyed), desc, "run", enabled=progress, initial=len(records))

    def save(index: int, outcome: Mapping[str, Any]) -> None:
        key = todo[index]
        record = make_record(worker, key, keyed[key], outcome, versions)
        store.save(key, record)
        records[key] = record
        report.computed += 1
        bar.update(1)

    try:
        calls = [_Call(worker, keyed[key]) for key in todo]
        try:
            for index, outcome in executor.map_unordered(_run_call, calls):
                save(index, outcome)
        except PointFailed as failure:
            point = keyed[todo[failure.index]]
            raise SweepError(
                f"point {todo[failure.index]} failed with {failure.cause!r}; "
                f"point: {json.dumps(canonical(point))[:500]}; finished points "
                f"are saved in {store.directory}"
            ) from failure.cause
    except BaseException:
        for index, outcome in executor.drain_finished():
            save(index, outcome)
        raise
    finally:
        bar.close()
        if owned:
            executor.close()
    report.records = [records[key] for key in keyed if key in records]
    report.pending = len(keyed) - len(report.records)
    report.wall_seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class _Call:
    worker: Worker
    point: Mapping[str, Any]


def _run_call(call: _Call) -> dict[str, Any]:
    return timed_call(call.worker, call.point)


__all__ = ["SweepReport", "SweepError", "run_sweep", "timed_call"]
