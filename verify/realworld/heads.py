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

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from verify.realworld.config import GroupConfig
from verify.realworld.head_cache import (
    head_key,
    head_path,
    head_settings,
    load_head,
    seeded,
    store_head,
)
from verify.realworld.members import stream, torch_generator
from verify.realworld.optimise import MemberOptimiser
from verify.realworld.protocols import Protocol
from verify.realworld.readout import Heads

CLASSIFIER_INIT_STD = 0.02
TRAINER_CLIP_NORM = 1.0


@dataclass
class HeadFit:
    """Heads of the seeds ``[S]`` and what their phase recorded."""

    heads: Heads
    record: dict


_REMEMBERED: dict[str, tuple[Heads, dict]] = {}


def fit_heads(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
) -> HeadFit:
    """One head per seed of ``config`` on the first ``head_examples`` examples (all of the
    head pool if fewer). Each seed's head is read from the head cache
    (:mod:`verify.realworld.head_cache`: once per process, then from disk) or fit with the
    other seeds missing from it, all at once, and stored."""
    features, labels, pooler = _head_inputs(config.protocol, features, labels, pooler)
    keys = _keys(config, features, labels, num_classes, pooler)
    found = {seed: _recall(config.dataset, key) for seed, key in keys.items()}
    missing = tuple(seed for seed in config.seeds if found[seed] is None)
    fit_seconds = 0.0
    if missing:
        started = time.perf_counter()
        fitted = _fit_heads(config.replace(seeds=missing), features, labels, num_classes, pooler)
        fit_seconds = time.perf_counter() - started
        for index, seed in enumerate(missing):
            found[seed] = (fitted[index], {"fit_seconds": fit_seconds, "fit_seeds": list(missing)})
            _keep(config.dataset, keys[seed], *found[seed])
    heads = Heads.stack([found[seed][0] for seed in config.seeds])
    with torch.no_grad():
        accuracy = heads(features.expand(len(config.seeds), -1, -1)).argmax(-1) == labels
    return HeadFit(
        heads,
        {
            "head_examples": len(labels),
            "head_fit": config.protocol.head_fit,
            "pooler_used": heads.pooler_weight is not None,
            "head_train_accuracy": accuracy.float().mean(dim=1).tolist(),
            "head_seeds_fitted": list(missing),
            "head_fit_seconds": fit_seconds,
            "head_cache_keys": [keys[seed] for seed in config.seeds],
        },
    )


def seeds_to_fit(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
) -> tuple[int, ...]:
    """The seeds of ``config`` whose head the cache does not hold yet."""
    features, labels, pooler = _head_inputs(config.protocol, features, labels, pooler)
    keys = _keys(config, features, labels, num_classes, pooler)
    return tuple(seed for seed, key in keys.items() if _recall(config.dataset, key) is None)


def _head_inputs(
    protocol: Protocol, features: torch.Tensor, labels: torch.Tensor, pooler
) -> tuple[torch.Tensor, torch.Tensor, torch.nn.Module | None]:
    """The examples the head reads (the first ``head_examples``) and the pooler it trains."""
    count = min(protocol.head_examples or len(labels), len(labels))
    trained = pooler if protocol.head_fit == "adam" and protocol.head_pooler else None
    return features[:count], labels[:count], trained


def _keys(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
) -> dict[int, str]:
    """The head cache's key of each seed's head (the same key for every seed if unseeded)."""
    protocol = config.protocol
    pooler_tensors = () if pooler is None else (pooler.dense.weight, pooler.dense.bias)
    settings = head_settings(protocol)
    return {
        seed: head_key(
            config.dataset,
            settings,
            seed if seeded(protocol) else None,
            features,
            labels,
            num_classes,
            pooler_tensors,
        )
        for seed in config.seeds
    }


def _recall(dataset: str, key: str) -> tuple[Heads, dict] | None:
    """A head remembered by this process, or stored on disk, under ``key``."""
    if key not in _REMEMBERED:
        stored = load_head(head_path(dataset, key))
        if stored is None:
            return None
        _REMEMBERED[key] = stored
    return _REMEMBERED[key]


def _keep(dataset: str, key: str, heads: Heads, info: dict) -> None:
    _REMEMBERED[key] = (heads, info)
    store_head(head_path(dataset, key), heads, info)


def forget_heads() -> None:
    """Forget the heads remembered by this process (the cache on disk stays)."""
    _REMEMBERED.clear()


def _fit_heads(
    config: GroupConfig,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: torch.nn.Module | None,
) -> list[Heads]:
    """Each seed's head, fit together (the L-BFGS head, which draws nothing, once)."""
    if config.protocol.head_fit == "lbfgs":
        protocol = config.protocol
        head = lbfgs_head(features, labels, num_classes, protocol.head_l2, protocol.head_iterations)
        return [head] * len(config.seeds)
    heads = adam_heads(config, features, labels, num_classes, pooler)
    return [heads.member(index) for index in range(len(config.seeds))]


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
