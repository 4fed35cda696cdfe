"""The evidence is kept per point and read back as it was computed: a rerun reuses it, an
interrupted collection resumes, and the planned runs give the numbers they gave before
they were planned per seed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from verify.checks.catalogue import Selection, plan_for
from verify.checks.collection import EvidenceStore, collect_evidence, kept_message, point_rank
from verify.checks.evidence import (
    evidence_point,
    fit_time,
    noisy_margin_event,
)
from verify.checks.suite import checks_for, judge
from verify.runtime.executors import SerialExecutor
from verify.sim.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]
CAPS = {"gd": 2, "flow": 1, "event": 2, "scan": 1}
#: A plan of every kind of point on the benign preset, two seeds a kind (one flow).
TINY = plan_for(Selection(("benign",), caps=CAPS))


class Interrupting(SerialExecutor):
    """Runs points in this process; Ctrl-C after ``after`` of them have finished."""

    def __init__(self, after: int):
        self.after = after

    def map_unordered(self, function, items):
        for done, item in enumerate(super().map_unordered(function, items)):
            if done == self.after:
                raise KeyboardInterrupt
            yield item


class Refusing(SerialExecutor):
    def map_unordered(self, function, items):
        assert not items, f"{len(items)} points computed again"
        return iter(())


def outcome(evidence) -> list[dict]:
    return [result.as_dict() for result in judge(checks_for(TINY), evidence)]


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    store = EvidenceStore(tmp_path_factory.mktemp("check") / "evidence")
    return store, collect_evidence(TINY, SerialExecutor(), store)


def test_kept_points_are_read_back_as_computed(kept):
    store, evidence = kept
    assert store.kept(TINY) == len(TINY.points())
    again = collect_evidence(TINY, Refusing(), store)
    assert outcome(again) == outcome(evidence)


def test_an_interrupted_collection_keeps_what_finished_and_resumes(kept, tmp_path):
    _, uninterrupted = kept
    store = EvidenceStore(tmp_path / "evidence")
    with pytest.raises(KeyboardInterrupt):
        collect_evidence(TINY, Interrupting(after=2), store)
    assert store.kept(TINY) == 2
    assert kept_message(store, TINY).startswith(f"2 of {len(TINY.points())} evidence points")
    resumed = collect_evidence(TINY, SerialExecutor(), store)
    assert store.kept(TINY) == len(TINY.points())
    assert outcome(resumed) == outcome(uninterrupted)


def test_kept_evidence_belongs_to_the_code_that_computed_it(kept, tmp_path):
    store, _ = kept
    other = EvidenceStore(store.directory)
    other.code = "another source tree"
    assert other.kept(TINY) == 0


def test_per_seed_points_give_the_seed_groups_numbers():
    """A point per seed (what the check runs) against two seeds in one point: the same
    records, bit for bit."""
    single = [evidence_point(point) for point in TINY.points() if point["kind"] == "seeds"]
    grouped = [
        evidence_point(point)
        for point in type(TINY)(**{**TINY.__dict__, "group_size": 2}).points()
        if point["kind"] == "seeds"
    ]
    for kind in ("gd", "flow", "event"):
        flat = [run for record in single for run in record[kind]]
        together = [run for record in grouped for run in record[kind]]
        assert json.dumps(flat, default=np.ndarray.tolist) == json.dumps(
            together, default=np.ndarray.tolist
        )


def test_the_fit_time_stops_at_the_event_and_is_the_full_runs():
    from verify.sim.data import generate
    from verify.sim.engines.base import reduced_setup
    from verify.sim.engines.flow import FlowEngine
    from verify.sim.simulate import simulate

    point = next(p for p in TINY.points() if p["event"])
    draw, config = RunConfig.from_dict(point["draws"][0]), RunConfig.from_dict(point["event"][0])
    data = generate(draw)
    setup = reduced_setup(draw, data)
    statistics = setup.statistics()
    engine = FlowEngine(config, data, setup=setup, statistics=statistics)
    event = engine.watch("noisy fitted", noisy_margin_event(data))
    simulate(config, data=data, engine=engine)
    assert event.at is not None
    assert fit_time(config, data, setup, statistics) == event.at


def test_long_flows_go_first():
    ranks = [point_rank(point) for point in TINY.points()]
    flows = [point_rank(point) for point in TINY.points() if point.get("flow")]
    assert flows and max(flows) < min(r for r in ranks if r not in flows)


TINY_CHECK = (
    "import sys; import verify.checks.suite as suite; "
    "from verify.checks.catalogue import Selection, plan_for; "
    f"suite.QUICK = plan_for(Selection(('benign',), caps={CAPS!r})); "
    "import runpy; sys.argv[0] = 'verify'; runpy.run_module('verify', run_name='__main__')"
)


def check(out: Path, **popen) -> subprocess.Popen:
    command = [sys.executable, "-c", TINY_CHECK, "check", "--quick", "--out", str(out)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [*command, "--no-progress"], env=environment, text=True, stderr=subprocess.PIPE, **popen
    )


@pytest.mark.slow
def test_sigterm_stops_the_check_at_once_and_the_rerun_reports_the_same(tmp_path):
    """SIGTERM while the workers compute: exit 143 within a few seconds, saying what was
    kept; the rerun resumes from it and writes the report of an uninterrupted check."""
    whole = check(tmp_path / "whole", stdout=subprocess.DEVNULL)
    interrupted = tmp_path / "interrupted"
    process = check(interrupted, stdout=subprocess.DEVNULL)
    evidence = interrupted / "evidence"
    deadline = time.monotonic() + 300
    while not list(evidence.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    stopped = time.monotonic() - sent
    assert process.returncode == 143, stderr
    assert "interrupted (stopped by SIGTERM)" in stderr and "the same command resumes" in stderr
    assert stopped < 5, stopped  # about a second on an idle machine
    assert not (interrupted / "report.json").exists()
    rerun = check(interrupted, stdout=subprocess.DEVNULL)
    assert rerun.wait(timeout=600) in (0, 1) and whole.wait(timeout=600) in (0, 1)
    first = json.loads((tmp_path / "whole" / "report.json").read_text())["checks"]
    resumed = json.loads((interrupted / "report.json").read_text())["checks"]
    assert resumed == first
