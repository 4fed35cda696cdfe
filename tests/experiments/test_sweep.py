"""Sweeps: stable keys, persistence, resuming after a limit or an interrupt, executors
(serial, process pool, Dask LocalCluster), atomic records, and the statistics used on
sweep results."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from verify.experiments.boundaries import BENIGN_NOT, HARMFUL_BENIGN, Bracket, exponent_rows
from verify.experiments.fits import (
    bootstrap_exponent,
    first_step_always,
    fit_power_law,
    settle_step,
    slope_per_decade,
)
from verify.experiments.sweep import SweepError, run_sweep
from verify.experiments.workers import final_state
from verify.runtime.executors import ProcessExecutor, SerialExecutor
from verify.runtime.store import ResultStore, point_key
from verify.sim.config import RunConfig

INTERRUPT_AT = "VERIFY_TEST_INTERRUPT_AT"


def tiny_points(count: int = 6) -> list[dict]:
    return [
        {
            "config": RunConfig.build(
                d=20 + 4 * i,
                n=6,
                T=4,
                mu_norm=5.0 + i,
                steps=20,
                test_size=16,
                seed=i,
                log_every=20,
                log_geometric=0,
            ).to_dict()
        }
        for i in range(count)
    ]


def interrupting_worker(point):
    """``final_state``, except that the point whose seed is in $VERIFY_TEST_INTERRUPT_AT
    raises KeyboardInterrupt (as Ctrl-C would)."""
    if str(point["config"]["seed"]) == os.environ.get(INTERRUPT_AT):
        raise KeyboardInterrupt
    return final_state(point)


def failing_worker(point):
    if point["config"]["seed"] == 2:
        raise ValueError("bad point")
    return final_state(point)


def results_by_key(report) -> dict:
    return {record["key"]: record["result"] for record in report.records}


def strip_timing(results: dict) -> dict:
    return {
        key: {k: v for k, v in value.items() if k != "run_seconds"}
        for key, value in results.items()
    }


def test_point_key_is_stable_and_separates_workers():
    point = tiny_points(1)[0]
    reordered = {"config": dict(reversed(list(point["config"].items())))}
    assert point_key(final_state, point) == point_key(final_state, reordered)
    assert point_key(final_state, point) != point_key(interrupting_worker, point)
    changed = {"config": {**point["config"], "seed": 99}}
    assert point_key(final_state, point) != point_key(final_state, changed)


def test_limit_then_resume_skips_finished_and_matches_a_fresh_run(tmp_path):
    points = tiny_points()
    store = ResultStore(tmp_path / "a")
    first = run_sweep(points, interrupting_worker, store, SerialExecutor(), limit=3, progress=False)
    assert (first.computed, first.skipped, first.pending) == (3, 0, 3)
    before = {
        path.name: (path.read_bytes(), path.stat().st_mtime_ns)
        for path in store.directory.glob("*.json")
    }
    second = run_sweep(points, interrupting_worker, store, SerialExecutor(), progress=False)
    assert (second.computed, second.skipped, second.pending) == (3, 3, 0)
    for name, (payload, mtime) in before.items():  # finished records were not rewritten
        path = store.directory / name
        assert path.read_bytes() == payload and path.stat().st_mtime_ns == mtime
    fresh = run_sweep(points, interrupting_worker, tmp_path / "b", SerialExecutor(), progress=False)
    assert strip_timing(results_by_key(second)) == strip_timing(results_by_key(fresh))
    third = run_sweep(points, interrupting_worker, store, SerialExecutor(), progress=False)
    assert (third.computed, third.skipped) == (0, 6)


def test_a_failing_point_is_named_and_finished_points_are_kept(tmp_path):
    points = tiny_points(4)
    with pytest.raises(SweepError, match=point_key(failing_worker, points[2])):
        run_sweep(points, failing_worker, tmp_path, SerialExecutor(), progress=False)
    assert ResultStore(tmp_path).keys() == {point_key(failing_worker, p) for p in points[:2]}


def test_records_hold_config_seed_and_versions(tmp_path):
    report = run_sweep(tiny_points(2), final_state, tmp_path, SerialExecutor(), progress=False)
    record = json.loads((tmp_path / f"{report.records[1]['key']}.json").read_text())
    assert record["config"]["model"]["d"] == 24 and record["seed"] == 1
    assert record["worker"] == "verify.experiments.workers:final_state"
    assert record["provenance"]["package_version"]
    assert record["wall_seconds"] > 0 and "test_accuracy" in record["result"]


@pytest.mark.parametrize("executor_kind", ["serial", "process"])
def test_keyboard_interrupt_keeps_finished_points(tmp_path, monkeypatch, executor_kind):
    points = tiny_points()
    monkeypatch.setenv(INTERRUPT_AT, "3")
    executor = SerialExecutor() if executor_kind == "serial" else ProcessExecutor(2)
    store = ResultStore(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(points, interrupting_worker, store, executor, progress=False)
    executor.close()
    saved = store.keys()
    expected = {point_key(interrupting_worker, p) for p in points}
    assert saved <= expected
    assert point_key(interrupting_worker, points[3]) not in saved
    if executor_kind == "serial":
        assert len(saved) == 3
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
    monkeypatch.delenv(INTERRUPT_AT)
    resumed = run_sweep(points, interrupting_worker, store, SerialExecutor(), progress=False)
    assert resumed.skipped == len(saved) and resumed.computed == 6 - len(saved)
    reference = run_sweep(
        points, interrupting_worker, tmp_path / "ref", SerialExecutor(), progress=False
    )
    assert strip_timing(results_by_key(resumed)) == strip_timing(results_by_key(reference))


def test_process_pool_matches_serial(tmp_path):
    points = tiny_points(4)
    with ProcessExecutor(2) as pool:
        parallel = run_sweep(points, final_state, tmp_path / "p", pool, progress=False)
    serial = run_sweep(points, final_state, tmp_path / "s", SerialExecutor(), progress=False)
    assert strip_timing(results_by_key(parallel)) == strip_timing(results_by_key(serial))
    assert [r["point"] for r in parallel.records] == [r["point"] for r in serial.records]


def test_dask_local_cluster_matches_serial(tmp_path):
    pytest.importorskip(
        "distributed",
        reason="dask.distributed is not installed (optional extra: pip install .[dask])",
    )
    from verify.runtime.executors import DaskExecutor

    points = tiny_points(4)
    with DaskExecutor(n_workers=2) as executor:
        assert executor.cluster is not None
        address = executor.cluster.scheduler_address
        assert "127.0.0.1" in address
        dask = run_sweep(points, final_state, tmp_path / "d", executor, progress=False)
    serial = run_sweep(points, final_state, tmp_path / "s", SerialExecutor(), progress=False)
    assert dask.computed == 4
    assert strip_timing(results_by_key(dask)) == strip_timing(results_by_key(serial))


def test_store_write_is_atomic(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.save("k", {"value": 1})

    def broken_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.save("k", {"value": 2})
    monkeypatch.undo()
    assert store.load("k") == {"value": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.json"]


def test_power_law_fit_recovers_a_known_exponent():
    rng = np.random.default_rng(1)
    x = np.repeat(np.geomspace(500, 8000, 5), 5)
    covered, exponents = 0, []
    for _ in range(200):
        y = 3.0 * x**0.25 * np.exp(rng.normal(0, 0.05, x.size))
        fit = fit_power_law(x, y)
        exponents.append(fit.exponent)
        covered += fit.ci_low < 0.25 < fit.ci_high
    assert abs(np.mean(exponents) - 0.25) < 0.005
    assert 0.9 <= covered / 200 <= 0.99  # a 95% interval covers about 95% of the time
    assert abs(fit.prefactor - 3.0) / 3.0 < 0.3
    replicates = {float(v): list(y[x == v]) for v in np.unique(x)}
    low, high = bootstrap_exponent(replicates, repetitions=500)
    assert low < fit.exponent < high and high - low < 0.2


def test_boundary_exponents_from_synthetic_brackets():
    rng = np.random.default_rng(2)
    brackets = []
    for d in (500, 1000, 2000, 4000, 8000):
        for seed in range(5):
            for kind, law in ((HARMFUL_BENIGN, 1.5 * d**0.25), (BENIGN_NOT, 0.5 * d**0.5)):
                centre = law * math.exp(rng.normal(0, 0.03))
                brackets.append(
                    Bracket(kind, "d", d, 20, seed, centre / 1.01, centre * 1.01, bracketed=True)
                )
    rows = {row["boundary"]: row for row in exponent_rows(brackets, repetitions=300)}
    for kind, exponent in ((HARMFUL_BENIGN, 0.25), (BENIGN_NOT, 0.5)):
        row = rows[kind]
        assert abs(row["exponent"] - exponent) < 3 * row["stderr"] < 0.05
        assert row["ci_low"] < row["exponent"] < row["ci_high"]
        assert row["bootstrap_low"] < row["exponent"] < row["bootstrap_high"]
        assert row["theory"] == exponent and row["points"] == 25


def test_time_statistics():
    steps = np.array([1, 10, 100, 1000, 10000])
    assert slope_per_decade(steps, 2.0 + math.log(10) * np.log10(steps), 10)[0] == pytest.approx(
        math.log(10)
    )
    assert first_step_always(steps, [False, True, False, True, True]) == 1000
    assert math.isnan(first_step_always(steps, [True, True, True, True, False]))
    assert settle_step(steps, [0.5, 0.9, 0.995, 0.98, 1.0], 0.03) == 100


SLOW_WORKER = """
import os, time

