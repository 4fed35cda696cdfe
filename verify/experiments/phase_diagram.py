r"""The phase diagram: final train and test metrics over a grid of :math:`(d, \|\mu\|)`.

Each column (one :math:`d`, one seed) is one sweep point: its runs share :math:`W_0` and
the noise tokens, so they share their set-up (:func:`verify.sim.batch.simulate_group`), each
:math:`\|\mu\|` adding its signal to the shared products in :math:`O(N^2)`, and train in
one compiled loop. Test metrics are the population's (no finite test
set, no sampling noise). Columns are resumable sweep points; tables first, then the
figure drawn from them, with the theory's boundary computed by :mod:`theory` (computed,
with the table and figure libraries imported, while the columns run).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.settings import PhaseDiagramSettings
from verify.experiments.sweep import run_sweep
from verify.measures.regimes import RegimeThresholds, regimes_of
from verify.plots.reproduce import figure_phase_diagram
from verify.runtime.executors import Executor
from verify.runtime.store import ResultStore
from verify.sim.batch import simulate_group
from verify.sim.config import RunConfig
from verify.sim.history import row_of

#: Final-state quantities of a phase-diagram cell.
CELL_QUANTITIES = (
    "train_loss",
    "population_test_loss",
    "train_accuracy",
    "population_test_accuracy",
    "clean_fitted",
    "noisy_fitted",
    "population_test_selects_relevant",
)


def column_points(settings: PhaseDiagramSettings) -> list[dict[str, Any]]:
    r"""One sweep point per (d, seed): the column's first configuration and its values of
    :math:`\|\mu\|` (the worker derives the others from it). Largest d first: a column's
    set-up costs :math:`O(d^2 N)`, and starting the costliest columns first lets the
    workers finish together."""
    return [
        {
            "d": d,
            "seed": seed,
            "config": settings.config(d, settings.mu_values[0], seed).to_dict(),
            "mu_values": list(settings.mu_values),
        }
        for d in sorted(settings.d_values, reverse=True)
        for seed in range(settings.seeds)
    ]


def phase_column(point: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: train a column's runs together; their final rows (the only ones recorded)."""
    first = RunConfig.from_dict(point["config"])
    configs = [first.replace(mu_norm=mu) for mu in point["mu_values"]]
    results = simulate_group(configs, final_only=True)
    return {
        "cells": [
            {
                "mu_norm": config.model.mu_norm,
                "status": result.status.value,
                "message": result.message,
                **result.final,
            }
            for config, result in zip(configs, results, strict=True)
        ]
    }


def cell_rows(
    records: Sequence[Mapping[str, Any]], settings: PhaseDiagramSettings, n: int = 20
) -> list[dict[str, Any]]:
    """One row per cell: (d, ||mu||, seed), its final quantities and its regime; sorted by
    d, seed and ||mu||."""
    rows = []
    for record in records:
        d, seed = record["point"]["d"], record["point"]["seed"]
        for cell in record["result"]["cells"]:
            final = row_of(cell)
            row: dict[str, Any] = {
                "d": d,
                "mu_norm": cell["mu_norm"],
                "seed": seed,
                "n": n,
                "steps": final.get("step", math.nan),
            }
            row.update({key: final.get(key, math.nan) for key in CELL_QUANTITIES})
            row["snr"] = cell["mu_norm"] / math.sqrt(d)
            row.update(regimes_of(row, RegimeThresholds(test_accuracy=settings.test_threshold)))
            row["status"] = cell.get("status", "")
            rows.append(row)
    return sorted(rows, key=lambda row: (row["d"], row["seed"], row["mu_norm"]))


def theory_rows(settings: PhaseDiagramSettings) -> list[dict[str, Any]]:
    r"""The theory's benign | not-overfitting boundary over the grid's d: the stage-1
    threshold :math:`\|\mu\| = \sqrt{\theta\,\sigma_\epsilon^2 d / n}` of
    :func:`theory.stage1.predictions.overfitting_threshold` (:math:`\theta`, a threshold on
    :math:`n\,\mathrm{SNR}^2`, does not depend on d: computed once)."""
    from theory.stage1.predictions import overfitting_threshold

    config = settings.config(min(settings.d_values), 20.0, 0)
    model = config.model
    theta = overfitting_threshold(model, config.training)
    return [
        {
            "boundary": "benign|not-overfitting (stage 1)",
            "label": f"stage-1 n SNR² = {theta:.3g} (theory)",
            "d": int(round(d)),
            "mu_norm": math.sqrt(theta * model.sigma_eps**2 * round(d) / model.n),
        }
        for d in np.linspace(min(settings.d_values), max(settings.d_values), 60)
    ]


def prepare_tables_and_figure(settings: PhaseDiagramSettings) -> list[dict[str, Any]]:
    """What the tables and the figure need besides the cells, made while the columns run:
    the theory's boundary (:func:`theory_rows`), and the table and figure libraries
    imported (pandas and pyarrow for Parquet, matplotlib), so that what follows the last
    column is only writing and drawing."""
    from verify.plots.style import pyplot

    rows = theory_rows(settings)
    with contextlib.suppress(ImportError):  # Parquet is written only when they are present
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    pyplot()
    return rows


def compute_phase_diagram(
    settings: PhaseDiagramSettings, store: ResultStore, executor: Executor, progress: bool
) -> ExperimentOutput:
    side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="phase-diagram")
    prepared = side.submit(prepare_tables_and_figure, settings)
    side.shutdown(wait=False)  # an interrupted sweep does not wait for it
    report = run_sweep(
        column_points(settings),
        phase_column,
        store,
        executor,
        progress=progress,
        desc="phase diagram",
    )
    theory = prepared.result()
    return ExperimentOutput(
        tables={
            "phase_diagram": cell_rows(report.records, settings),
            "phase_theory": theory,
        },
        record={
            "columns": len(report.records),
            "columns_computed": report.computed,
            "sweep_seconds": report.wall_seconds,
        },
    )


def phase_diagram(settings: PhaseDiagramSettings | None = None) -> Experiment:
    """The phase diagram as an experiment of :func:`verify.experiments.driver.run_experiment`."""
    settings = settings or PhaseDiagramSettings()

    def compute(store: ResultStore, executor: Executor, progress: bool) -> ExperimentOutput:
        return compute_phase_diagram(settings, store, executor, progress)

    largest = settings.config(max(settings.d_values), 20.0, 0)
    return Experiment(
        "phase_diagram",
        settings,
        compute,
        figure_phase_diagram,
        largest,
        runs_together=len(settings.mu_values),
    )


__all__ = [
    "phase_diagram",
    "compute_phase_diagram",
    "phase_column",
    "column_points",
    "cell_rows",
    "theory_rows",
    "CELL_QUANTITIES",
]
