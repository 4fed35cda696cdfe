r"""The real-world experiments, resumable: the protocol grid and the one-factor analysis.

Both are lists of batched trainings (:class:`~verify.realworld.config.GroupConfig`,
one per protocol variant, data set and n; their settings are in
:mod:`verify.realworld.settings`) run as a sweep
(:func:`verify.experiments.sweep.run_sweep`): each finished group is saved at once as
``DIR/runs/<key>.json`` (configuration, every member's history, provenance with
the git commit); a rerun skips them; Ctrl-C keeps them. Every call then rebuilds
the tables, figures, ``realworld.json`` and ``tables/realworld_report.md`` from *all*
groups in ``DIR/runs`` (so grids run in several calls, e.g. n = 1000 with fewer
cells, share one report).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from theory.foundation.validation import Validated
from verify.experiments.driver import Experiment
from verify.experiments.sweep import run_sweep
from verify.realworld.config import GroupConfig
from verify.realworld.figures import draw_realworld_figures
from verify.realworld.results import results_output
from verify.runtime.store import ResultStore, canonical


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
    results = ResultStore(store)
    done = set().union(*(member_keys(results.load(key)["config"]) for key in results.keys()))
    return [g for g in groups if not member_keys(canonical(g.to_dict())) <= done]


def realworld_experiment(settings: Validated, groups: list[GroupConfig]):
    """The groups as an experiment of :func:`verify.experiments.driver.run_experiment`: the
    groups with runs not yet stored are run (each saved as it finishes), then every table,
    figure, the report and ``realworld.json`` are rebuilt from all groups stored."""

    def compute(store, executor, progress: bool):
        # PyTorch is loaded when the groups run, not when the experiment is built
        from verify.realworld.context import context_for, release_contexts
        from verify.realworld.protocol import run_point

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
