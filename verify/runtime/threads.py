"""One BLAS thread around small-matrix loops (threadpoolctl), and work in background threads.

The matrices of a training step are small: several BLAS threads only contend for the
cores, so the step loops run inside :func:`single_blas_thread`. Larger products that are
independent of each other run in threads of their own instead (:func:`ordered_map`), each
on one BLAS thread, so that their numbers do not depend on how many run at once.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Generic, TypeVar

from threadpoolctl import ThreadpoolController

Item = TypeVar("Item")
Value = TypeVar("Value")


@cache
def _thread_controller() -> ThreadpoolController:
    """The controller of the native thread pools, built on first use (it inspects the
    libraries loaded by then)."""
    return ThreadpoolController()


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Within the block, BLAS uses one thread (small matrix loops; threadpoolctl)."""
    with _thread_controller().limit(limits=1, user_api="blas"):
        yield


class Job(Generic[Item, Value]):
    """``function(item)`` computed in a background thread from construction."""

    def __init__(self, function: Callable[[Item], Value], item: Item):
        self._value: Value | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(function, item), daemon=True)
        self._thread.start()

    def _run(self, function: Callable[[Item], Value], item: Item) -> None:
        try:
            self._value = function(item)
        except BaseException as error:  # re-raised by result(), in the caller's thread
            self._error = error

    def result(self) -> Value:
        """The value (waits for the thread); the function's exception if it raised one."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def ordered_map(
    function: Callable[[Item], Value], items: Iterable[Item], workers: int
) -> Iterator[Value]:
    """``function(item)`` for each item, in the items' order, computed ``workers`` at a
    time in background threads (for functions that spend their time in code that releases
    the interpreter lock, such as BLAS products); the items are drawn as the work goes on,
    at most ``workers`` ahead of the consumer. One worker: computed in this thread."""
    if workers <= 1:
        yield from map(function, items)
        return
    running: collections.deque[Job[Item, Value]] = collections.deque()
    for item in items:
        running.append(Job(function, item))
        if len(running) >= workers:
            yield running.popleft().result()
    while running:
        yield running.popleft().result()


#: How much lower (in nice steps) a thread whose result is needed last is scheduled.
LOWER_PRIORITY = 10


def lower_priority() -> None:
    """Schedule the calling thread :data:`LOWER_PRIORITY` nice steps below the others
    (Linux sets a nice value per thread; elsewhere, or where it is refused, nothing
    changes)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWER_PRIORITY)
    except (AttributeError, OSError):
        pass


def available_cores() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


__all__ = ["single_blas_thread", "Job", "ordered_map", "available_cores", "lower_priority"]
