"""Batched members in the real-world protocol: seconds per example pass, one run vs nine.

One training step of the query row (forward + backward + Adam with clipping) on the
cached states of a real pool, for 1 member and for 9 members (3 seeds x 3 noise
levels, the grid's groups), with batch 16 (the authors' protocol) and full batch
(n = 200, the package's earlier protocol), on one thread. An *example pass* is one
example of one member through a step. Run: ``python benchmarks/realworld_members.py``
(needs the realworld extra and the fetched assets; the numbers depend on the load of
the machine, which is printed).
"""

from __future__ import annotations

import json
import os
import time

from verify.realworld.config import GroupConfig
from verify.realworld.context import context_for
from verify.realworld.heads import initial_heads
from verify.realworld.members import member_data
from verify.realworld.protocol import _trainer, one_thread
from verify.realworld.protocols import protocol


def seconds_per_pass(
    dataset: str, seeds: int, etas: int, batch: int | None, seconds: float = 10.0
) -> float:
    config = GroupConfig(
        dataset=dataset,
        n=200,
        etas=(0.0, 0.1, 0.2)[:etas],
        seeds=tuple(range(seeds)),
        protocol=protocol("authors"),
    )
    ctx = context_for(config)
    data = member_data(config, ctx.labels["train"], ctx.num_classes)
    heads = initial_heads(config, ctx.train.keys_input.shape[-1], ctx.num_classes, ctx.last.pooler)
    trainer = _trainer(config, ctx, heads, data, 5e-5, batch, etas)
    trainer.epoch()  # warm-up
    started, epochs = time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        trainer.epoch()
        epochs += 1
    return (time.perf_counter() - started) / (epochs * seeds * etas * 200)


def main() -> None:
    results = {"load_average": os.getloadavg()}
    with one_thread():
        for dataset in ("rotten-tomatoes", "mnist"):
            for label, batch in (("batch 16", 16), ("full batch", None)):
                single = seconds_per_pass(dataset, 1, 1, batch)
                batched = seconds_per_pass(dataset, 3, 3, batch)
                results[f"{dataset}, {label}"] = {
                    "one member, us per pass": single * 1e6,
                    "nine members, us per pass": batched * 1e6,
                    "speed-up": single / batched,
                }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
