"""The settings of the real-world experiments, as validated data: the protocol grid and
the one-factor-at-a-time analysis, each a list of batched trainings.

Kept apart from the experiments themselves so that reading them (the command line's
flags) imports no numerical library.
"""

from __future__ import annotations

from dataclasses import dataclass

from theory.foundation.validation import (
    Integer,
    Optional,
    Options,
    Real,
    Sequence,
    Text,
    Validated,
    parameter,
)
from verify.realworld.catalogue import DATASET_NAMES, MODALITY
from verify.realworld.config import GroupConfig
from verify.realworld.variants import FACTORS, GRID_VARIANTS, TARGET, applies, variant

ETAS = Sequence(Real(0.0, 0.5, closed="left"), unique=True)


def _check_variants(labels: tuple[str, ...]) -> None:
    for label in labels:
        variant(label)


@dataclass(frozen=True)
class GridSettings(Validated):
    """Protocol variants x data sets x n, each trained with every eta and seed."""

    protocols: tuple[str, ...] = parameter(
        GRID_VARIANTS,
        Sequence(Text(), unique=True),
        "protocol variants: authors, fullbatch-adam, gd, each optionally +cls (text keeps "
        "[CLS]) or +FACTOR",
    )
    datasets: tuple[str, ...] = parameter(
        DATASET_NAMES, Sequence(Options(DATASET_NAMES), unique=True), "data sets"
    )
    ns: tuple[int, ...] = parameter(
        (20, 200, 1000), Sequence(Integer(1), unique=True), "training set sizes"
    )
    etas: tuple[float, ...] = parameter((0.0, 0.1, 0.2), ETAS, "label-noise rates")
    seeds: int = parameter(3, Integer(1), "seeds per cell: the first K")
    epochs: int | None = parameter(
        None,
        Optional(Integer(1), "each protocol's own"),
        "attention-phase epochs for every protocol",
    )

    def check_relations(self) -> None:
        _check_variants(self.protocols)

    def groups(self) -> list[GroupConfig]:
        groups = []
        for label in self.protocols:
            protocol = variant(label)
            if self.epochs is not None:
                protocol = protocol.replace(epochs=self.epochs)
            groups += [
                GroupConfig(
                    dataset=dataset,
                    n=n,
                    etas=self.etas,
                    seeds=tuple(range(self.seeds)),
                    protocol=protocol,
                )
                for dataset in self.datasets
                if applies(label, MODALITY[dataset])
                for n in self.ns
            ]
        return sorted(groups, key=lambda g: (g.n, g.protocol.epochs))  # cheap ones first


@dataclass(frozen=True)
class FactorSettings(Validated):
    """One factor at a time: the base protocol, and the base with each factor moved to the
    other protocol's setting, at one n and noise level (and eta = 0 for the pairing)."""

    base: str = parameter("fullbatch-adam", Options(tuple(TARGET)), "protocol to start from")
    factors: tuple[str, ...] = parameter(
        ("optimiser", "learning-rate", "batch-size", "epochs", "schedule"),
        Sequence(Options(tuple(FACTORS)), unique=True),
        "factors to move, one at a time",
    )
    datasets: tuple[str, ...] = parameter(
        DATASET_NAMES, Sequence(Options(DATASET_NAMES), unique=True), "data sets"
    )
    n: int = parameter(200, Integer(1), "training set size")
    eta: float = parameter(0.1, Real(0.0, 0.5), "label-noise rate (eta = 0 runs too)")
    seeds: int = parameter(3, Integer(1), "seeds per cell: the first K")

    def labels(self) -> list[str]:
        return [self.base] + [f"{self.base}+{factor}" for factor in self.factors]

    def groups(self) -> list[GroupConfig]:
        return sorted(
            (
                GroupConfig(
                    dataset=dataset,
                    n=self.n,
                    etas=(0.0, self.eta),
                    seeds=tuple(range(self.seeds)),
                    protocol=variant(label),
                )
                for label in self.labels()
                for dataset in self.datasets
                if applies(label, MODALITY[dataset])
            ),
            key=lambda g: g.protocol.epochs,
        )


__all__ = ["GridSettings", "FactorSettings", "ETAS"]