def slow_point(point):
    with open(point["pid_file"], "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(300)
    return {}
"""

SWEEP_UNDER_SIGTERM = """
import sys
from slow_worker import slow_point
from verify.experiments.sweep import run_sweep
from verify.runtime.executors import ProcessExecutor
from verify.runtime.interrupts import sigterm_as_interrupt

if __name__ == "__main__":
    try:
        with sigterm_as_interrupt():
            run_sweep([{"pid_file": sys.argv[1]}], slow_point, sys.argv[2], ProcessExecutor(1),
                      progress=False)
    except KeyboardInterrupt:
        sys.exit(143)
"""


def test_sigterm_stops_the_workers_of_a_process_pool(tmp_path):
    """SIGTERM reaches the parent only (a terminal's Ctrl-C reaches every process of the
    group): the parent stops its workers, even one in the middle of a long point, instead
    of leaving it running without a parent."""
    (tmp_path / "slow_worker.py").write_text(SLOW_WORKER)
    (tmp_path / "sweep.py").write_text(SWEEP_UNDER_SIGTERM)
    pid_file = tmp_path / "worker.pid"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    process = subprocess.Popen(
        [sys.executable, str(tmp_path / "sweep.py"), str(pid_file), str(tmp_path / "runs")],
        env=environment,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not pid_file.exists():
        time.sleep(0.1)
    time.sleep(0.5)
    worker = int(pid_file.read_text())
    process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the parent did not exit within 30 s of SIGTERM")
    assert process.returncode == 143, err
    left_running = is_running(worker)
    if left_running:
        os.kill(worker, signal.SIGKILL)
    assert not left_running, "the worker kept running after its parent stopped"


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())
