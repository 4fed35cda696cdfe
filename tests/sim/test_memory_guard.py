"""The memory guard's estimate lies within 1.25x of the measured peak, for every engine (the
smallest of ``benchmarks/memory_guard.py``'s three sizes; slow: each runs in a fresh
process), and the memory available is the least of the machine's, the address-space
limit's and the control group's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from verify.sim.engines.registry import engine_names
from verify.sim.resources import available_memory, cgroup_headroom, memory_limits

ROOT = Path(__file__).resolve().parents[2]


def benchmark():
    spec = importlib.util.spec_from_file_location(
        "memory_guard", ROOT / "benchmarks" / "memory_guard.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("engine", engine_names())
def test_the_estimate_is_within_a_quarter_of_the_measured_peak(engine):
    guard = benchmark()
    row = guard.measure(engine, guard.SIZES[engine][0])
    assert row["status"] == "completed"
    assert 1 / 1.25 <= row["ratio"] <= 1.25, row


def test_the_available_memory_is_the_least_of_every_limit():
    limits = memory_limits()
    assert available_memory() == min(limits.values()) > 0
    assert "available" in limits
    headroom = cgroup_headroom()
    assert headroom is None or limits["cgroup"] == headroom


def test_an_address_space_limit_is_read():
    """Under ``ulimit -v`` the limit left above the process's size is the binding one."""
    code = (
        "import resource; from verify.sim.resources import memory_limits; "
        "resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, resource.RLIM_INFINITY)); "
        "limits = memory_limits(); print(limits['address space'] < 8 * 2**30)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.strip() == "True"


def test_a_run_beyond_the_address_space_limit_is_refused_before_any_work():
    code = (
        "import resource, sys; "
        "resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, resource.RLIM_INFINITY)); "
        "from verify.cli import main; sys.exit(main(['run', '--d', '1e6', '--no-progress']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: d=1000000 is invalid: allowed a value for which")
    assert "left under the address space limit" in done.stderr
