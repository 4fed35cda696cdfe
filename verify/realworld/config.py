r"""What one batched training computes: a data set, n, noise levels, seeds and a protocol.

A :class:`GroupConfig` is trained as one batched model: its members are every
(seed, eta) pair, arranged seed-major (member ``s E + e`` for the ``s``-th seed and
``e``-th noise level). The members of one seed share the training subset, the
validation split, the initialisation, the head and the batch order, and differ in
their labels; every member is an independent run (see
:mod:`verify.realworld.readout`).

The :class:`Layout` fixes the data shared by every protocol: the test set, the
training pool (training subsets and validation splits are drawn from it) and the
head pool, by one permutation of ``pool_seed``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from theory.foundation.data_model import noisy_count
from theory.foundation.validation import (
    Integer,
    Options,
    Real,
    Sequence,
    Validated,
    parameter,
    require,
)
from verify.realworld.catalogue import DATASET_NAMES, MODALITY
from verify.realworld.protocols import Protocol, protocol_from_dict


@dataclass(frozen=True)
class Layout(Validated):
    """The pools every run of a data set draws from, whatever the protocol."""

    test_size: int = parameter(1000, Integer(1), "test examples")
    train_pool: int = parameter(
        2000, Integer(2), "training pool (training subset + validation split)"
    )
    head_pool_max: int = parameter(
        10000, Integer(1), "largest head pool (the rest of the data set, capped)"
    )
    pool_seed: int = parameter(0, Integer(0), "seed of the permutation that splits the pools")
    image_size: int = parameter(112, Integer(14), "image side in pixels (a multiple of 14)")
    max_tokens: int = parameter(64, Integer(2), "text: tokens kept per example")

    def check_relations(self) -> None:
        require(
            self.image_size % 14 == 0,
            "image_size",
            self.image_size,
            "a multiple of the patch size 14",
        )


@dataclass(frozen=True)
class GroupConfig(Validated):
    """One batched training: every (seed, eta) pair of one data set, n and protocol."""

    dataset: str = parameter("mnist", Options(DATASET_NAMES), "data set")
    n: int = parameter(200, Integer(1), "training examples (noisy labels)")
    etas: tuple[float, ...] = parameter(
        (0.0, 0.1, 0.2), Sequence(Real(0.0, 0.5, closed="left"), unique=True), "label-noise rates"
    )
    seeds: tuple[int, ...] = parameter((0, 1, 2), Sequence(Integer(0), unique=True), "seeds")
    protocol: Protocol = field(default_factory=Protocol)
    layout: Layout = field(default_factory=Layout)

    def check_relations(self) -> None:
        require(
            self.n + self.protocol.validation_size <= self.layout.train_pool,
            "n",
            self.n,
            f"an integer <= train_pool - validation_size = "
            f"{self.layout.train_pool - self.protocol.validation_size}",
        )
        if self.protocol.noise == "exact":
            for eta in self.etas:
                require(
                    2 * noisy_count(self.n, eta) < self.n,
                    "eta",
                    eta,
                    f"a rate that flips fewer than half of n={self.n} labels "
                    f"(noisy_count gives {noisy_count(self.n, eta)})",
                )

    @property
    def modality(self) -> str:
        return MODALITY[self.dataset]

    @property
    def special_tokens(self) -> bool:
        """[CLS] present: always for images, as the protocol says for text."""
        return self.modality == "image" or self.protocol.special_tokens

    @property
    def backbone_options(self) -> tuple[tuple[str, Any], ...]:
        if self.modality == "image":
            return (("image_size", self.layout.image_size),)
        return (
            ("max_tokens", self.layout.max_tokens),
            ("special_tokens", self.protocol.special_tokens),
        )

    def members(self) -> list[tuple[int, float]]:
        """(seed, eta) of each member, seed-major."""
        return [(seed, eta) for seed in self.seeds for eta in self.etas]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> GroupConfig:
        values = dict(values)
        values["protocol"] = protocol_from_dict(values.get("protocol", {}))
        values["layout"] = Layout(**values.get("layout", {}))
        values["etas"] = tuple(values["etas"])
        values["seeds"] = tuple(values["seeds"])
        return cls(**values)
