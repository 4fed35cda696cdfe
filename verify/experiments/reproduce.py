"""Reproduce the paper's synthetic experiments (Figures 1-5 and the phase diagram).

Pipeline (each stage reads only what the previous one wrote):

1. sweeps (:mod:`verify.experiments.sweep`): the three presets x ``seeds`` with full trajectories
   (worker :func:`verify.experiments.workers.trajectory`), and the phase-diagram grid
   :math:`d \\in \\mathrm{linspace}(250, 5000, 39)` x
   :math:`\\|\\mu\\| \\in \\mathrm{linspace}(5, 100, 39)` with final states only
   (worker :func:`verify.experiments.workers.final_state`); one JSON record per run in ``runs/``;
2. tables (CSV, and Parquet when available) in ``tables/``, plus the accuracy table
   next to the paper's numbers as Markdown, and ``reproduce.json`` (settings, versions,
   wall times);
3. figures (PNG and PDF) in ``figures/``, drawn by :mod:`verify.plots.reproduce` from the tables.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from verify.checks.regimes import RegimeThresholds, classify_regime
from verify.experiments.sweep import Executor, ResultStore, make_executor, run_sweep
from verify.experiments.workers import final_state, trajectory
from verify.output.files import atomic_write_json, atomic_write_text
from verify.output.provenance import provenance
from verify.output.tables import markdown_table, number, write_table
from verify.sim.config import PAPER_ACCURACY, PRESETS, RunConfig, preset

#: Quantities of the preset table, and the paper's value where it reports one.
PRESET_QUANTITIES = ("train_accuracy", "test_accuracy", "train_loss", "test_loss",
                     "noisy_fitted", "clean_fitted")


@dataclass(frozen=True)
class ReproduceSettings:
    """What to run. ``presets`` maps a regime name to its (d, ||mu||)."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    presets: tuple[tuple[str, int, float], ...] = tuple(
        (name, values["d"], values["mu_norm"]) for name, values in PRESETS.items())
    steps: int = 1000
    test_size: int = 1000
    trajectory_log_every: int = 10
    trajectory_log_geometric: int = 40
    phase_d: tuple[int, ...] = tuple(int(round(d)) for d in np.linspace(250, 5000, 39))
    phase_mu: tuple[float, ...] = tuple(float(m) for m in np.linspace(5, 100, 39))
    phase_seeds: tuple[int, ...] = (0,)
    thresholds: RegimeThresholds = field(default_factory=RegimeThresholds)

    @classmethod
    def full(cls, seeds: int = 5, phase_seeds: int = 1) -> ReproduceSettings:
        return cls(seeds=tuple(range(seeds)), phase_seeds=tuple(range(phase_seeds)))

    @classmethod
    def quick(cls, seeds: int = 2) -> ReproduceSettings:
        """Low resolution for tests: small d, 300 steps, a 5 x 5 grid."""
        return cls(seeds=tuple(range(seeds)),
                   presets=(("harmful", 600, 3.0), ("benign", 300, 10.0),
                            ("not-overfitting", 150, 40.0)),
                   steps=300, test_size=200, trajectory_log_every=10,
                   trajectory_log_geometric=10,
                   phase_d=tuple(int(d) for d in np.linspace(100, 500, 5)),
                   phase_mu=tuple(float(m) for m in np.linspace(5, 100, 5)))

    def preset_config(self, name: str, d: int, mu_norm: float, seed: int) -> RunConfig:
        return preset(name, d=d, mu_norm=mu_norm, seed=seed, steps=self.steps,
                      test_size=self.test_size, log_every=self.trajectory_log_every,
                      log_geometric=self.trajectory_log_geometric)

    def phase_config(self, d: int, mu_norm: float, seed: int) -> RunConfig:
        return preset("benign", d=d, mu_norm=mu_norm, seed=seed, steps=self.steps,
                      test_size=self.test_size, log_every=max(self.steps, 1), log_geometric=0)


