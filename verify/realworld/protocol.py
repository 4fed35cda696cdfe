r"""The two phases for every member of a :class:`~verify.realworld.config.GroupConfig`.

Phase 1 (head): every backbone weight frozen, the pre-trained attention; one head
per seed on clean labels (:mod:`verify.realworld.heads`).

Phase 2 (attention): the last layer's query and key re-initialised per seed
(:mod:`verify.realworld.members`) and trained alone on the member's ``n`` noisy
examples with the protocol's optimiser (:mod:`verify.realworld.training`); the
gradient-descent step size, when the protocol leaves it open, comes from the rule
of :mod:`verify.realworld.step_size`.

Each member's result holds its history at the evaluation epochs, its final row, the
early-stopping choice (validation only) and the realised noise; the group's result
holds the members, the protocol as recorded, the head phase, the step-size probe,
the backbone, the data set and the library versions.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import numpy as np
import torch

from verify.realworld.config import GroupConfig
from verify.realworld.context import Context, context_for
from verify.realworld.epochs import early_stopping_epoch
from verify.realworld.heads import fit_heads
from verify.realworld.members import MemberData, initial_query_key, member_data
from verify.realworld.optimise import MemberOptimiser
from verify.realworld.readout import Heads, QueryKey
from verify.realworld.step_size import largest_stable_step
from verify.realworld.training import MemberTrainer, train_and_record


@contextlib.contextmanager
def one_thread():
    """PyTorch on one thread for the block: the matrices are small, the machine is shared, and
    an OpenMP team waiting for a descheduled thread costs more than it gains."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def run_group(config: GroupConfig, progress: bool = False) -> dict[str, Any]:
    """Both phases for every member of ``config`` on one thread; see the module docstring."""
    with one_thread():
        return _run_group(config, progress)


def _run_group(config: GroupConfig, progress: bool) -> dict[str, Any]:
    started = time.perf_counter()
    torch.manual_seed(0)  # nothing below draws from the global generator; pinned regardless
    ctx = context_for(config, progress)
    data = member_data(config, ctx.labels["train"], ctx.num_classes)
    head = fit_heads(
        config, ctx.head_features, ctx.labels["head"], ctx.num_classes, ctx.last.pooler
    )
    phase_one = time.perf_counter() - started
    protocol = config.protocol
    probe, rate = None, protocol.learning_rate
    if rate is None:
        probe = largest_stable_step(
            lambda count: _probe_trainer(config, ctx, head.heads, data, count),
            protocol.step_probe_steps,
        )
        rate = probe["chosen"]
    trainer = _trainer(config, ctx, head.heads, data, rate, protocol.batch_size, len(config.etas))
    histories = train_and_record(
        trainer, ctx.test, ctx.labels["test"], protocol.epochs, protocol.eval_every, progress
    )
    members = [
        _member_result(seed, eta, history, data, index)
        for index, ((seed, eta), history) in enumerate(
            zip(config.members(), histories, strict=True)
        )
    ]
    pretrained = _pretrained_test_accuracy(ctx, head.heads)
    for member, seed in zip(members, np.repeat(config.seeds, len(config.etas)), strict=True):
        member["pretrained_test_accuracy"] = pretrained[config.seeds.index(int(seed))]
    return {
        "members": members,
        "protocol": protocol.describe(),
        "learning_rate_used": rate,
        "step_size_rule": probe,
        "updates": trainer.optimiser.updates,
        "special_tokens": config.special_tokens,
        "head": head.record,
        "backbone": {**ctx.backbone.identity, "paper_model": ctx.backbone.paper_model},
        "dataset": {
            "name": ctx.data.name,
            "source": ctx.data.source,
            "stands_in_for": ctx.data.stands_in_for,
            "classes": list(ctx.data.classes),
            "pools": _pool_sizes(ctx),
        },
        "versions": library_versions(),
        "head_seconds": phase_one,
        "seconds": time.perf_counter() - started,
    }


