r"""Resumable parameter sweeps on interchangeable executors.

A sweep maps a *worker* (a module-level function ``point -> dict``, so that it
pickles by reference) over *points* (JSON-able mappings, usually
``{"config": RunConfig.to_dict(), ...}``). Each point is identified by

.. math::

    \mathrm{key}(w, x) = \mathrm{SHA256}(\mathrm{canonical\ JSON}(\{\text{worker}: w,
    \text{point}: x\}))[:20],

and its record (point, configuration, seed, result, wall time, package version) is
written atomically to ``<store>/<key>.json`` the moment it arrives. A rerun loads
finished records instead of recomputing them; Ctrl-C (or a worker raising
``KeyboardInterrupt``) stops the sweep, and every point that had finished, including
ones finished but not yet collected, is on disk.

Executors (all with the same ``map_unordered(function, items)`` generator):

* :class:`SerialExecutor`: in this process (tests, debugging).
* :class:`ProcessExecutor`: a local ``concurrent.futures`` process pool (default 2
  workers, ``spawn`` start, one BLAS thread per worker so that workers do not
  oversubscribe the cores).
* :class:`DaskExecutor`: a Dask ``distributed`` cluster at ``scheduler_address``, or a
  ``LocalCluster`` it starts on loopback (processes, ``n_workers`` x 1 thread).
  Dask is an optional extra (``pip install .[dask]``), imported only here.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from verify.output.files import _jsonable, atomic_write_json
from verify.output.provenance import provenance

Worker = Callable[[Mapping[str, Any]], Mapping[str, Any]]

#: Environment variables that pin native thread pools (BLAS, OpenMP) to one thread.
SINGLE_THREAD_ENV = {
    name: "1"
    for name in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    )
}


def worker_name(worker: Worker) -> str:
    """``module:qualname`` of a worker function (part of each point's key)."""
    return f"{worker.__module__}:{worker.__qualname__}"


def canonical(value: Any) -> Any:
    """A JSON round trip of ``value`` (tuples become lists, non-finite floats strings)."""
    return json.loads(json.dumps(_jsonable(value), sort_keys=True))


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


class PointFailed(Exception):
    """Raised by an executor when the point at ``index`` failed with ``cause``."""

    def __init__(self, index: int, cause: BaseException):
        super().__init__(index, cause)
        self.index, self.cause = index, cause


def _result_or_fail(index: int, future: Any) -> Any:
    try:
        return future.result()
    except Exception as error:  # KeyboardInterrupt and other BaseExceptions pass through
        raise PointFailed(index, error) from error


# -- executors ---------------------------------------------------------------------


class SerialExecutor:
    """Runs every point in this process, in order."""

    name = "serial"

    def __enter__(self) -> SerialExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        pass

    def map_unordered(
        self, function: Callable[..., Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        for index, item in enumerate(items):
            try:
                result = function(item)
            except Exception as error:
                raise PointFailed(index, error) from error
            yield index, result

    def drain_finished(self) -> list[tuple[int, Any]]:
        return []


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _FutureTracker:
    """Remembers which submitted futures were collected, to salvage the rest on Ctrl-C."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.collected: set[int] = set()

    def finished_uncollected(self, result_of: Callable[[Any], Any]) -> list[tuple[int, Any]]:
        out = []
        for future, index in self.index.items():
            if index in self.collected or not future.done() or future.cancelled():
                continue
            with contextlib.suppress(BaseException):  # a failed point is not finished
                out.append((index, result_of(future)))
                self.collected.add(index)
        return out


#: How long a cancelled worker has to exit after SIGTERM before it is killed.
WORKER_STOP_SECONDS = 10.0


class ProcessExecutor:
    """A local process pool (``spawn``; BLAS pinned to one thread per worker)."""

    name = "process"

    def __init__(self, workers: int = 2):
        if workers < 1:
            raise ValueError(f"workers={workers!r} is invalid: allowed an integer >= 1")
        self.workers = workers
        self._pool = None
        self._tracker = _FutureTracker()

    def __enter__(self) -> ProcessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, cancel: bool = False) -> None:
        """Shut the pool down; with ``cancel``, also stop the workers in the middle of a
        point. SIGTERM reaches the parent only, and a worker left running would go on
        without it (and keep the parent waiting at exit)."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        # read before shutdown, which forgets them; no public API before Python 3.14
        workers = list((getattr(pool, "_processes", None) or {}).values()) if cancel else []
        pool.shutdown(wait=not cancel, cancel_futures=True)
        for process in workers:
            process.terminate()
        for process in workers:
            process.join(WORKER_STOP_SECONDS)
            if process.is_alive():
                process.kill()

    def map_unordered(
        self, function: Callable[..., Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        self._tracker = tracker = _FutureTracker()
        with _environment(SINGLE_THREAD_ENV):
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers, mp_context=multiprocessing.get_context("spawn")
                )
            tracker.index = {self._pool.submit(function, item): i for i, item in enumerate(items)}
        try:
            for future in as_completed(tracker.index):
                index = tracker.index[future]
                result = _result_or_fail(index, future)
                tracker.collected.add(index)
                yield index, result
        except BaseException:
            for future in tracker.index:
                future.cancel()
            raise

    def drain_finished(self) -> list[tuple[int, Any]]:
        salvaged = self._tracker.finished_uncollected(lambda future: future.result())
        self.close(cancel=True)
        return salvaged


class DaskExecutor:
    """A Dask ``distributed`` cluster: ``scheduler_address``, or a loopback LocalCluster
    (``processes=True``, ``n_workers`` workers x ``threads_per_worker`` threads)."""

    name = "dask"

    def __init__(
        self, scheduler_address: str | None = None, n_workers: int = 2, threads_per_worker: int = 1
    ):
        self.scheduler_address = scheduler_address
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.client = None
        self.cluster = None
        self._tracker = _FutureTracker()

    def __enter__(self) -> DaskExecutor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self.client is not None:
            return
        from distributed import Client, LocalCluster

        if self.scheduler_address:
            self.client = Client(self.scheduler_address)
        else:
            self.cluster = LocalCluster(
                n_workers=self.n_workers,
                threads_per_worker=self.threads_per_worker,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            )
            self.client = Client(self.cluster)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    def map_unordered(
        self, function: Callable[..., Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        from distributed import as_completed

        self.start()
        self._tracker = tracker = _FutureTracker()
        tracker.index = {
            self.client.submit(function, item, pure=False): i for i, item in enumerate(items)
        }
        try:
            for future in as_completed(list(tracker.index)):
                index = tracker.index[future]
                result = _result_or_fail(index, future)
                tracker.collected.add(index)
                yield index, result
        except BaseException:
            self.client.cancel([f for f in tracker.index if not f.done()])
            raise

    def drain_finished(self) -> list[tuple[int, Any]]:
        return self._tracker.finished_uncollected(lambda future: future.result())


Executor = SerialExecutor | ProcessExecutor | DaskExecutor


def make_executor(
    workers: int = 2, scheduler_address: str | None = None, dask_local: bool = False
) -> Executor:
    """``workers = 0``: serial; a scheduler address or ``dask_local``: Dask; else a pool."""
    if scheduler_address or dask_local:
        return DaskExecutor(scheduler_address=scheduler_address, n_workers=max(workers, 1))
    if workers == 0:
        return SerialExecutor()
    return ProcessExecutor(workers)


# -- the sweep -------------------------------------------------------------------


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


def make_record(
    worker: Worker,
    key: str,
    point: Mapping[str, Any],
    outcome: Mapping[str, Any],
    versions: Mapping[str, Any],
) -> dict[str, Any]:
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
    from tqdm.auto import tqdm

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
    bar = tqdm(
        total=len(keyed),
        initial=len(records),
        desc=desc,
        unit="run",
        dynamic_ncols=True,
        disable=not progress,
        smoothing=0.05,
    )

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


__all__ = [
    "ResultStore",
    "SweepReport",
    "SweepError",
    "run_sweep",
    "point_key",
    "worker_name",
    "SerialExecutor",
    "ProcessExecutor",
    "DaskExecutor",
    "make_executor",
    "timed_call",
    "canonical",
]
