"""Flow vs GD (reduced engine) on the benign preset: the gap difference over 1e5 steps
at alpha = 5e-3 and alpha/2 (same flow time), showing it is O(alpha).

    python benchmarks/flow_vs_gd.py [--steps 100000] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import preset
from verify.sim.data import generate
from verify.sim.engines import FlowEngine, ReducedEngine


def max_difference(config, data, setup, steps, points=20):
    gd = ReducedEngine(config, data, setup=setup)
    flow = FlowEngine(config, data, setup=setup)
    worst = 0.0
    for step in np.unique(np.geomspace(1, steps, points).round()):
        gd.advance_to(step)
        flow.advance_to(step)
        worst = max(worst, float(np.abs(gd.train_logits() - flow.train_logits()).max()))
    return worst, flow.solver_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    config = preset("benign", test_size=0)
    data = generate(config)
    setup = ReducedEngine(config, data).setup
    rows = []
    for factor in (1, 2):
        alpha = config.alpha / factor
        started = time.perf_counter()
        difference, solver_steps = max_difference(
            config.replace(alpha=alpha), data, setup, args.steps * factor
        )
        rows.append(
            {
                "alpha": alpha,
                "gd_steps": args.steps * factor,
                "max_logit_difference": difference,
                "flow_solver_steps": solver_steps,
                "seconds": time.perf_counter() - started,
            }
        )
        print(rows[-1])
    ratio = rows[0]["max_logit_difference"] / rows[1]["max_logit_difference"]
    print(f"difference ratio alpha / (alpha/2) = {ratio:.3f} (O(alpha) predicts 2)")
    flow_config = config.replace(engine="flow", steps=10**12)
    started = time.perf_counter()
    flow = FlowEngine(flow_config, data, setup=setup)
    flow.advance_to(10**12)
    flow_seconds = time.perf_counter() - started
    print(f"flow to 1e12 steps: {flow_seconds:.2f} s, {flow.solver_steps} solver steps")
    atomic_write_json(
        Path(args.out) / "flow_vs_gd.json",
        {
            "config": config.to_dict(),
            "provenance": provenance(),
            "rows": rows,
            "difference_ratio": ratio,
            "flow_1e12_seconds": flow_seconds,
            "flow_1e12_solver_steps": flow.solver_steps,
        },
    )


if __name__ == "__main__":
    main()
