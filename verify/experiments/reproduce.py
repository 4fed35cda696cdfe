r"""Reproduce the paper's synthetic experiments (Figures 1-5 and the phase diagram).

Pipeline (each stage reads only what the previous one wrote):

1. sweeps (:mod:`verify.experiments.sweep`): the three presets x ``seeds`` with full
   trajectories (worker :func:`verify.experiments.workers.trajectory`), and the phase
   diagram's grid :math:`d \in \mathrm{linspace}(250, 5000, 39)` x
   :math:`\|\mu\| \in \mathrm{linspace}(5, 100, 39)`, a column per sweep point
   (:mod:`verify.experiments.phase_diagram`); one JSON record per point in ``runs/``;
2. tables (CSV, and Parquet when available) in ``tables/``, plus the accuracy table
   next to the paper's numbers as Markdown, and ``reproduce.json`` (settings, versions,
   wall times);
3. figures (PNG and PDF) in ``figures/``, drawn by :mod:`verify.plots.reproduce` from the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.phase_diagram import compute_phase_diagram
from verify.experiments.settings import ReproduceSettings
from verify.experiments.sweep import run_sweep
from verify.experiments.workers import trajectory
from verify.output.tables import markdown_table
from verify.plots.reproduce import draw_reproduce_figures
from verify.runtime.executors import Executor
from verify.runtime.store import ResultStore
from verify.sim.config import PAPER_ACCURACY
from verify.sim.history import row_of
from verify.sim.resources import estimated_bytes

#: Quantities of the preset table, and the paper's value where it reports one.
PRESET_QUANTITIES = (
    "train_accuracy",
    "test_accuracy",
    "train_loss",
    "test_loss",
    "noisy_fitted",
    "clean_fitted",
)

# -- sweeps -> tables ----------------------------------------------------------------


def preset_points(settings: ReproduceSettings) -> list[dict[str, Any]]:
    return [
        {"regime": name, "config": settings.preset_config(name, d, mu, seed).to_dict()}
        for name, d, mu in settings.presets
        for seed in range(settings.seeds)
    ]


def _preset_rows(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {
        "history": [],
        "attention": [],
        "saturation": [],
        "selection": [],
    }
    for record in records:
        regime, seed, result = record["point"]["regime"], record["seed"], record["result"]
        base = {"regime": regime, "seed": seed}
        tables["history"] += [{**base, **row} for row in result["history"]]
        groups, steps = result["groups"], result["steps"]
        for kind in ("clean", "noisy"):
            sample = result[f"{kind}_sample"]
            for step, probabilities in zip(steps, result[f"attention_{kind}"], strict=False):
                tables["attention"] += [
                    {
                        **base,
                        "step": step,
                        "sample": sample,
                        "kind": kind,
                        "token": token,
                        "group": groups[token],
                        "probability": probability,
                    }
                    for token, probability in enumerate(probabilities)
                ]
        for sample, values in enumerate(result["saturation"]):
            kind = "noisy" if result["noisy"][sample] else "clean"
            tables["saturation"] += [
                {**base, "step": step, "sample": sample, "kind": kind, "saturation": value}
                for step, value in zip(steps, values, strict=True)
            ]
        for split, labels, true_labels in (
            ("train", result["y_train"], result["y_clean"]),
            ("test", result["y_test"], result["y_test"]),
        ):
            chosen = result[f"{split}_selection"]
            for sample, token in enumerate(chosen["selected"]):
                noisy = int(labels[sample] != true_labels[sample])
                tables["selection"].append(
                    {
                        **base,
                        "split": split,
                        "sample": sample,
                        "label": labels[sample],
                        "true_label": true_labels[sample],
                        "noisy": noisy,
                        "token": token,
                        "group": groups[token],
                        "proj_plus": chosen["proj_plus"][sample],
                        "proj_minus": chosen["proj_minus"][sample],
                    }
                )
    return tables


def accuracy_rows(
    records: Sequence[dict[str, Any]], settings: ReproduceSettings
) -> list[dict[str, Any]]:
    """Per preset and quantity: the paper's number and mean, sd (ddof 1), min, max over seeds."""
    rows = []
    for name, d, mu in settings.presets:
        finals = [row_of(r["result"]["summary"]) for r in records if r["point"]["regime"] == name]
        paper = dict(
            zip(("train_accuracy", "test_accuracy"), PAPER_ACCURACY.get(name, ()), strict=False)
        )
        for quantity in PRESET_QUANTITIES:
            values = np.array([f.get(quantity, np.nan) for f in finals])
            rows.append(
                {
                    "regime": name,
                    "d": d,
                    "mu_norm": mu,
                    "quantity": quantity,
                    "paper": paper.get(quantity, ""),
                    "mean": float(np.mean(values)) if values.size else np.nan,
                    "sd": float(np.std(values, ddof=1)) if values.size > 1 else np.nan,
                    "min": float(np.min(values)) if values.size else np.nan,
                    "max": float(np.max(values)) if values.size else np.nan,
                    "n_seeds": int(values.size),
                    "values": " ".join(f"{v:.4g}" for v in values),
                }
            )
    return rows


