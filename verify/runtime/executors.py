"""Executors: where the points of a sweep run, all behind one generator.

Every executor has ``map_unordered(function, items)``, which yields ``(index, result)``
as results arrive, and ``drain_finished()``, which after an interruption returns the
results that had finished but were not yet collected:

* :class:`SerialExecutor`: in this process (tests, debugging).
* :class:`ProcessExecutor`: a local ``concurrent.futures`` process pool (default 2
  workers, ``spawn`` start, one BLAS thread per worker so that workers do not
  oversubscribe the cores).
* :class:`DaskExecutor`: a Dask ``distributed`` cluster at ``scheduler_address``, or a
  ``LocalCluster`` it starts on loopback (processes, ``n_workers`` x 1 thread).
  Dask is an optional extra (``pip install .[dask]``), imported only here.

:func:`make_executor` picks one from plain arguments; :class:`ExecutorSettings` holds the
same choice as validated data (the command line's ``--workers``, ``--scheduler`` and
``--dask-local``).

A point whose function raises is reported as :class:`PointFailed` (its index and cause).
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from theory.foundation.validation import (
    Boolean,
    Integer,
    InvalidParameter,
    Optional,
    Text,
    Validated,
    parameter,
)

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


def preload(modules: Sequence[str]) -> int:
    """Worker: import ``modules`` (so that the first point starts at once); the process id."""
    for name in modules:
        importlib.import_module(name)
    return os.getpid()


class SerialExecutor:
    """Runs every point in this process, in order."""

    name = "serial"

    def warm(self, modules: Sequence[str]) -> None:
        """Nothing to start: the points run in this process."""

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
        self._pool: ProcessPoolExecutor | None = None
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

    def _started(self) -> ProcessPoolExecutor:
        """The pool (made on first use; its workers start with the first tasks, pinned to
        one BLAS thread by the environment they inherit)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    def warm(self, modules: Sequence[str]) -> None:
        """Start the workers now, each importing ``modules`` (:func:`preload`), while this
        process goes on with its own work: the first points then start at once."""
        with _environment(SINGLE_THREAD_ENV):
            pool = self._started()
            for _ in range(self.workers):
                pool.submit(preload, tuple(modules))

    def map_unordered(
        self, function: Callable[..., Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        self._tracker = tracker = _FutureTracker()
        with _environment(SINGLE_THREAD_ENV):
            pool = self._started()
            tracker.index = {pool.submit(function, item): i for i, item in enumerate(items)}
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
        self.client: Any = None  # a distributed.Client once started
        self.cluster: Any = None  # the LocalCluster it started, if any
        self._tracker = _FutureTracker()

    def __enter__(self) -> DaskExecutor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def warm(self, modules: Sequence[str]) -> None:
        """Nothing here: a cluster's workers are started with it."""

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


@dataclass(frozen=True)
class ExecutorSettings(Validated):
    """Where the runs of an experiment execute."""

    workers: int = parameter(2, Integer(0, 256), "worker processes (0 runs in this process)")
    scheduler: str | None = parameter(
        None, Optional(Text()), "a Dask scheduler address tcp://HOST:PORT"
    )
    dask_local: bool = parameter(
        False, Boolean(), "start a Dask LocalCluster on loopback with `workers` processes"
    )

    def check_relations(self) -> None:
        if self.scheduler is not None and self.dask_local:
            raise InvalidParameter("dask_local", True, "False together with scheduler")

    def check_reachable(self, timeout: float = 3.0) -> None:
        """Before any work: Dask importable, and a scheduler address that answers."""
        if self.scheduler is None and not self.dask_local:
            return
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise InvalidParameter(
                "scheduler" if self.scheduler else "dask_local",
                self.scheduler or True,
                "Dask execution only with the dask extra installed (pip install '.[dask]')",
            ) from None
        if self.scheduler is None:
            return
        address = urlparse(self.scheduler)
        if address.scheme != "tcp" or not address.hostname or not address.port:
            raise InvalidParameter("scheduler", self.scheduler, "an address tcp://HOST:PORT")
        try:
            with socket.create_connection((address.hostname, address.port), timeout=timeout):
                pass
        except OSError as error:
            raise InvalidParameter(
                "scheduler",
                self.scheduler,
                f"the address of a running Dask scheduler (no answer "
                f"within {timeout:g} s: {error.strerror or error})",
            ) from None

    def make(self) -> Executor:
        return make_executor(
            workers=self.workers, scheduler_address=self.scheduler, dask_local=self.dask_local
        )


__all__ = [
    "ExecutorSettings",
    "SerialExecutor",
    "ProcessExecutor",
    "DaskExecutor",
    "Executor",
    "PointFailed",
    "make_executor",
    "preload",
    "SINGLE_THREAD_ENV",
    "WORKER_STOP_SECONDS",
]
