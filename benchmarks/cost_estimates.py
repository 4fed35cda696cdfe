"""Each engine's cost estimate (what ``run`` prints before a run, and what ``--yes`` is
asked for above) against the time a run takes, at a small setting per engine.

The estimate is :func:`verify.sim.resources.estimated_seconds` (the engine's declared
cost, :mod:`verify.sim.engines.registry`, at the rates of
:mod:`verify.sim.engines.traits`); the measurement is the CPU time of this process for
``simulate`` (a tiny run of the same engine first, so that imports and compiled kernels
are not counted), which a busy machine stretches less than the wall time.

    python benchmarks/cost_estimates.py [--engines mp-flow,reduced] [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import preset
from verify.sim.engines.registry import engine_names, engine_traits
from verify.sim.resources import cost_line, estimated_seconds
from verify.sim.simulate import simulate

#: A setting per engine that runs in tens of seconds.
SETTINGS: dict[str, dict[str, Any]] = {
    "dense": {"d": 500, "steps": 200, "test_size": 100},
    "reduced": {"d": 2000, "steps": 1000, "test_size": 100},
    "mp": {"d": 100, "n": 4, "steps": 200, "test_size": 20},
    "flow": {"d": 2000, "steps": 1000, "test_size": 100},
    "mp-flow": {"d": 100, "n": 4, "steps": 1000, "test_size": 20},
    "dfree": {"n": 100, "steps": 1000, "test_size": 0},
    "dfree-flow": {"n": 100, "steps": 1000, "test_size": 0},
}


def measure(engine: str) -> dict[str, Any]:
    traits = engine_traits(engine)
    config = preset("benign", engine=engine, init=traits.inits[0], **SETTINGS[engine])
    small = min(config.recording.test_size, 4)
    simulate(config.replace(d=20, n=4, T=4, eta=0.0, steps=2, test_size=small))
    started = time.process_time()
    result = simulate(config)
    seconds = time.process_time() - started
    estimate = estimated_seconds(config)
    return {
        "engine": engine,
        "setting": SETTINGS[engine],
        "estimate_seconds": estimate,
        "measured_cpu_seconds": seconds,
        "ratio": estimate / seconds,
        "status": result.status.value,
        "shown_before_the_run": cost_line(config),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(engine_names()))
    parser.add_argument("--out", default=None, help="write cost_estimates.json here")
    args = parser.parse_args()
    rows = []
    print(f"{'engine':<11} {'setting':<45} {'estimate s':>10} {'CPU s':>8} {'ratio':>6}")
    for engine in args.engines.split(","):
        row = measure(engine)
        rows.append(row)
        setting = ", ".join(f"{k}={v}" for k, v in row["setting"].items())
        print(
            f"{engine:<11} {setting:<45} {row['estimate_seconds']:10.3g} "
            f"{row['measured_cpu_seconds']:8.3g} {row['ratio']:6.2f}",
            flush=True,
        )
    if args.out:
        atomic_write_json(
            Path(args.out) / "cost_estimates.json", {"rows": rows, "provenance": provenance()}
        )


if __name__ == "__main__":
    main()