def _trainer(
    config: GroupConfig,
    ctx: Context,
    heads: Heads,
    data: MemberData,
    rate: float,
    batch_size: int | None,
    repeat: int,
) -> MemberTrainer:
    """Members: each seed of ``config`` ``repeat`` times (its noise levels, or probe copies)."""
    protocol = config.protocol
    weights = initial_query_key(
        config.protocol, config.seeds, repeat, ctx.train.keys_input.shape[-1]
    )
    for tensor in weights.tensors():
        tensor.requires_grad_(True)
    updates = protocol.epochs * (-(-config.n // batch_size) if batch_size else 1)
    optimiser = MemberOptimiser(
        weights.tensors(),
        protocol.optimiser,
        rate,
        protocol.schedule,
        updates,
        protocol.clip_norm,
        (protocol.beta1, protocol.beta2),
        protocol.adam_eps,
        protocol.weight_decay,
    )
    return MemberTrainer(
        ctx.last,
        ctx.train,
        weights,
        heads.repeat(repeat),
        data,
        optimiser,
        batch_size,
        config.seeds,
    )


def _probe_trainer(
    config: GroupConfig, ctx: Context, heads: Heads, data: MemberData, count: int
) -> MemberTrainer:
    """``count`` copies of the first seed's run on its clean labels, full batch."""
    first = config.replace(etas=(0.0,), seeds=config.seeds[:1])
    clean = member_data(first, ctx.labels["train"], ctx.num_classes)
    copies = MemberData(
        clean.train_index,
        clean.validation_index,
        *(
            t.expand(-1, count, -1)
            for t in (clean.train_labels, clean.flipped, clean.validation_labels)
        ),
        clean.clean_validation_labels,
    )
    return _trainer(first, ctx, heads.first(), copies, 1.0, None, count)


def _member_result(
    seed: int, eta: float, history: list[dict], data: MemberData, index: int
) -> dict[str, Any]:
    etas = data.train_labels.shape[1]
    flipped = data.flipped[index // etas, index % etas]
    final = history[-1]
    trained = [row["max_attention_train"] for row in history[1:]] or [final["max_attention_train"]]
    return {
        "seed": seed,
        "eta": eta,
        "history": history,
        "final": {**final, "mean_max_attention_over_training": float(np.mean(trained))},
        **early_stopping_epoch(history),
        "noisy_examples": int(flipped.sum()),
        "noisy_fraction": float(flipped.float().mean()),
        "validation_noisy_fraction": float(
            (
                data.validation_labels[index // etas, index % etas]
                != data.clean_validation_labels[index // etas]
            )
            .float()
            .mean()
        ),
    }


@torch.no_grad()
def _pretrained_test_accuracy(ctx: Context, heads) -> list[float]:
    """Test accuracy of each seed's head with the pre-trained query and key."""
    pretrained = ctx.last.pretrained_query_key()
    seeds = len(heads.classifier_weight)
    weights = QueryKey(*(t.expand(seeds, *t.shape[1:]) for t in pretrained.tensors()))
    logits = [ctx.last(weights, heads, chunk)[0] for chunk in ctx.test.chunks(200)]
    correct = torch.cat(logits, dim=1).argmax(-1) == ctx.labels["test"]
    return correct.float().mean(dim=1).tolist()


def _pool_sizes(ctx: Context) -> dict[str, int]:
    return {name: len(getattr(ctx.pools, name)) for name in ("test", "train", "head")}


def library_versions() -> dict[str, Any]:
    """Versions of torch, transformers and onnx, and torch's thread count: the same seed gives
    bit-identical numbers at the same thread count (another count changes the reduction order,
    ~1e-7 relative)."""
    import onnx
    import transformers

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def run_point(point: dict[str, Any]) -> dict[str, Any]:
    """Sweep worker: one batched training ``{"config": GroupConfig.to_dict()}``."""
    return run_group(GroupConfig.from_dict(dict(point["config"])))
