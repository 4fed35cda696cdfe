"""Reduced vs dense float64 on the harmful preset (d = 5000), 1000 steps, set-up included.

Both engines run in this one process on the same data and W0 draw; the result is a
time ratio and the peak traced memory of each (numpy allocations are traced by
tracemalloc). The training-set data generation is shared and not timed; each engine's
own set-up (dense: materialising W0; reduced: one streamed pass over W0) is timed.

    python benchmarks/engines.py [--d 5000] [--steps 1000] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import preset
from verify.sim.data import generate
from verify.sim.engines import DenseEngine, ReducedEngine


def measure(engine_class, config, data):
    tracemalloc.start()
    started = time.perf_counter()
    engine = engine_class(config, data)
    engine.advance_to(config.steps)
    logits = engine.train_logits()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak, logits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    config = preset("harmful", d=args.d, steps=args.steps, test_size=0)
    data = generate(config)
    reduced_s, reduced_peak, reduced_logits = measure(ReducedEngine, config, data)
    dense_s, dense_peak, dense_logits = measure(DenseEngine, config, data)
    agreement = float(np.abs(dense_logits - reduced_logits).max() / np.abs(dense_logits).max())
    record = {
        "config": config.to_dict(),
        "provenance": provenance(),
        "dense_seconds": dense_s,
        "reduced_seconds": reduced_s,
        "time_ratio_dense_over_reduced": dense_s / reduced_s,
        "dense_peak_bytes": dense_peak,
        "reduced_peak_bytes": reduced_peak,
        "memory_ratio_dense_over_reduced": dense_peak / reduced_peak,
        "final_logits_relative_difference": agreement,
        "target_time_ratio": 50,
    }
    for key, value in record.items():
        if key not in ("config", "provenance"):
            print(f"{key:36s} {value:.4g}" if isinstance(value, float) else f"{key:36s} {value}")
    atomic_write_json(Path(args.out) / f"engines_d{args.d}.json", record)


if __name__ == "__main__":
    main()
