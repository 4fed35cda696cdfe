r"""Phase 1: the head on clean labels, read from the pre-trained model's output row.

Every backbone weight is frozen and the attention is the pre-trained one, so the
head's input is a fixed feature vector per example (the cached output row).

* ``lbfgs``: a linear head :math:`W x + c` from zero by full-batch L-BFGS on
  :math:`\mathrm{CE} + \lambda \|W\|_F^2`; it does not depend on the seed.
* ``adam``: per seed, the classifier from :math:`N(0, 0.02^2)` (bias 0) and, with
  ``head_pooler`` on a backbone that has one (text), the model's pre-trained pooler
  :math:`\tanh(P x + p)` in front of it, trained together by minibatch AdamW as the
  Hugging Face ``Trainer`` runs it on a frozen backbone: betas (0.9, 0.999),
  epsilon :math:`10^{-8}`, weight decay 0, linear decay to 0 without warm-up,
  gradient-norm clipping at 1.0, batches reshuffled every epoch; the learning rate,
  epochs and batch size are the protocol's ``head_*`` settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from verify.realworld.config import GroupConfig
from verify.realworld.members import stream, torch_generator
from verify.realworld.optimise import MemberOptimiser
from verify.realworld.readout import Heads

CLASSIFIER_INIT_STD = 0.02
TRAINER_CLIP_NORM = 1.0


@dataclass
class HeadFit:
    """Heads of the seeds ``[S]`` and what their phase recorded."""

    heads: Heads
    record: dict


HEAD_FIELDS = (
    "head_fit",
    "head_examples",
    "head_pooler",
    "head_epochs",
    "head_learning_rate",
    "head_batch_size",
    "head_l2",
    "head_iterations",
)
_FITTED: dict[tuple, HeadFit] = {}


def fit_heads(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
    context: tuple = (),
) -> HeadFit:
    """One head per seed of ``config`` on the first ``head_examples`` examples (all of the
    head pool if fewer); remembered per process for ``context`` (the data set and its
    preprocessing), the seeds and the head settings, since every n and eta shares it."""
    key = (context, config.seeds, *(getattr(config.protocol, f) for f in HEAD_FIELDS))
    if not context or key not in _FITTED:
        _FITTED[key] = _fit_heads(config, features, labels, num_classes, pooler)
    return _FITTED[key]


def _fit_heads(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
) -> HeadFit:
    protocol = config.protocol
    count = min(protocol.head_examples or len(labels), len(labels))
    features, labels = features[:count], labels[:count]
    if protocol.head_fit == "lbfgs":
        head = lbfgs_head(features, labels, num_classes, protocol.head_l2, protocol.head_iterations)
        heads = head.repeat(len(config.seeds))
    else:
        heads = adam_heads(
            config, features, labels, num_classes, pooler if protocol.head_pooler else None
        )
    with torch.no_grad():
        accuracy = heads(features.expand(len(config.seeds), -1, -1)).argmax(-1) == labels
    return HeadFit(
        heads,
        {
            "head_examples": count,
            "head_fit": protocol.head_fit,
            "pooler_used": heads.pooler_weight is not None,
            "head_train_accuracy": accuracy.float().mean(dim=1).tolist(),
        },
    )


def lbfgs_head(
    features: torch.Tensor, labels: torch.Tensor, num_classes: int, l2: float, iterations: int
) -> Heads:
    """A linear head from zero by L-BFGS (strong Wolfe line search) as one member."""
    weight = torch.zeros(num_classes, features.shape[1], requires_grad=True)
    bias = torch.zeros(num_classes, requires_grad=True)
    optimiser = torch.optim.LBFGS(
        [weight, bias],
        lr=1.0,
        max_iter=iterations,
        line_search_fn="strong_wolfe",
        tolerance_grad=1e-9,
    )

    def closure():
        optimiser.zero_grad()
        loss = F.cross_entropy(features @ weight.T + bias, labels) + l2 * weight.pow(2).sum()
        loss.backward()
        return loss

    optimiser.step(closure)
    return Heads(weight.detach()[None], bias.detach()[None])


def initial_heads(
    config: GroupConfig, width: int, num_classes: int, pooler: torch.nn.Module | None
) -> Heads:
    """Per seed: classifier :math:`N(0, 0.02^2)`, bias 0; the pre-trained pooler if given."""
    weights = [
        torch.randn((num_classes, width), generator=torch_generator(seed, "head_init"))
        * CLASSIFIER_INIT_STD
        for seed in config.seeds
    ]
    seeds = len(config.seeds)
    pooler_weight = pooler_bias = None
    if pooler is not None:
        pooler_weight = pooler.dense.weight.detach().expand(seeds, -1, -1).clone()
        pooler_bias = pooler.dense.bias.detach().expand(seeds, -1).clone()
    return Heads(torch.stack(weights), torch.zeros(seeds, num_classes), pooler_weight, pooler_bias)


def adam_heads(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
) -> Heads:
    """Minibatch Adam(W) on each seed's head, all seeds at once (the members never mix)."""
    protocol = config.protocol
    heads = initial_heads(config, features.shape[1], num_classes, pooler)
    tensors = heads.tensors()
    for tensor in tensors:
        tensor.requires_grad_(True)
    count, size = len(labels), protocol.head_batch_size
    steps = -(-count // size)
    optimiser = MemberOptimiser(
        tensors,
        "adam",
        protocol.head_learning_rate,
        "linear",
        protocol.head_epochs * steps,
        TRAINER_CLIP_NORM,
    )
    orders = [stream(seed, "head_order") for seed in config.seeds]
    for _ in range(protocol.head_epochs):
        permutation = torch.as_tensor(np.stack([rng.permutation(count) for rng in orders]))
        for start in range(0, count, size):
            index = permutation[:, start : start + size]  # [S, B]
            logits = heads(features[index])
            loss = (
                F.cross_entropy(logits.transpose(1, 2), labels[index], reduction="none")
                .mean(dim=1)
                .sum()
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    for tensor in tensors:
        tensor.requires_grad_(False)
    return heads