# -- sweeps -> tables ----------------------------------------------------------------

def preset_points(settings: ReproduceSettings) -> list[dict[str, Any]]:
    return [{"regime": name, "config": settings.preset_config(name, d, mu, seed).to_dict()}
            for name, d, mu in settings.presets for seed in settings.seeds]


def phase_points(settings: ReproduceSettings) -> list[dict[str, Any]]:
    return [{"config": settings.phase_config(d, mu, seed).to_dict()}
            for d in settings.phase_d for mu in settings.phase_mu
            for seed in settings.phase_seeds]


def _preset_rows(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {"history": [], "attention": [], "saturation": [],
                                               "selection": []}
    for record in records:
        regime, seed, result = record["point"]["regime"], record["seed"], record["result"]
        base = {"regime": regime, "seed": seed}
        tables["history"] += [{**base, **row} for row in result["history"]]
        groups, steps = result["groups"], result["steps"]
        for kind in ("clean", "noisy"):
            sample = result[f"{kind}_sample"]
            for step, probabilities in zip(steps, result[f"attention_{kind}"], strict=False):
                tables["attention"] += [
                    {**base, "step": step, "sample": sample, "kind": kind, "token": token,
                     "group": groups[token], "probability": probability}
                    for token, probability in enumerate(probabilities)]
        for sample, values in enumerate(result["saturation"]):
            kind = "noisy" if result["noisy"][sample] else "clean"
            tables["saturation"] += [{**base, "step": step, "sample": sample, "kind": kind,
                                      "saturation": value}
                                     for step, value in zip(steps, values, strict=True)]
        for split, labels, true_labels in (("train", result["y_train"], result["y_clean"]),
                                           ("test", result["y_test"], result["y_test"])):
            chosen = result[f"{split}_selection"]
            for sample, token in enumerate(chosen["selected"]):
                noisy = int(labels[sample] != true_labels[sample])
                tables["selection"].append({
                    **base, "split": split, "sample": sample, "label": labels[sample],
                    "true_label": true_labels[sample], "noisy": noisy, "token": token,
                    "group": groups[token], "proj_plus": chosen["proj_plus"][sample],
                    "proj_minus": chosen["proj_minus"][sample]})
    return tables


def accuracy_rows(records: Sequence[dict[str, Any]], settings: ReproduceSettings
                  ) -> list[dict[str, Any]]:
    """Per preset and quantity: the paper's number and mean, sd (ddof 1), min, max over seeds."""
    rows = []
    for name, d, mu in settings.presets:
        finals = [r["result"]["summary"] for r in records if r["point"]["regime"] == name]
        paper = dict(zip(("train_accuracy", "test_accuracy"), PAPER_ACCURACY.get(name, ()),
                         strict=False))
        for quantity in PRESET_QUANTITIES:
            values = np.array([number(f.get(quantity)) for f in finals])
            rows.append({"regime": name, "d": d, "mu_norm": mu, "quantity": quantity,
                         "paper": paper.get(quantity, ""),
                         "mean": float(np.mean(values)) if values.size else np.nan,
                         "sd": float(np.std(values, ddof=1)) if values.size > 1 else np.nan,
                         "min": float(np.min(values)) if values.size else np.nan,
                         "max": float(np.max(values)) if values.size else np.nan,
                         "n_seeds": int(values.size),
                         "values": " ".join(f"{v:.4g}" for v in values)})
    return rows


def accuracy_markdown(rows: Sequence[dict[str, Any]], settings: ReproduceSettings) -> str:
    """The accuracy table as Markdown (paper vs reproduced mean +- sd over seeds)."""
    shown = [r for r in rows if r["paper"] != "" or r["quantity"] in ("noisy_fitted",)]
    body = [(r["regime"], r["d"], f"{r['mu_norm']:g}", r["quantity"],
             "" if r["paper"] == "" else f"{r['paper']:g}",
             f"{r['mean']:.3f} ± {r['sd']:.3f}", f"[{r['min']:.3f}, {r['max']:.3f}]",
             r["n_seeds"]) for r in shown]
    header = ("regime", "d", "‖μ‖", "quantity", "paper", "reproduced (mean ± sd)",
              "[min, max]", "seeds")
    note = (f"\nSeeds {list(settings.seeds)}; {settings.steps} GD steps, alpha = 5e-3, "
            f"{settings.test_size} clean test samples; n = 20, T = 8, rho = 0.1, "
            "eta = 0.2 (4 flipped labels); sd with ddof = 1.\n")
    return markdown_table(header, body) + note


def phase_rows(records: Sequence[dict[str, Any]], settings: ReproduceSettings
               ) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        config, result = record["config"], record["result"]
        row = {"d": config["d"], "mu_norm": config["mu_norm"], "seed": config["seed"],
               "n": config["n"], "steps": result.get("step")}
        for key in ("train_loss", "test_loss", "train_accuracy", "test_accuracy",
                    "clean_fitted", "noisy_fitted", "test_selects_relevant"):
            row[key] = number(result.get(key))
        row["snr"] = config["mu_norm"] / np.sqrt(config["d"])
        row["regime"] = classify_regime(row["noisy_fitted"], row["test_accuracy"],
                                        settings.thresholds)
        row["status"] = result.get("status", "")
        rows.append(row)
    return rows


# -- the whole pipeline --------------------------------------------------------------

def write_preset_tables(records: Sequence[dict[str, Any]], settings: ReproduceSettings,
                        tables: Path) -> list[Path]:
    written = []
    for name, rows in _preset_rows(records).items():
        written += write_table(tables / f"presets_{name}", rows)
    accuracy = accuracy_rows(records, settings)
    written += write_table(tables / "preset_accuracy", accuracy)
    markdown = accuracy_markdown(accuracy, settings)
    atomic_write_text(tables / "preset_accuracy.md", markdown)
    written.append(tables / "preset_accuracy.md")
    return written


def reproduce(out: str | Path, settings: ReproduceSettings | None = None,
              executor: Executor | None = None, progress: bool = True,
              figures: bool = True) -> dict[str, Any]:
    """Run (or resume) every sweep, write the tables, then draw the figures from them.
    Returns the provenance record also written to ``out/reproduce.json``."""
    from verify.plots.reproduce import draw_reproduce_figures

    settings = settings or ReproduceSettings.full()
    out = Path(out)
    store, tables = ResultStore(out / "runs"), out / "tables"
    owned = executor is None
    executor = executor or make_executor()
    timings: dict[str, float] = {}
    try:
        started = time.perf_counter()
        presets = run_sweep(preset_points(settings), trajectory, store, executor,
                            progress=progress, desc="presets")
        timings["presets_seconds"] = time.perf_counter() - started
        written = write_preset_tables(presets.records, settings, tables)
        started = time.perf_counter()
        phase = run_sweep(phase_points(settings), final_state, store, executor,
                          progress=progress, desc="phase diagram")
        timings["phase_diagram_seconds"] = time.perf_counter() - started
        timings["phase_diagram_computed_runs"] = phase.computed
        written += write_table(tables / "phase_diagram", phase_rows(phase.records, settings))
    finally:
        if owned:
            executor.close()
    record = {"command": " ".join(sys.argv), "settings": asdict(settings),
              "executor": getattr(executor, "name", type(executor).__name__),
              "timings": timings, "provenance": provenance(),
              "tables": [str(p.relative_to(out)) for p in written]}
    atomic_write_json(out / "reproduce.json", record)
    if figures:
        record["figures"] = [str(p.relative_to(out)) for p in draw_reproduce_figures(out)]
        atomic_write_json(out / "reproduce.json", record)
    return record


__all__ = ["ReproduceSettings", "reproduce", "preset_points", "phase_points",
           "accuracy_rows", "accuracy_markdown", "phase_rows", "write_preset_tables"]
