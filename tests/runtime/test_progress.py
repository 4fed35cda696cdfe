"""Progress that fits where it goes: whole lines, sparse, in a log; a bar on a terminal."""

from __future__ import annotations

import io

import pytest

from verify.runtime import progress as module
from verify.runtime.progress import Stages, clock, mode_for, progress, progress_iter


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(module.MODE_VARIABLE, raising=False)


@pytest.fixture
def clock_at(monkeypatch):
    """A settable clock for the module (seconds)."""
    now = [1000.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: now[0])
    return now


def test_a_log_gets_whole_sparse_lines(no_override, clock_at):
    log = io.StringIO()
    stage = progress(100, "runs", "run", stream=log, expected=50.0)
    assert log.getvalue() == "runs: 0/100 run (0%) started, about 0:50 left (predicted)\n"
    for done in range(1, 101):  # one unit a tenth of a second: 10 s in all
        clock_at[0] += 0.1
        stage.advance_to(done)
    stage.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert lines[1] == "runs: 50/100 run (50%), 0:05 elapsed, about 0:05 left"
    assert len(lines) == 3  # start, one line in 10 s at one per 5 s (the 100th closes), end
    assert lines[-1] == "runs: 100/100 run (100%), done in 0:10"


def test_a_terminal_gets_a_bar_at_once(no_override):
    screen = Terminal()
    with progress(8, "runs", "group", stream=screen, expected=90.0) as stage:
        assert "runs" in screen.getvalue() and "predicted 1:30" in screen.getvalue()
        stage.update(2)
    assert "\r" in screen.getvalue() and "2/8" in screen.getvalue()


def test_the_mode_follows_the_stream_and_the_override(monkeypatch):
    monkeypatch.delenv(module.MODE_VARIABLE, raising=False)
    assert mode_for(Terminal()) == "bar" and mode_for(io.StringIO()) == "log"
    assert mode_for(Terminal(), enabled=False) == "off"
    monkeypatch.setenv(module.MODE_VARIABLE, "log")
    assert mode_for(Terminal()) == "log"
    silent = io.StringIO()
    monkeypatch.setenv(module.MODE_VARIABLE, "off")
    with progress(3, "x", stream=silent) as stage:
        stage.update(3)
    assert silent.getvalue() == ""


def test_stages_close_one_before_the_next(no_override, clock_at):
    log = io.StringIO()
    stages = Stages({"runs": "group", "checks": "check"}, stream=log)
    stages.start("runs", 2)
    stages("runs", 1, 2)
    stages("runs", 2, 2)
    stages("checks", 1, 3)
    stages.close()
    lines = log.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["runs", "runs", "checks", "checks"]
    assert lines[1].startswith("runs: 2/2 group (100%), done in")
    assert lines[-1].startswith("checks: 1/3 check")


def test_an_iterable_is_followed(no_override, capsys):
    assert list(progress_iter(range(4), "epochs", "epoch")) == [0, 1, 2, 3]
    assert capsys.readouterr().err.splitlines()[-1].startswith("epochs: 4/4 epoch (100%), done")


def test_clock():
    assert clock(0) == "0:00" and clock(75.4) == "1:15" and clock(3725) == "1:02:05"
