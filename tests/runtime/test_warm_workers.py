"""Workers started ahead of the first points have imported what those points run, and
then compute them as a cold pool does."""

from __future__ import annotations

import importlib
import os
import sys

from verify.checks.collection import WORKER_MODULES
from verify.runtime.executors import ProcessExecutor, SerialExecutor


def imported(names: tuple[str, ...]) -> list[bool]:
    """Worker: which of ``names`` this process has imported."""
    return [name in sys.modules for name in names]


def test_every_worker_module_exists():
    for name in WORKER_MODULES:
        importlib.import_module(name)


def test_warm_workers_have_the_modules_and_compute_as_a_cold_pool():
    names = ("verify.sim.simulate", "verify.checks.setups")
    with ProcessExecutor(1) as warm:
        warm.warm(names)
        (_, seen), *_ = list(warm.map_unordered(imported, [names]))
    with ProcessExecutor(1) as cold:
        (_, unseen), *_ = list(cold.map_unordered(imported, [names]))
    assert seen == [True, True] and unseen == [False, False]


def test_a_serial_executor_has_nothing_to_start():
    serial = SerialExecutor()
    serial.warm(("verify.sim.simulate",))
    assert list(serial.map_unordered(os.getpid().__add__, [0])) == [(0, os.getpid())]
