r"""The real-world experiments, resumable: the protocol grid and the one-factor analysis.

Both are lists of batched trainings (:class:`~verify.realworld.config.GroupConfig`,
one per protocol variant, data set and n) run on the sweep executors of
:mod:`verify.experiments.sweep`: each finished group is saved at once as
``DIR/runs/<key>.json`` (configuration, every member's history, provenance with
the git commit); a rerun skips them; Ctrl-C keeps them. Every call then rebuilds
the tables, figures, ``realworld.json`` and ``tables/realworld_report.md`` from *all*
groups in ``DIR/runs`` (so grids run in several calls, e.g. n = 1000 with fewer
cells, share one report).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from verify.experiments.sweep import canonical
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


def member_keys(config: dict[str, Any]) -> set[str]:
    """One key per run of a group: everything that determines it (the group's other members
    do not)."""
    common = {k: v for k, v in config.items() if k not in ("etas", "seeds")}
    return {
        json.dumps(canonical({**common, "seed": seed, "eta": eta}), sort_keys=True)
        for seed in config["seeds"]
        for eta in config["etas"]
    }


def not_yet_run(groups: list[GroupConfig], store: Path) -> list[GroupConfig]:
    """The groups with a run that no stored group holds (another group may hold all of a
    group's runs, e.g. the gradient-descent protocol as the optimiser factor)."""
    from verify.experiments.sweep import ResultStore

    results = ResultStore(store)
    done = set().union(*(member_keys(results.load(key)["config"]) for key in results.keys()))
    return [g for g in groups if not member_keys(canonical(g.to_dict())) <= done]


def realworld_experiment(settings: Validated, groups: list[GroupConfig]):
    """The groups as an experiment of :func:`verify.experiments.driver.run_experiment`: the
    groups with runs not yet stored are run (each saved as it finishes), then every table,
    figure, the report and ``realworld.json`` are rebuilt from all groups stored."""
    from verify.experiments.driver import Experiment
    from verify.realworld.figures import draw_realworld_figures

    def compute(store, executor, progress: bool):
        from verify.experiments.sweep import run_sweep
        from verify.realworld.context import context_for, release_contexts
        from verify.realworld.protocol import run_point
        from verify.realworld.results import results_output

        started = time.perf_counter()
        todo = not_yet_run(groups, store.directory)
        for group in {(g.dataset, g.backbone_options): g for g in todo}.values():
            context_for(group, progress=progress)  # fill the feature cache before any worker
            release_contexts()
        cached = time.perf_counter() - started
        report = run_sweep(
            [{"config": g.to_dict()} for g in todo],
            run_point,
            store,
            executor,
            progress=progress,
            desc="realworld groups",
        )
        call = {
            "groups_requested": len(groups),
            "groups_held_elsewhere": len(groups) - len(todo),
            "groups_computed": report.computed,
            "groups_pending": report.pending,
            "feature_cache_seconds": cached,
        }
        return results_output(store, call)

    return Experiment("realworld", settings, compute, draw_realworld_figures)
