"""Whole commands timed side by side: a command against its baseline, in turn, as ratios.

Each benchmark in this directory compares a command with a baseline on the same inputs in
the same session: after a warm-up of each, the two run in turn (A B A B ...), each timed
as a whole process from outside (wall seconds by the clock, CPU seconds from the
operating system's accounting of the finished child), and the ratio is taken pair by
pair, so that it holds while the machine's speed drifts. ``--busy`` keeps one other
process spinning on a core throughout (a machine with one core taken); the load average
before and after is recorded either way. Results go to ``benchmarks/results/speed_*.json``;
``benchmarks/speed_table.py`` prints the README's speed table from them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def timed(
    command: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> dict[str, float]:
    """One run of ``command`` (in directory ``cwd`` when given): wall and CPU seconds
    (user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu}


@contextmanager
def busy_core(enabled: bool):
    """One other process spinning on a core while the block runs (when ``enabled``)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if enabled else None
    try:
        yield
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


def summary(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def paired(
    command: Sequence[str],
    baseline: Sequence[str],
    runs: int,
    warmup: int = 1,
    busy: bool = False,
    env: dict[str, str] | None = None,
    baseline_env: dict[str, str] | None = None,
    prepare: Any = None,
    cwd: Path | None = None,
    baseline_cwd: Path | None = None,
) -> dict[str, Any]:
    """``command`` against ``baseline``, ``runs`` pairs in turn after ``warmup`` of each;
    ``prepare()`` (if given) runs before every run (e.g. to empty an output directory);
    ``cwd`` and ``baseline_cwd`` are their working directories (``python -m`` puts the
    working directory ahead of ``PYTHONPATH``: a baseline tree must be its own)."""
    load_before = os.getloadavg()
    a, b = [], []
    with busy_core(busy):
        for index in range(warmup + runs):
            sides = ((a, command, env, cwd), (b, baseline, baseline_env, baseline_cwd))
            for target, line, environment, directory in sides:
                if prepare:
                    prepare()
                result = timed(line, environment, directory)
                if index >= warmup:
                    target.append(result)
    out: dict[str, Any] = {
        "command": " ".join(command),
        "baseline": " ".join(baseline),
        "runs": runs,
        "busy": busy,
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    for name, rows in (("command", a), ("baseline", b)):
        for key in ("wall", "cpu"):
            out[f"{name}_{key}"] = summary([row[key] for row in rows])
    for key in ("wall", "cpu"):
        out[f"ratio_{key}"] = summary([y[key] / x[key] for x, y in zip(a, b, strict=True)])
    return out


def versus_tree(arguments: Sequence[str], baseline: str | None, options: Any) -> dict[str, Any]:
    """``python -m verify ARGUMENTS --out DIR`` from this tree against the same from the
    source tree ``baseline`` (or against itself when ``None``), each from an empty output
    directory (kept results would make a rerun instant)."""
    scratch = Path(tempfile.mkdtemp(prefix="speed-"))
    outputs = scratch / "new", scratch / "old"

    def fresh() -> None:
        for path in outputs:
            shutil.rmtree(path, ignore_errors=True)

    def line(out: Path) -> list[str]:
        return [sys.executable, "-m", "verify", *arguments, "--out", str(out), "--no-progress"]

    record = paired(
        line(outputs[0]),
        line(outputs[1]),
        options.runs,
        options.warmup,
        options.busy,
        env=package_env(),
        baseline_env=package_env(baseline or ROOT),
        prepare=fresh,
        cwd=ROOT,
        baseline_cwd=Path(baseline or ROOT),
    )
    return {**record, "baseline_commit": tree_commit(Path(baseline or ROOT))}


def tree_commit(tree: Path) -> str | None:
    """The commit checked out in source tree ``tree`` (None if it is not a git tree)."""
    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def short_commit(record: dict[str, Any], baseline: str) -> str:
    """The baseline's commit, abbreviated, as a record names it (else its path)."""
    commit = record.get("baseline_commit")
    return commit[:7] if commit else baseline


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--runs", type=int, default=3, help="pairs counted")
    parser.add_argument("--warmup", type=int, default=1, help="runs of each not counted")
    parser.add_argument("--busy", action="store_true", help="one other process spins on a core")
    return parser


def save(name: str, record: dict[str, Any]) -> Path:
    """``benchmarks/results/speed_<name>[_busy].json`` with the environment it ran in."""
    from verify.output.provenance import provenance

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"speed_{name}{'_busy' if record['busy'] else ''}.json"
    path.write_text(json.dumps({**record, "provenance": provenance()}, indent=2) + "\n")
    for key in ("command_wall", "baseline_wall", "ratio_wall", "ratio_cpu"):
        print(f"{key:14s} median {record[key]['median']:.3g}")
    print(f"written {path}")
    return path


def package_env(tree: Path | str = ROOT) -> dict[str, str]:
    """The environment that runs the package from source tree ``tree``, its modules
    compiled first (as an installation leaves them: an environment that sets
    PYTHONDONTWRITEBYTECODE would otherwise compile them in every run)."""
    for package in ("theory", "verify"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tree) / package)])
    return {**os.environ, "PYTHONPATH": str(tree)}


__all__ = [
    "versus_tree",
    "tree_commit",
    "short_commit",
    "paired",
    "timed",
    "busy_core",
    "arguments",
    "save",
    "package_env",
    "RESULTS",
    "ROOT",
]
