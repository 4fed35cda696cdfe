"""Collecting the evidence: resumable, interruptible, the long points first.

Every point of an :class:`~verify.checks.evidence.EvidencePlan` (one seed of a preset
with the runs on its draw, or one boundary scan) is computed once and kept: a point's
record is written the moment it arrives to ``<directory>/<key>.json``
(:class:`~verify.runtime.store.ResultStore`, keyed by the point's content and the source
code that computes it, :func:`source_fingerprint`), so a check
stopped by Ctrl-C or SIGTERM resumes where it stopped, and a rerun reads the points it
finds instead of computing them. The evidence is assembled from the records in one form
whether they were computed now or read back (their JSON form), so a resumed check reports
the numbers of an uninterrupted one. The points go to the workers longest first (those
with a long flow, then the boundary scans, then the rest), so that the last to finish are
short ones; an interrupt keeps every point that has finished, stops the workers and
propagates.
"""

from __future__ import annotations

import hashlib
import os
import platform
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from verify.checks.evidence import Evidence, EvidencePlan, evidence_point
from verify.runtime.store import ResultStore, canonical, make_record, point_key

#: What a worker imports to compute a point (:func:`timed_point` and what its runs
#: import when they start), imported by workers started ahead of the first point.
WORKER_MODULES = (
    "verify.checks.collection",
    "verify.checks.setups",
    "verify.sim.batch",
    "verify.sim.data",
    "verify.sim.engines.base",
    "verify.sim.engines.flow",
    "verify.sim.simulate",
    "verify.runtime.threads",
)

#: The kinds of run in a point, longest first: a point is scheduled by its longest kind.
LONGEST_FIRST = ("flow", "scan", "event", "gd")

Progress = Callable[[int, int], None]


def point_rank(point: Mapping[str, Any]) -> int:
    """Where ``point`` goes in :data:`LONGEST_FIRST` (its longest kind of run)."""
    if point["kind"] == "scan":
        return LONGEST_FIRST.index("scan")
    return min(LONGEST_FIRST.index(kind) for kind in ("flow", "event", "gd") if point[kind])


def timed_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: :func:`~verify.checks.evidence.evidence_point` with its wall and CPU time
    (this process's), host and process id (what a stored record keeps)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = evidence_point(point)
    return {
        "result": result,
        "wall_seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "host": platform.node(),
        "pid": os.getpid(),
    }


def source_fingerprint() -> str:
    """SHA-256 of the source of the ``theory`` and ``verify`` packages (every ``.py`` file,
    by path and content): kept evidence is reused only by the code that computed it."""
    root = Path(__file__).resolve().parents[2]  # verify/checks/collection.py -> the root
    digest = hashlib.sha256()
    for package in ("theory", "verify"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode("utf-8") + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class EvidenceStore:
    """The evidence points kept in ``directory``, each keyed by its content and the source
    code (:func:`source_fingerprint`): a rerun of the same code finds them."""

    def __init__(self, directory: str | Path):
        self.results = ResultStore(directory)
        self.directory = self.results.directory
        self.code = source_fingerprint()
        self.versions: dict[str, Any] | None = None
        self._keys: dict[int, tuple[Mapping[str, Any], str]] = {}

    def key(self, point: Mapping[str, Any]) -> str:
        """The point's key (remembered for the point object: a plan gives the same point
        objects to every caller, and a key hashes the point's canonical JSON)."""
        known = self._keys.get(id(point))
        if known is None or known[0] is not point:
            known = (point, point_key(evidence_point, {**point, "code": self.code}))
            self._keys[id(point)] = known
        return known[1]

    def kept(self, plan: EvidencePlan) -> int:
        """How many of the plan's points are kept."""
        return sum(self.results.has(self.key(point)) for point in plan.points())

    def load(self, point: Mapping[str, Any]) -> Any:
        """The kept result of ``point`` (``None`` if not kept)."""
        key = self.key(point)
        return self.results.load(key)["result"] if self.results.has(key) else None

    def save(self, point: Mapping[str, Any], outcome: Mapping[str, Any]) -> Any:
        """Keep ``point``'s outcome; returns its result as kept (its JSON form)."""
        from verify.output.provenance import provenance

        if self.versions is None:
            self.versions = provenance()
        key = self.key(point)
        record = make_record(evidence_point, key, point, outcome, self.versions)
        self.results.save_plain(key, record)
        return record["result"]


def collect_evidence(
    plan: EvidencePlan,
    executor: Any,
    store: EvidenceStore | None = None,
    progress: Progress | None = None,
) -> Evidence:
    """Every point of ``plan``: read from ``store`` where kept, else computed on
    ``executor`` (``map_unordered``) and kept there on arrival. ``progress(done, total)``
    is called at once (with the kept points) and after each point. Ctrl-C or SIGTERM keeps
    the points that have finished (collected or not), stops the workers, and propagates."""
    points = plan.points()
    results: list[Any] = [store.load(point) if store else None for point in points]
    todo = sorted(
        (index for index, result in enumerate(results) if result is None),
        key=lambda index: point_rank(points[index]),
    )
    done = len(points) - len(todo)
    if progress:
        progress(done, len(points))

    def keep(position: int, outcome: Mapping[str, Any]) -> None:
        nonlocal done
        index = todo[position]
        kept = store.save(points[index], outcome) if store is not None else None
        results[index] = canonical(outcome["result"]) if kept is None else kept
        done += 1
        if progress:
            progress(done, len(points))

    try:
        for position, outcome in executor.map_unordered(timed_point, [points[i] for i in todo]):
            keep(position, outcome)
    except BaseException:
        for position, outcome in executor.drain_finished():
            keep(position, outcome)
        raise
    return Evidence.from_records(plan, points, results)


def kept_message(store: EvidenceStore, plan: EvidencePlan) -> str:
    """What an interrupted check kept, and how to go on."""
    total = len(plan.points())
    kept = store.kept(plan)
    if kept == total:
        return (
            f"all {total} evidence points are kept in {store.directory}: the same command "
            "judges them"
        )
    return (
        f"{kept} of {total} evidence points are kept in {store.directory}: the same command "
        "resumes from them"
    )


__all__ = [
    "WORKER_MODULES",
    "EvidenceStore",
    "collect_evidence",
    "kept_message",
    "point_rank",
    "timed_point",
]
