"""Stepping under one BLAS thread against the library's default thread count, idle and
loaded.

The reduced engine's 1000 GD steps on the benign preset at d = 2000 (n = 20, T = 8: N = 160)
are timed twice in this one process on the same data and set-up: as the package runs them
(one BLAS thread) and with the limit lifted (BLAS's default, one thread per core). Then
the same pair again while ``--load`` other processes keep cores busy (each a loop of
NumPy products under its own one-thread limit): a multithreaded BLAS splitting 160 x 160
products across cores waits for the busy core at every call. The least of ``--repeats``
timings of each; ratios default / one thread.

    python benchmarks/blas_threads.py [--d 2000] [--steps 1000] [--load 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import time
from pathlib import Path

import numpy as np

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import preset
from verify.sim.data import generate
from verify.sim.engines import ReducedEngine, base


def busy(stop: multiprocessing.synchronize.Event) -> None:
    """Keep one core busy until ``stop`` is set."""
    from threadpoolctl import threadpool_limits

    x = np.random.default_rng(0).standard_normal((300, 300))
    with threadpool_limits(1):
        while not stop.is_set():
            x = np.tanh(x @ x.T / 300.0)


def step_seconds(config, data, setup, limited: bool, repeats: int) -> float:
    """Least wall time of ``config.steps`` steps from a fresh engine on a shared set-up."""
    original = base.single_blas_thread
    if not limited:
        base.single_blas_thread = contextlib.nullcontext  # type: ignore[assignment]
    try:
        best = np.inf
        for _ in range(repeats):
            engine = ReducedEngine(config, data, setup=setup)
            started = time.perf_counter()
            engine.advance_to(config.training.steps)
            best = min(best, time.perf_counter() - started)
        return float(best)
    finally:
        base.single_blas_thread = original


def pair(config, data, setup, repeats: int) -> dict[str, float]:
    one = step_seconds(config, data, setup, True, repeats)
    default = step_seconds(config, data, setup, False, repeats)
    return {"one_thread_seconds": one, "default_seconds": default, "ratio": default / one}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--load", type=int, default=1, help="busy processes in the loaded pair")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    config = preset("benign", d=args.d, steps=args.steps, test_size=0)
    data = generate(config)
    setup = ReducedEngine(config, data).setup
    record = {"config": config.to_dict(), "provenance": provenance()}
    record["idle"] = pair(config, data, setup, args.repeats)
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=busy, args=(stop,)) for _ in range(args.load)]
    for worker in workers:
        worker.start()
    try:
        record["loaded"] = pair(config, data, setup, args.repeats)
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    record["load_processes"] = args.load
    for case in ("idle", "loaded"):
        print(case, {key: round(value, 3) for key, value in record[case].items()})
    atomic_write_json(Path(args.out) / f"blas_threads_d{args.d}.json", record)


if __name__ == "__main__":
    main()