def accuracy_markdown(rows: Sequence[dict[str, Any]], settings: ReproduceSettings) -> str:
    """The accuracy table as Markdown (paper vs reproduced mean +- sd over seeds)."""
    shown = [r for r in rows if r["paper"] != "" or r["quantity"] in ("noisy_fitted",)]
    body = [
        (
            r["regime"],
            r["d"],
            f"{r['mu_norm']:g}",
            r["quantity"],
            "" if r["paper"] == "" else f"{r['paper']:g}",
            f"{r['mean']:.3f} ± {r['sd']:.3f}",
            f"[{r['min']:.3f}, {r['max']:.3f}]",
            r["n_seeds"],
        )
        for r in shown
    ]
    header = (
        "regime",
        "d",
        "‖μ‖",
        "quantity",
        "paper",
        "reproduced (mean ± sd)",
        "[min, max]",
        "seeds",
    )
    note = (
        f"\nSeeds 0..{settings.seeds - 1}; {settings.steps} GD steps, alpha = 5e-3, "
        f"{settings.test_size} clean test samples; n = 20, T = 8, rho = 0.1, "
        "eta = 0.2 (4 flipped labels); sd with ddof = 1.\n"
    )
    return markdown_table(header, body) + note


# -- the whole pipeline --------------------------------------------------------------


def preset_tables(
    records: Sequence[dict[str, Any]], settings: ReproduceSettings
) -> ExperimentOutput:
    tables = {f"presets_{name}": rows for name, rows in _preset_rows(records).items()}
    accuracy = accuracy_rows(records, settings)
    tables["preset_accuracy"] = accuracy
    return ExperimentOutput(
        tables=tables, markdown={"preset_accuracy": accuracy_markdown(accuracy, settings)}
    )


def reproduction(settings: ReproduceSettings | None = None) -> Experiment:
    """The presets over seeds (Figures 1-5, the accuracy table) and the phase diagram."""
    settings = settings or ReproduceSettings()

    def compute(store: ResultStore, executor: Executor, progress: bool) -> ExperimentOutput:
        presets = run_sweep(
            preset_points(settings), trajectory, store, executor, progress=progress, desc="presets"
        )
        phase = compute_phase_diagram(settings.phase_diagram, store, executor, progress)
        output = preset_tables(presets.records, settings)
        output.tables.update(phase.tables)
        output.record["sweeps"] = {"presets_seconds": presets.wall_seconds, **phase.record}
        return output

    column = (settings.phase_diagram.config(max(settings.phase_d), 20.0, 0), len(settings.phase_mu))
    presets = [(settings.preset_config(name, d, mu, 0), 1) for name, d, mu in settings.presets]
    largest, together = max(
        [column, *presets], key=lambda pair: estimated_bytes(pair[0], runs=pair[1])
    )
    return Experiment(
        "reproduce", settings, compute, draw_reproduce_figures, largest, runs_together=together
    )


__all__ = [
    "ReproduceSettings",
    "reproduction",
    "preset_points",
    "accuracy_rows",
    "accuracy_markdown",
    "preset_tables",
]
