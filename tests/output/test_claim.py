"""One writer per output place: two commands on one ``--out`` give one refusal (exit 2,
one line naming the place and its holder) and one complete result; a killed holder
leaves no stale claim; a process may claim a place it holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from theory.foundation.validation import InvalidParameter
from verify.output.claim import CLAIM_FILE, claim_output, holds
from verify.sim.run_files import RUN_FILES

ROOT = Path(__file__).resolve().parents[2]


def command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "verify", *arguments]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def run_arguments(out: Path, seed: int) -> list[str]:
    return command(
        "run", "--d", "40", "--steps", "3000", "--test-size", "20", "--seed", str(seed),
        "--no-progress", "--out", str(out),
    )  # fmt: skip


def test_two_runs_on_one_place_give_one_refusal_and_one_complete_result(tmp_path):
    out = tmp_path / "shared"
    first = subprocess.Popen(
        run_arguments(out, 1), env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while not (out / CLAIM_FILE).exists() and first.poll() is None:
        assert time.monotonic() < deadline, "the first run never claimed its place"
        time.sleep(0.05)
    second = subprocess.run(
        run_arguments(out, 2), env=environment(), capture_output=True, text=True, timeout=300
    )
    first_out, first_err = first.communicate(timeout=600)
    assert first.returncode == 0, first_err
    assert second.returncode == 2, second.stderr
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: out='{out}' is invalid: allowed")
    assert "no other process is writing into" in lines[0] or "earlier result" in lines[0]
    assert second.stdout == ""
    for name in RUN_FILES:
        assert (out / name).is_file(), name
    assert json.loads((out / "config.json").read_text())["seed"] == 1
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"
    assert not (out / CLAIM_FILE).exists()  # released by the finished holder
    assert not list(out.glob(".*.tmp")) and not list(out.glob("history.partial*"))


def test_two_sweeps_on_one_place_refuse_the_second_while_the_first_runs(tmp_path):
    out = tmp_path / "grid"
    arguments = command(
        "phase-diagram", "--out", str(out), "--d-values", "20,30", "--mu-values", "5,50",
        "--steps", "200000", "--workers", "0", "--no-progress",
    )  # fmt: skip
    first = subprocess.Popen(arguments, env=environment(), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (out / CLAIM_FILE).exists() and first.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    second = subprocess.run(arguments, env=environment(), capture_output=True, text=True)
    _, first_err = first.communicate(timeout=900)
    assert first.returncode == 0, first_err
    if second.returncode != 0:  # refused while the first held the place
        assert second.returncode == 2 and "no other process is writing into" in second.stderr
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert figures == ["phase_diagram.pdf", "phase_diagram.png"]


def test_a_killed_holder_leaves_no_stale_claim(tmp_path):
    out = tmp_path / "killed"
    process = subprocess.Popen(run_arguments(out, 3), env=environment(), stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (out / CLAIM_FILE).exists():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert (out / CLAIM_FILE).exists()  # the file stays; the lock went with the process
    with claim_output(out) as place:
        assert place == out and holds(out)
    assert not holds(out)


def test_the_refusal_names_the_holder_and_nested_claims_count(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from verify.output.claim import claim_output\n"
            f"with claim_output({str(tmp_path)!r}):\n"
            "    print('held', flush=True); time.sleep(60)",
        ],
        env=environment(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(InvalidParameter) as refused:
            with claim_output(tmp_path):
                pass
        message = str(refused.value)
        assert message.startswith(f"out='{tmp_path}' is invalid: allowed a place no other")
        assert f"process {holder.pid} on " in message
    finally:
        holder.kill()
        holder.wait()
    with claim_output(tmp_path), claim_output(tmp_path):
        assert holds(tmp_path)
    assert not holds(tmp_path)


def test_an_earlier_result_is_refused_under_the_claim(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(InvalidParameter, match="--overwrite to replace it"):
        with claim_output(tmp_path, guarded=RUN_FILES):
            pass
    assert not holds(tmp_path) and not (tmp_path / CLAIM_FILE).exists()
    with claim_output(tmp_path, overwrite=True, guarded=RUN_FILES):
        assert holds(tmp_path)


def test_a_300_character_name_is_one_line(tmp_path, capsys):
    from verify.cli import main

    out = tmp_path / ("x" * 300)
    assert main(["run", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: out=") and "File name too long" in err and "\n" not in err
