"""How long a prediction takes, against a baseline measured side by side: ``verify.predict``
in one process (a call after the first, over presets and settings it has not seen), and
``python -m verify predict`` as a whole command (a fresh interpreter: imports included).

    python benchmarks/predict_timing.py [--baseline 0087128] [--rounds 3] [--busy] \
        [--out benchmarks/results/predict_timing.json]

The baseline is the package at ``--baseline``: a commit of this repository (extracted with
``git archive`` into a temporary directory) or a directory holding a tree. Both trees'
modules are compiled to bytecode first (as an installed package has them, whatever
``PYTHONDONTWRITEBYTECODE`` says); both run in subprocesses with ``PYTHONPATH`` set to
their own tree, alternately, ``--rounds`` times, so that the machine's load falls on both
alike. CPU seconds (``RUSAGE_CHILDREN``; ``time.process_time`` for the calls) are reported
with the wall seconds and the load average; the ratio is baseline over current (larger is
faster), per setting and for the median call. Targets: under 50 ms a call after the first,
the command under 1 s.
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

from pairs import busy_core, package_env

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance

ROOT = Path(__file__).resolve().parents[1]

#: Settings of the calls after the first (each not seen before; some share the first's
#: boundaries: their ||mu|| alone differs).
CASES = [
    ("harmful", {}),
    ("benign", {}),
    ("not-overfitting", {}),
    ("benign", {"mu_norm": 30.0}),
    ("benign", {"d": 4000}),
    ("harmful", {"mu_norm": 7.0}),
    ("benign", {"n": 40}),
]
#: Calls of ``verify.predict`` after a first one: each on a setting not seen before.
IN_PROCESS = (
    f"CASES = {CASES!r}\n"
    + """
import json, sys, time
from verify.prediction import predict
from verify.sim.config import preset
started = time.process_time()
predict(preset("benign", mu_norm=19.0))
first = time.process_time() - started
cases = CASES
times = []
for name, changes in cases:
    started = time.process_time()
    predict(preset(name, **changes))
    times.append(time.process_time() - started)
print(json.dumps({"first": first, "after_first": times}))
"""
)


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


def baseline_tree(baseline: str, scratch: Path) -> Path:
    """The baseline's tree: a directory as it is, else the commit extracted."""
    return Path(baseline) if Path(baseline).is_dir() else extract(baseline, scratch)


def run(tree: Path, environment: dict[str, str], arguments: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python arguments`` in ``tree`` with ``environment``."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, *arguments], cwd=tree, env=environment, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(done.stderr)
    return time.perf_counter() - started, children_cpu() - cpu, done.stdout


def measure(tree: Path, environment: dict[str, str]) -> dict:
    """One round for a tree (run with ``environment``): the command (benign preset) and
    the in-process calls."""
    import json

    wall, cpu, _ = run(tree, environment, ["-m", "verify", "predict", "--preset", "benign"])
    _, _, out = run(tree, environment, ["-c", IN_PROCESS])
    calls = json.loads(out)
    return {
        "command_wall": wall,
        "command_cpu": cpu,
        "first_call_cpu": calls["first"],
        "after_first_cpu": calls["after_first"],
        "load_average_1min": os.getloadavg()[0],
    }


def summary(rounds: list[dict]) -> dict:
    """Medians over rounds (the per-call time: median over calls, then over rounds; and
    each setting's median over rounds)."""
    import statistics

    def median(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    return {
        "command_wall": median("command_wall"),
        "command_cpu": median("command_cpu"),
        "first_call_cpu": median("first_call_cpu"),
        "call_cpu": statistics.median(statistics.median(r["after_first_cpu"]) for r in rounds),
        "per_setting_cpu": [
            statistics.median(r["after_first_cpu"][i] for r in rounds) for i in range(len(CASES))
        ],
    }


def setting_name(case: tuple[str, dict]) -> str:
    name, changes = case
    return name + "".join(f" {key}={value:g}" for key, value in changes.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="0087128", help="a commit or a directory")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="default: benchmarks/results/predict_timing[_busy].json")
    parser.add_argument("--busy", action="store_true", help="one other process spins on a core")
    args = parser.parse_args()
    suffix = "_busy" if args.busy else ""
    args.out = args.out or f"benchmarks/results/predict_timing{suffix}.json"
    with tempfile.TemporaryDirectory() as scratch, busy_core(args.busy):
        trees = {"baseline": baseline_tree(args.baseline, Path(scratch)), "current": ROOT}
        environments = {name: package_env(tree) for name, tree in trees.items()}  # compiled
        rounds: dict[str, list[dict]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                rounds[name].append(measure(tree, environments[name]))
    medians = {name: summary(values) for name, values in rounds.items()}
    base, current = medians["baseline"], medians["current"]
    ratios = {key: base[key] / current[key] for key in current if key != "per_setting_cpu"}
    ratios["per_setting_cpu"] = [
        b / c for b, c in zip(base["per_setting_cpu"], current["per_setting_cpu"], strict=True)
    ]
    for name, values in medians.items():
        print(
            f"{name:>9}: command {values['command_wall']:.2f} s wall, "
            f"{values['command_cpu']:.2f} s CPU; first call {values['first_call_cpu']:.3f} s; "
            f"a call after the first {1e3 * values['call_cpu']:.1f} ms CPU (median)"
        )
    for i, case in enumerate(CASES):
        print(
            f"  {setting_name(case):<22} baseline {1e3 * base['per_setting_cpu'][i]:7.1f} ms, "
            f"current {1e3 * current['per_setting_cpu'][i]:7.1f} ms, "
            f"ratio {ratios['per_setting_cpu'][i]:.2f}"
        )
    print(
        "ratio (baseline / current): "
        + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items() if k != "per_setting_cpu")
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(
        out,
        {
            "baseline": args.baseline,
            "busy": args.busy,
            "rounds": rounds,
            "medians": medians,
            "ratios": ratios,
            "provenance": provenance(),
        },
    )


if __name__ == "__main__":
    main()
