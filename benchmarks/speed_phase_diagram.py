"""``verify phase-diagram`` as a whole process against its compute limit and an earlier tree.

The limit: the grid's GD steps (39 x 39 runs x 1000 steps), each ``6 N^2`` multiply-adds
at N = 160 (the reduced step's five products of an N x N matrix with a vector and its
rank-one update of M), at this machine's measured rate for one such product (the compiled
kernel's N x N matrix-vector product, in cache, timed in a compiled loop), divided by the
workers. It counts the step as defined, at the rate of a product with one matrix read per
vector: a step that reads a matrix once for two runs (as the batched step reads the shared
part of K and Gram) can go below it. The set-up over W0, the recording and the population
metrics, the workers' start and the figure are not in it. The command runs from an empty
output directory each time; against the same command of the source tree ``--baseline``
when given (in turn, side by side: :mod:`pairs`), else alone. Printed: wall and CPU
seconds of both, the limit, and the command's wall over the limit and CPU over the
limit's core-seconds.

    python benchmarks/speed_phase_diagram.py [--baseline ../main] [--runs 2] [--busy]
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit
from pairs import arguments, save, short_commit, versus_tree

from verify.experiments.settings import PhaseDiagramSettings
from verify.sim.engines.compiled import _times

N = 160
#: Multiply-adds of one GD step in the compiled loop, per N^2.
PRODUCTS_PER_STEP = 6


@njit(cache=True)
def _repeat(matrix: np.ndarray, vector: np.ndarray, out: np.ndarray, times: int) -> float:
    total = 0.0
    for _ in range(times):
        _times(matrix, vector, out)
        vector[0] += out[0] * 1e-300  # the next product depends on this one
        total += out[1]
    return total


def product_rate(repeats: int = 20_000) -> float:
    """Multiply-adds a second of the N x N matrix-vector product in cache (best of 5)."""
    rng = np.random.default_rng(0)
    matrix, vector, out = rng.standard_normal((N, N)), rng.standard_normal(N), np.empty(N)
    _repeat(matrix, vector, out, 10)
    best = np.inf
    for _ in range(5):
        started = time.perf_counter()
        _repeat(matrix, vector, out, repeats)
        best = min(best, time.perf_counter() - started)
    return repeats * N * N / best


def compute_limit(settings: PhaseDiagramSettings, workers: int) -> dict[str, float]:
    runs = len(settings.d_values) * len(settings.mu_values) * settings.seeds
    steps = runs * settings.steps
    rate = product_rate()
    return {
        "grid_runs": runs,
        "steps": steps,
        "multiply_adds_per_step": PRODUCTS_PER_STEP * N * N,
        "rate_multiply_adds_per_second": rate,
        "workers": workers,
        "limit_seconds": steps * PRODUCTS_PER_STEP * N * N / rate / workers,
    }


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="source tree of the baseline (optional)")
    args = parser.parse_args()
    limit = compute_limit(PhaseDiagramSettings(), workers=2)
    record = versus_tree(["phase-diagram"], args.baseline, args)
    record.update(limit)
    record["what"] = "verify phase-diagram (39 x 39, 1000 steps, tables and figures, 2 workers)"
    record["baseline_what"] = (
        f"the same command at commit {short_commit(record, args.baseline)}" if args.baseline else ""
    )
    record["over_limit"] = record["command_wall"]["median"] / limit["limit_seconds"]
    core_seconds = limit["limit_seconds"] * limit["workers"]
    record["cpu_over_limit"] = record["command_cpu"]["median"] / core_seconds
    print(
        f"compute limit {limit['limit_seconds']:.3g} s ({limit['steps']:.3g} steps x "
        f"{limit['multiply_adds_per_step']:.3g} multiply-adds at "
        f"{limit['rate_multiply_adds_per_second'] / 1e9:.3g} G/s, {limit['workers']} workers); "
        f"the command: {record['command_wall']['median']:.3g} s wall "
        f"({record['over_limit']:.3g} x the limit), {record['command_cpu']['median']:.3g} s CPU "
        f"({record['cpu_over_limit']:.3g} x {core_seconds:.3g} core-seconds); load average "
        f"{record['load_before'][0]:.2g} before, {record['load_after'][0]:.2g} after"
    )
    save("phase_diagram", record)


if __name__ == "__main__":
    main()
