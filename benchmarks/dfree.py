"""d-free vs reduced GD (Gaussian init, paper-sized n = 20, T = 8), and the d-free engine
at d = 1e9.

Each run goes from the seed to the trained state (an untimed small run first, so that no
import is timed): the reduced engine draws the tokens and W0 and forms its statistics in
one pass over W0 (O(d^2 N)); the d-free engine samples the same statistics' law
(O(N^3)); both then take the same 1000 reduced GD steps. Time (whole, and of the draws
alone; the least of 3 runs) and peak traced memory (tracemalloc traces NumPy's
allocations) of each, in this one process, and their ratios; then the d-free engine
alone at d = 1e9 (the draw, draw plus steps, and a whole recorded run) with its peak
traced memory and the process's peak resident size (interpreter and libraries included;
measured before the comparisons run).

    python benchmarks/dfree.py [--d 1000 5000] [--steps 1000] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import RunConfig, preset
from verify.sim.data import generate
from verify.sim.dfree_data import draw_reduced_data
from verify.sim.engines import make_engine
from verify.sim.engines.base import reduced_setup
from verify.sim.simulate import simulate

REPEATS = 3


def measured(work: Callable[[], Any]) -> tuple[float, int]:
    """Seconds (the least of :data:`REPEATS` runs, untraced: the machine is shared) and
    peak traced bytes (one more run, under tracemalloc) of ``work()``."""
    seconds = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return min(seconds), peak


def trained(config: RunConfig, draw: Callable[[RunConfig], Any]) -> None:
    engine = make_engine(config, draw(config))
    engine.advance_to(config.training.steps)


def compare(d: int, steps: int) -> dict[str, float]:
    """Seed to trained state, reduced vs dfree, at dimension ``d``."""
    reduced = preset("harmful", d=d, steps=steps, init="gaussian", test_size=0)
    dfree = reduced.replace(engine="dfree")
    reduced_s, reduced_peak = measured(lambda: trained(reduced, generate))
    dfree_s, dfree_peak = measured(lambda: trained(dfree, draw_reduced_data))
    draw_s, _ = measured(lambda: draw_reduced_data(dfree))
    setup_s, _ = measured(lambda: reduced_setup(reduced, generate(reduced)).statistics())
    return {
        "reduced_seconds": reduced_s,
        "dfree_seconds": dfree_s,
        "time_ratio_reduced_over_dfree": reduced_s / dfree_s,
        "reduced_draw_and_setup_seconds": setup_s,
        "dfree_draw_seconds": draw_s,
        "time_ratio_of_draws_reduced_over_dfree": setup_s / draw_s,
        "reduced_peak_bytes": reduced_peak,
        "dfree_peak_bytes": dfree_peak,
        "memory_ratio_reduced_over_dfree": reduced_peak / dfree_peak,
    }


def at_1e9(steps: int) -> dict[str, float]:
    """The d-free engine at d = 1e9 (alpha at A5's scale for this d)."""
    config = preset("harmful", d=10**9, mu_norm=2000.0, alpha=2e-7, steps=steps)
    config = config.replace(engine="dfree", init="gaussian")
    draw_s, draw_peak = measured(lambda: draw_reduced_data(config))
    run_s, run_peak = measured(lambda: trained(config, draw_reduced_data))
    recorded: list[Any] = []
    simulate_s, simulate_peak = measured(lambda: recorded.insert(0, simulate(config)))
    return {
        "draw_seconds": draw_s,
        "draw_peak_bytes": draw_peak,
        "draw_and_steps_seconds": run_s,
        "draw_and_steps_peak_bytes": run_peak,
        "recorded_run_seconds": simulate_s,
        "recorded_run_peak_bytes": simulate_peak,
        "recorded_run_log_points": len(recorded[0].steps),
        "recorded_run_status": recorded[0].status.value,
        "process_peak_resident_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    record: dict[str, Any] = {"provenance": provenance(), "steps": args.steps}
    trained(RunConfig.build(d=50, engine="dfree", init="gaussian", steps=2), draw_reduced_data)
    record["d1e9"] = at_1e9(args.steps)  # first: the process's peak resident size is its own
    for d in args.d:
        record[f"d{d}"] = compare(d, args.steps)
    for part, values in record.items():
        if isinstance(values, dict) and part != "provenance":
            for key, value in values.items():
                shown = f"{value:.4g}" if isinstance(value, float) else str(value)
                print(f"{part:6s} {key:36s} {shown}")
    atomic_write_json(Path(args.out) / "dfree.json", record)


if __name__ == "__main__":
    main()
