r"""What a list of batched trainings will cost, before running it.

The work of a group is counted in *example passes* (one example through the query
row of the last layer, forward and backward) and head steps:

* training: :math:`M \cdot \text{epochs} \cdot n` passes, as minibatches or full batch
  (:math:`M` = seeds x noise levels);
* evaluation: :math:`M \cdot (\text{evaluations}) \cdot (n + V + N_\text{test})` forward
  passes;
* the step-size probe (gradient descent without a given step):
  :math:`(\text{probed step sizes}) \cdot \text{probe steps} \cdot n` passes;
* the Adam head phase: :math:`\text{head epochs} \cdot \lceil N_\text{head}/b\rceil` steps.

Seconds per unit are measured here on the real pools of each data set (a minibatch
epoch, a full-batch epoch, an evaluation and head steps of a 3 x 3-member group at
n = 200), so the estimate holds for this machine at this thread count.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from verify.realworld.config import GroupConfig
from verify.realworld.context import context_for
from verify.realworld.epochs import evaluation_epochs
from verify.realworld.heads import HEAD_FIELDS, adam_heads
from verify.realworld.members import member_data
from verify.realworld.protocol import _trainer, one_thread
from verify.realworld.protocols import protocol
from verify.realworld.results import label_of
from verify.realworld.step_size import GRID, REFINEMENT

UNITS = ("minibatch_passes", "fullbatch_passes", "evaluation_passes", "head_steps")


def workload(config: GroupConfig, head_pool: int) -> dict[str, float]:
    """The units of work of ``config`` (see the module docstring)."""
    protocol, n = config.protocol, config.n
    members = len(config.seeds) * len(config.etas)
    passes = members * protocol.epochs * n
    evaluations = len(evaluation_epochs(protocol.epochs, protocol.eval_every))
    probe = (
        (len(GRID) + len(REFINEMENT)) * protocol.step_probe_steps * n
        if protocol.learning_rate is None
        else 0
    )
    head = min(protocol.head_examples or head_pool, head_pool)
    head_steps = (
        protocol.head_epochs * -(-head // protocol.head_batch_size)
        if protocol.head_fit == "adam"
        else 0
    )
    return {
        "minibatch_passes": passes if protocol.batch_size else 0,
        "fullbatch_passes": (0 if protocol.batch_size else passes) + probe,
        "evaluation_passes": members
        * evaluations
        * (n + protocol.validation_size + config.layout.test_size),
        "head_steps": head_steps,
    }


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def calibrate(config: GroupConfig) -> dict[str, float]:
    """Seconds per unit on ``config``'s data set (its context is loaded if needed)."""
    probe = GroupConfig(
        dataset=config.dataset,
        n=200,
        etas=(0.0, 0.1, 0.2),
        seeds=(0, 1, 2),
        protocol=protocol(
            "authors", special_tokens=config.special_tokens, head_epochs=1, head_examples=None
        ),
        layout=config.layout,
    )
    ctx = context_for(probe)
    data = member_data(probe, ctx.labels["train"], ctx.num_classes)
    examples = min(1600, len(ctx.labels["head"]))
    started = time.perf_counter()
    heads = adam_heads(
        probe,
        ctx.head_features[:examples],
        ctx.labels["head"][:examples],
        ctx.num_classes,
        ctx.last.pooler,
    )
    heads_seconds = time.perf_counter() - started
    trainer = _trainer(probe, ctx, heads, data, 5e-5, 16, 3)

    minibatch = _timed(trainer.epoch)
    trainer.batch_size = None
    fullbatch = _timed(trainer.epoch)
    evaluation = _timed(lambda: trainer.evaluate(ctx.test, ctx.labels["test"]))
    passes = 9 * 200
    return {
        "minibatch_passes": minibatch / passes,
        "fullbatch_passes": fullbatch / passes,
        "evaluation_passes": evaluation / (9 * (200 + 200 + len(ctx.test))),
        "head_steps": heads_seconds / -(-examples // 16),
        "torch_threads": _torch_threads(),
    }


def _torch_threads() -> int:
    return torch.get_num_threads()


def estimate(groups: list[GroupConfig]) -> dict[str, Any]:
    """Predicted seconds per group and in total, with the measured rates per data set (on one
    thread, as the runs). A head is fit once per process for all groups that share it."""
    rates: dict[tuple, dict[str, float]] = {}
    rows, heads = [], set()
    for group in groups:
        key = (group.dataset, group.backbone_options)
        if key not in rates:
            with one_thread():
                rates[key] = calibrate(group)
        head_pool = len(context_for(group).pools.head)
        work = workload(group, head_pool)
        head = (key, group.seeds, *(getattr(group.protocol, f) for f in HEAD_FIELDS))
        if head in heads:
            work["head_steps"] = 0
        heads.add(head)
        seconds = sum(work[unit] * rates[key][unit] for unit in UNITS)
        rows.append(
            {
                "protocol": label_of(group.protocol.to_dict()),
                "dataset": group.dataset,
                "n": group.n,
                "special_tokens": group.special_tokens,
                "members": len(group.seeds) * len(group.etas),
                "epochs": group.protocol.epochs,
                **work,
                "predicted_seconds": seconds,
            }
        )
    return {
        "groups": rows,
        "total_seconds": sum(r["predicted_seconds"] for r in rows),
        "rates": [{"dataset": k[0], "options": dict(k[1]), **v} for k, v in rates.items()],
    }
