"""How long ``python -m verify predict`` takes: wall and CPU seconds of the whole command
(a fresh interpreter: imports included) for each preset and horizon, with the load average.

    python benchmarks/predict_timing.py [--horizons 1e3,1e12] \
        [--out benchmarks/results/predict_timing.json]

One command at a time. The target is under 2 s per preset at 1000 steps on an idle machine;
on a shared machine the wall time grows with the load, the CPU time much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import PRESETS


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(name: str, horizon: str) -> dict:
    """Wall and CPU seconds of one ``verify predict`` for preset ``name`` at ``horizon``."""
    command = [sys.executable, "-m", "verify", "predict", "--preset", name, "--steps", horizon]
    cpu, load, started = children_cpu(), os.getloadavg()[0], time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return {
        "preset": name,
        "steps": horizon,
        "wall_seconds": time.perf_counter() - started,
        "cpu_seconds": children_cpu() - cpu,
        "load_average_1min": load,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizons", default="1e3,1e12")
    parser.add_argument("--out", default="benchmarks/results/predict_timing.json")
    args = parser.parse_args()
    rows = [time_command(name, horizon) for horizon in args.horizons.split(",") for name in PRESETS]
    for row in rows:
        print(
            f"{row['preset']:>16} {row['steps']:>6}: {row['wall_seconds']:6.2f} s wall, "
            f"{row['cpu_seconds']:6.2f} s CPU (load {row['load_average_1min']:.1f})"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out, {"rows": rows, "provenance": provenance()})


if __name__ == "__main__":
    main()
