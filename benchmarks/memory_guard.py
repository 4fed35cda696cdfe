"""The memory guard's estimate against the measured peak, for every engine at three sizes.

Each (engine, size) runs in a fresh process, as ``python -m verify run --out DIR`` runs
it: the data drawn, the engine trained and every file written. The process first warms
up (the engine's modules imported, a tiny run of the same engine trained, so that
libraries and compiled kernels are resident), then resets its peak resident size
(``/proc/self/clear_refs``), and reports the peak resident size during the run minus
the resident size just before it: the memory the run itself needs, which is what the
guard (:func:`verify.sim.resources.check_memory`) compares with the memory available.

    python benchmarks/memory_guard.py [--engines reduced,flow] [--out benchmarks/results]

Prints one row per (engine, size): the estimate, the measured peak and their ratio
(the guard's target: within 1.25x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance

#: Three sizes per engine (flat overrides of the benign preset), each large enough that
#: the run's own arrays dominate the allocator's noise, and small enough to run in
#: minutes on one core.
SIZES: dict[str, tuple[dict[str, Any], ...]] = {
    "dense": (
        {"d": 1000, "steps": 20},
        {"d": 2000, "steps": 20},
        {"d": 3000, "steps": 10},
    ),
    "reduced": (
        {"d": 5000, "steps": 100},
        {"d": 10000, "steps": 100},
        {"d": 20000, "steps": 100, "test_size": 300},
    ),
    "mp": (
        {"d": 500, "n": 2, "T": 4, "eta": 0.0, "steps": 5, "test_size": 200},
        {"d": 1000, "n": 2, "T": 4, "eta": 0.0, "steps": 5, "test_size": 200},
        {"d": 1500, "n": 2, "T": 4, "eta": 0.0, "steps": 5, "test_size": 200},
    ),
    "flow": (
        {"d": 5000, "steps": 1000},
        {"d": 10000, "steps": 1000},
        {"d": 20000, "steps": 1000, "test_size": 300},
    ),
    "mp-flow": (
        {"d": 500, "n": 2, "T": 4, "eta": 0.0, "steps": 10, "test_size": 200},
        {"d": 1000, "n": 2, "T": 4, "eta": 0.0, "steps": 10, "test_size": 200},
        {"d": 1500, "n": 2, "T": 4, "eta": 0.0, "steps": 10, "test_size": 200},
    ),
    "dfree": (
        {"n": 100, "steps": 100},
        {"n": 200, "steps": 100},
        {"n": 300, "steps": 100},
    ),
    "dfree-flow": (
        {"n": 50, "steps": 1000},
        {"n": 100, "steps": 1000},
        {"n": 150, "steps": 1000},
    ),
}

#: The child: warm up, reset the peak, run as the command line does, report.
CHILD = r"""
import gc, json, sys, tempfile
from verify.sim.config import preset
from verify.sim.engines.registry import engine_traits
from verify.sim.resources import estimated_bytes, resident_bytes, peak_resident_bytes
from verify.sim.run_files import write_run
from verify.sim.simulate import simulate

engine, overrides = sys.argv[1], json.loads(sys.argv[2])
traits = engine_traits(engine)
base = {"engine": engine, "init": traits.inits[0]}
if not traits.test_set:
    base["test_size"] = 0
config = preset("benign", **{**base, **overrides})
small = min(config.recording.test_size, 4)
tiny = config.replace(d=20, n=4, T=4, eta=0.0, steps=2, test_size=small)
with tempfile.TemporaryDirectory() as out:
    write_run(simulate(tiny), out)
gc.collect()
before = resident_bytes()
with open("/proc/self/clear_refs", "w") as stream:
    stream.write("5")
with tempfile.TemporaryDirectory() as out:
    result = simulate(config)
    write_run(result, out)
    status = result.status.value
peak = peak_resident_bytes() - before
print(json.dumps({"estimate": estimated_bytes(config), "peak": peak, "status": status}))
"""


def measure(engine: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The estimate and the measured peak of one run (in a fresh process)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, engine, json.dumps(overrides)],
        capture_output=True,
        text=True,
        check=True,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    measured["ratio"] = measured["estimate"] / measured["peak"]
    return {"engine": engine, "size": overrides, **measured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(SIZES))
    parser.add_argument("--out", default=None, help="write memory_guard.json here")
    args = parser.parse_args()
    rows = []
    print(f"{'engine':<11} {'size':<50} {'estimate MiB':>12} {'peak MiB':>9} {'ratio':>6}")
    for engine in args.engines.split(","):
        for overrides in SIZES[engine]:
            row = measure(engine, overrides)
            rows.append(row)
            size = ", ".join(f"{k}={v}" for k, v in overrides.items())
            print(
                f"{engine:<11} {size:<50} {row['estimate'] / 2**20:12.1f} "
                f"{row['peak'] / 2**20:9.1f} {row['ratio']:6.2f}",
                flush=True,
            )
    if args.out:
        directory = Path(args.out)
        atomic_write_json(
            directory / "memory_guard.json", {"rows": rows, "provenance": provenance()}
        )
    worst = max(max(r["ratio"], 1 / r["ratio"]) for r in rows)
    print(f"largest factor between estimate and peak: {worst:.2f}")


if __name__ == "__main__":
    main()
