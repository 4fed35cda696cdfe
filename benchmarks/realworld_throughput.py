"""Throughput of the real-world attention phase: the current path against the previous one.

The previous path gathered a full-batch trainer's training subset and validation split
from the pool again at every epoch and evaluation, copied the test set chunk by chunk at
every evaluation, and multiplied every gradient by its clipping factor even when that
factor was 1. The current path gathers what a full-batch trainer reads once, reads the
test set as views and skips a factor of 1. Both are timed here side by side (alternating,
several rounds, the best round of each) in one process on one thread, on the real pools:

* ``fullbatch``: an epoch and an evaluation of ``fullbatch-adam`` at n = 200 (9 members:
  3 seeds x 3 noise levels; and 63: 3 seeds x the 21 levels of the sweep over eta);
* ``authors``: an epoch (13 minibatches of 16) of the ``authors`` protocol at n = 200
  (9 members).

Each pair must give the same numbers bit for bit (checked: the members' losses and
evaluation rows). ``run_seconds`` predicts a whole group from the two: epochs x epoch +
evaluations x evaluation.

    python benchmarks/realworld_throughput.py [--datasets mnist,tweets] [--rounds 3]
        [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from verify.output.files import atomic_write_json
from verify.output.provenance import provenance
from verify.realworld import optimise
from verify.realworld.config import GroupConfig
from verify.realworld.context import context_for
from verify.realworld.epochs import evaluation_epochs
from verify.realworld.heads import initial_heads
from verify.realworld.members import member_data
from verify.realworld.protocol import _trainer, one_thread
from verify.realworld.readout import PreparedInputs
from verify.realworld.training import MemberTrainer
from verify.realworld.variants import variant

SWEEP_ETAS = tuple(k / 100 for k in range(21))


class GatheringInputs(PreparedInputs):
    """The test set as the previous path read it: every chunk gathered (copied)."""

    def chunks(self, size: int) -> list[PreparedInputs]:
        return [
            self.select(torch.arange(start, min(start + size, len(self)))[None])
            for start in range(0, len(self), size)
        ]


def previous_clip(tensors, max_norm: float) -> torch.Tensor:
    """Clipping as before: every gradient multiplied by its factor."""
    norms = optimise.member_norms(tensors)
    scale = (max_norm / (norms + optimise.CLIP_EPSILON)).clamp(max=1.0)
    for tensor in tensors:
        tensor.grad.mul_(scale.view(-1, *([1] * (tensor.dim() - 1))))
    return norms


class PreviousTrainer(MemberTrainer):
    """The previous path: the members' examples gathered again at every read."""

    def gathered(self, name: str) -> list[PreparedInputs]:
        self._kept.clear()
        return super().gathered(name)


def trainer(config: GroupConfig, batch: int | None, previous: bool) -> MemberTrainer:
    ctx = context_for(config)
    heads = initial_heads(config, ctx.train.keys_input.shape[-1], ctx.num_classes, None)
    data = member_data(config, ctx.labels["train"], ctx.num_classes)
    made = _trainer(
        config, ctx, heads, data, config.protocol.learning_rate, batch, len(config.etas)
    )
    if previous:
        made.__class__ = PreviousTrainer
    return made


def timed(function) -> tuple[float, object]:
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


def one_round(config: GroupConfig, batch: int | None, previous: bool) -> dict:
    ctx = context_for(config)
    test = GatheringInputs(*ctx.test.tensors()) if previous else ctx.test
    made = trainer(config, batch, previous)
    saved = optimise.clip_members
    optimise.clip_members = previous_clip if previous else saved
    try:
        made.epoch()  # warm-up (and the gathers a full-batch trainer keeps)
        epoch, losses = timed(made.epoch)
        evaluation, rows = timed(lambda: made.evaluate(test, ctx.labels["test"]))
    finally:
        optimise.clip_members = saved
    state = [t.detach().clone() for t in made.weights.tensors()]
    return {"epoch": epoch, "evaluation": evaluation, "out": (losses, rows, state)}


def compare(dataset: str, label: str, etas: tuple[float, ...], batch, rounds: int) -> dict:
    config = GroupConfig(
        dataset=dataset, n=200, etas=etas, seeds=(0, 1, 2), protocol=variant(label)
    )
    best: dict[str, dict[str, float]] = {}
    outputs = {}
    for _ in range(rounds):
        for path in ("previous", "current"):
            measured = one_round(config, batch, path == "previous")
            outputs[path] = measured.pop("out")
            kept = best.setdefault(path, {})
            for key, value in measured.items():
                kept[key] = min(kept.get(key, value), value)
    protocol = config.protocol
    evaluations = len(evaluation_epochs(protocol.epochs, protocol.eval_every))
    for times in best.values():
        times["run_seconds"] = protocol.epochs * times["epoch"] + evaluations * times["evaluation"]
    return {
        "dataset": dataset,
        "protocol": label,
        "members": len(config.members()),
        **{f"{path}_{key}": value for path, times in best.items() for key, value in times.items()},
        **{
            f"ratio_{key}": best["previous"][key] / best["current"][key]
            for key in ("epoch", "evaluation", "run_seconds")
        },
        "bit_identical": _same(outputs["previous"], outputs["current"]),
    }


def _same(first, second) -> bool:
    losses_a, rows_a, state_a = first
    losses_b, rows_b, state_b = second
    same_losses = (losses_a is None and losses_b is None) or torch.equal(losses_a, losses_b)
    same_rows = json.dumps(rows_a) == json.dumps(rows_b)  # exact floats, NaN included
    return same_losses and same_rows and all(map(torch.equal, state_a, state_b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="mnist,rotten-tomatoes,tweets")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    cases = (
        ("fullbatch-adam", (0.0, 0.1, 0.2), None),
        ("fullbatch-adam", SWEEP_ETAS, None),
        ("authors", (0.0, 0.1, 0.2), 16),
    )
    rows = []
    with one_thread():
        for dataset in args.datasets.split(","):
            for label, etas, batch in cases:
                rows.append(compare(dataset, label, etas, batch, args.rounds))
                row = rows[-1]
                print(
                    f"{dataset:16s} {label:15s} members={row['members']:3d}  epoch "
                    f"{row['previous_epoch']:.3f} -> {row['current_epoch']:.3f} s, evaluation "
                    f"{row['previous_evaluation']:.2f} -> {row['current_evaluation']:.2f} s, "
                    f"run x{row['ratio_run_seconds']:.2f}, bit-identical {row['bit_identical']}",
                    flush=True,
                )
    record = {"load_average": os.getloadavg(), "provenance": provenance(), "rows": rows}
    atomic_write_json(Path(args.out) / "realworld_throughput.json", record)


if __name__ == "__main__":
    main()
