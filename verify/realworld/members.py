r"""The members of a batched training: their examples, labels and initial query/key.

Everything random is drawn from streams keyed by the seed alone
(``numpy.random.default_rng([seed, stream])``), so a member's numbers do not
depend on which other members train with it, and the noise levels of one seed
share the training subset, the validation split and the initialisation:

* training subset: ``n`` examples of the training pool, uniformly without replacement;
* validation split: ``validation_size`` further examples of the pool (disjoint from
  the subset, never from the test set), their labels noised like the training
  labels (a practitioner's validation data is as noisy as the training data);
* labels: the protocol's noise model (:data:`verify.realworld.datasets.NOISE`);
* query/key: ``normal``: :math:`W \sim N(0, \sigma_0^2)`, query bias 0;
  ``linear-default``: PyTorch's ``Linear.reset_parameters``, weights and bias
  uniform on :math:`(-1/\sqrt{D}, 1/\sqrt{D})` (for Kaiming-uniform with
  :math:`a = \sqrt 5` the bound is :math:`\sqrt{1/3}\sqrt{3/D} = 1/\sqrt D`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from verify.realworld.config import GroupConfig
from verify.realworld.datasets import NOISE
from verify.realworld.protocols import Protocol
from verify.realworld.readout import QueryKey

STREAMS = {
    "subset": 0,
    "train_noise": 1,
    "validation_noise": 2,
    "order": 3,
    "head_order": 4,
    "head_init": 5,
    "attention_init": 6,
}


def stream(seed: int, name: str) -> np.random.Generator:
    """The random stream ``name`` of ``seed``."""
    return np.random.default_rng([seed, STREAMS[name]])


def torch_generator(seed: int, name: str) -> torch.Generator:
    """A torch generator seeded from the stream ``name`` of ``seed``."""
    return torch.Generator().manual_seed(int(stream(seed, name).integers(2**62)))


@dataclass
class MemberData:
    """Per seed ``s`` and noise level ``e``: example indices into the training pool and labels."""

    train_index: torch.Tensor  # [S, n]
    validation_index: torch.Tensor  # [S, V]
    train_labels: torch.Tensor  # [S, E, n] (noisy)
    flipped: torch.Tensor  # [S, E, n] bool
    validation_labels: torch.Tensor  # [S, E, V] (noisy)
    clean_validation_labels: torch.Tensor  # [S, V]


def member_data(config: GroupConfig, pool_labels: torch.Tensor, num_classes: int) -> MemberData:
    """Subsets, validation splits and noisy labels of every member of ``config``."""
    n, size = config.n, config.protocol.validation_size
    noise = NOISE[config.protocol.noise]
    parts: dict[str, list] = {
        k: []
        for k in (
            "train",
            "validation",
            "labels",
            "flipped",
            "validation_labels",
            "clean_validation",
        )
    }
    for seed in config.seeds:
        order = stream(seed, "subset").permutation(len(pool_labels))
        train, validation = np.sort(order[:n]), np.sort(order[n : n + size])
        clean, clean_validation = pool_labels[train].numpy(), pool_labels[validation].numpy()
        per_eta = [
            noise(clean, num_classes, eta, stream(seed, "train_noise")) for eta in config.etas
        ]
        per_eta_validation = [
            noise(clean_validation, num_classes, eta, stream(seed, "validation_noise"))[0]
            for eta in config.etas
        ]
        parts["train"].append(train)
        parts["validation"].append(validation)
        parts["labels"].append(np.stack([labels for labels, _ in per_eta]))
        parts["flipped"].append(np.stack([flipped for _, flipped in per_eta]))
        parts["validation_labels"].append(np.stack(per_eta_validation))
        parts["clean_validation"].append(clean_validation)
    tensors = {k: torch.as_tensor(np.stack(v)) for k, v in parts.items()}
    return MemberData(
        tensors["train"],
        tensors["validation"],
        tensors["labels"],
        tensors["flipped"],
        tensors["validation_labels"],
        tensors["clean_validation"],
    )


def initial_query_key(
    protocol: Protocol, seeds: tuple[int, ...], repeat: int, width: int
) -> QueryKey:
    """Re-initialised query/key of every member: each seed's ``repeat`` times in a row (the
    noise levels of a seed start from the same weights)."""
    per_seed = [
        _initial(protocol, width, torch_generator(seed, "attention_init")) for seed in seeds
    ]
    return QueryKey(
        *(
            torch.cat([getattr(w, name) for w in per_seed])
            .repeat_interleave(repeat, dim=0)
            .contiguous()
            for name in ("query_weight", "query_bias", "key_weight")
        )
    )


def _initial(protocol: Protocol, width: int, generator: torch.Generator) -> QueryKey:
    if protocol.init == "normal":

        def weight():
            return torch.randn((1, width, width), generator=generator) * protocol.init_std

        return QueryKey(weight(), torch.zeros(1, width), weight())
    bound = 1.0 / math.sqrt(width)

    def uniform(*shape):
        return (torch.rand(shape, generator=generator) * 2 - 1) * bound

    return QueryKey(uniform(1, width, width), uniform(1, width), uniform(1, width, width))
