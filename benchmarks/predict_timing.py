"""How long a prediction takes, against a baseline measured side by side: ``verify.predict``
in one process (a call after the first, over presets and settings it has not seen), and
``python -m verify predict`` as a whole command (a fresh interpreter: imports included).

    python benchmarks/predict_timing.py [--baseline 75f0c3b] [--rounds 3] \
        [--out benchmarks/results/predict_timing.json]

The baseline is the package at ``--baseline`` (a commit of this repository, extracted with
``git archive`` into a temporary directory); both run in subprocesses with ``PYTHONPATH``
set to their own tree, alternately, ``--rounds`` times, so that the machine's load falls on
both alike. CPU seconds (``RUSAGE_CHILDREN``) are reported with the wall seconds and the
load average; the ratio is baseline over current (larger is faster). Targets: under 50 ms a
call after the first, the command under 1 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance

ROOT = Path(__file__).resolve().parents[1]

#: Calls of ``verify.predict`` after a first one: each on a setting not seen before.
IN_PROCESS = """
import json, sys, time
from verify.prediction import predict
from verify.sim.config import preset
started = time.process_time()
predict(preset("benign", mu_norm=19.0))
first = time.process_time() - started
cases = [("harmful", {}), ("benign", {}), ("not-overfitting", {}), ("benign", {"mu_norm": 30.0}),
         ("benign", {"d": 4000}), ("harmful", {"mu_norm": 7.0}), ("benign", {"n": 40})]
times = []
for name, changes in cases:
    started = time.process_time()
    predict(preset(name, **changes))
    times.append(time.process_time() - started)
print(json.dumps({"first": first, "after_first": times}))
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def extract(commit: str, into: Path) -> Path:
    """The tree of ``commit`` under ``into`` (``git archive``)."""
    archive = into / "tree.tar"
    subprocess.run(
        ["git", "archive", "--format=tar", "-o", str(archive), commit], cwd=ROOT, check=True
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def run(tree: Path, arguments: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python arguments`` with ``PYTHONPATH`` = ``tree``."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, *arguments], cwd=tree, env=environment, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(done.stderr)
    return time.perf_counter() - started, children_cpu() - cpu, done.stdout


def measure(tree: Path) -> dict:
    """One round for a tree: the command (benign preset) and the in-process calls."""
    import json

    wall, cpu, _ = run(tree, ["-m", "verify", "predict", "--preset", "benign"])
    _, _, out = run(tree, ["-c", IN_PROCESS])
    calls = json.loads(out)
    return {
        "command_wall": wall,
        "command_cpu": cpu,
        "first_call_cpu": calls["first"],
        "after_first_cpu": calls["after_first"],
        "load_average_1min": os.getloadavg()[0],
    }


def summary(rounds: list[dict]) -> dict:
    """Medians over rounds (the per-call time: median over calls, then over rounds)."""
    import statistics

    def median(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    return {
        "command_wall": median("command_wall"),
        "command_cpu": median("command_cpu"),
        "first_call_cpu": median("first_call_cpu"),
        "call_cpu": statistics.median(statistics.median(r["after_first_cpu"]) for r in rounds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="75f0c3b")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/predict_timing.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"baseline": extract(args.baseline, Path(scratch)), "current": ROOT}
        rounds: dict[str, list[dict]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                rounds[name].append(measure(tree))
    medians = {name: summary(values) for name, values in rounds.items()}
    ratios = {key: medians["baseline"][key] / medians["current"][key] for key in medians["current"]}
    for name, values in medians.items():
        print(
            f"{name:>9}: command {values['command_wall']:.2f} s wall, "
            f"{values['command_cpu']:.2f} s CPU; first call {values['first_call_cpu']:.3f} s; "
            f"a call after the first {1e3 * values['call_cpu']:.1f} ms CPU"
        )
    print("ratio (baseline / current): " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(
        out,
        {
            "baseline": args.baseline,
            "rounds": rounds,
            "medians": medians,
            "ratios": ratios,
            "provenance": provenance(),
        },
    )


if __name__ == "__main__":
    main()
