"""The head phase of the real-world protocol: fit against read from the head cache.

For each data set, the head phase of a group of three seeds under a protocol (default
``authors``: AdamW, 300 epochs on 3,000 clean examples, the pooler trained on text), timed
both ways in one process on one thread: fit (what every group paid before the cache, and
what the first group of a data set, seed and head settings still pays) and read back
from the cache on disk (what every later group pays, in this or any other process). The
two give the same tensors bit for bit (checked here). The groups' own records hold the
same comparison in ``head_seconds``.

    python benchmarks/realworld_heads.py [--datasets mnist,tweets] [--head-epochs 300]
        [--out benchmarks/results]

The fit runs in a temporary head cache, so the user's cache is neither read nor filled.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.realworld.config import GroupConfig
from verify.realworld.context import context_for
from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE, feature_directory
from verify.realworld.heads import fit_heads, forget_heads
from verify.realworld.protocol import one_thread
from verify.realworld.variants import variant


def timed_head(config: GroupConfig) -> tuple[float, object]:
    ctx = context_for(config)
    started = time.perf_counter()
    fit = fit_heads(config, ctx.head_features, ctx.labels["head"], ctx.num_classes, ctx.last.pooler)
    return time.perf_counter() - started, fit


def measure(dataset: str, label: str, head_epochs: int | None) -> dict:
    protocol = variant(label)
    if head_epochs is not None:
        protocol = protocol.replace(head_epochs=head_epochs)
    config = GroupConfig(dataset=dataset, seeds=(0, 1, 2), protocol=protocol)
    context_for(config)  # the features, from their cache (not timed)
    fit_seconds, fitted = timed_head(config)
    forget_heads()  # the next read comes from the disk
    read_seconds, read = timed_head(config)
    same = all(
        (a is None and b is None) or torch.equal(a, b)
        for a, b in zip(fitted.heads.tensors(), read.heads.tensors(), strict=True)
    )
    return {
        "dataset": dataset,
        "protocol": label,
        "head_fit": protocol.head_fit,
        "head_epochs": protocol.head_epochs,
        "head_examples": fitted.record["head_examples"],
        "seeds": 3,
        "fit_seconds": fit_seconds,
        "read_seconds": read_seconds,
        "ratio": fit_seconds / read_seconds,
        "fitted_seeds": fitted.record["head_seeds_fitted"],
        "read_seeds_fitted": read.record["head_seeds_fitted"],
        "bit_identical": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mnist,rotten-tomatoes,tweets")
    parser.add_argument("--protocol", default="authors")
    parser.add_argument("--head-epochs", type=int, default=None, help="default: the protocol's")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    features = feature_directory()
    rows = []
    with tempfile.TemporaryDirectory() as scratch, one_thread():
        for dataset in args.datasets.split(","):
            # the features stay where they are; the heads go to the scratch directory
            os.environ[DIRECTORY_ENVIRONMENT_VARIABLE] = str(features)
            context_for(GroupConfig(dataset=dataset, protocol=variant(args.protocol)))
            os.environ[DIRECTORY_ENVIRONMENT_VARIABLE] = scratch
            rows.append(measure(dataset, args.protocol, args.head_epochs))
            row = rows[-1]
            print(
                f"{dataset:16s} fit {row['fit_seconds']:8.1f} s   read {row['read_seconds']:.3f} s"
                f"   ratio {row['ratio']:8.0f}   bit-identical {row['bit_identical']}"
            )
    record = {
        "load_average": os.getloadavg(),
        "torch_threads": 1,
        "provenance": provenance(),
        "rows": rows,
    }
    name = f"realworld_heads_{args.protocol}.json"
    atomic_write_json(Path(args.out) / name, record)


if __name__ == "__main__":
    main()
