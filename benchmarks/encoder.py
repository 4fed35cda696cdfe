"""The fast [CLS]-row encoder against the full one (every token through every layer,
PyTorch float64 autograd), per training step, in one process on the same data and
parameters; also the cost of a test-set pass and the machine's load while measuring.

Both models take ``--steps`` GD steps from the same initialisation (after two untimed
warm-up steps each); the report is the seconds per step of each, their ratio, the largest
relative difference of the parameters after the steps (the two train the same function),
and the 1-minute load average before and after. Needs the ``realworld`` extra (torch).

    python benchmarks/encoder.py [--d 2000] [--mlp-dim 2000] [--steps 3] [--threads 1]
        [--out benchmarks/results/encoder.json]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from verify.encoder.config import EncoderConfig, EncoderSettings
from verify.encoder.models import FastModel, FullModel
from verify.encoder.train import encoder_parameters
from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.sim.config import RunConfig
from verify.sim.data import generate


def seconds_per_step(model, steps: int, alpha: float) -> float:
    for _ in range(2):  # warm-up: first-touch allocations, the allocator's thresholds
        model.train_pass()
        model.step(alpha)
    started = time.perf_counter()
    for _ in range(steps):
        model.train_pass()
        model.step(alpha)
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=2000)
    parser.add_argument("--mlp-dim", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="BLAS and torch threads")
    parser.add_argument("--test-size", type=int, default=1000)
    parser.add_argument("--out", default=None, help="write the report as JSON here")
    args = parser.parse_args()

    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.threads)
    run = RunConfig.build(d=args.d, test_size=args.test_size)
    config = EncoderConfig(run, EncoderSettings(mlp_dim=args.mlp_dim))
    data, start = generate(run), encoder_parameters(config)
    load_before = os.getloadavg()[0]
    with threadpool_limits(args.threads):
        fast = FastModel(start.copy(), data, residual=True)
        fast_seconds = seconds_per_step(fast, args.steps, run.training.alpha)
        tested = time.perf_counter()
        fast.test_pass()
        test_seconds = time.perf_counter() - tested
    full = FullModel(start.copy(), data, residual=True)
    full_seconds = seconds_per_step(full, args.steps, run.training.alpha)
    difference = max(
        float(np.max(np.abs(a - getattr(full.parameters, name))) / np.max(np.abs(a)))
        for name, a in fast.parameters.items()
    )
    report = {
        "d": args.d,
        "mlp_dim": args.mlp_dim,
        "n": run.model.n,
        "T": run.model.T,
        "threads": args.threads,
        "steps_timed": args.steps,
        "fast_seconds_per_step": fast_seconds,
        "full_seconds_per_step": full_seconds,
        "speed_ratio_full_over_fast": full_seconds / fast_seconds,
        "fast_test_pass_seconds": test_seconds,
        "test_size": args.test_size,
        "parameter_difference_relative": difference,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        "provenance": provenance(),
    }
    for key, value in report.items():
        if key != "provenance":
            print(f"{key:32} {value}")
    if args.out:
        atomic_write_json(args.out, report)


if __name__ == "__main__":
    main()
