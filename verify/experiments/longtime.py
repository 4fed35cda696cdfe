r"""The exponential-time regime, followed with gradient flow (engine ``flow``) to
:math:`10^{13}` GD-equivalent steps on log-spaced points.

Per run (all read off the logged points, so resolution is the log spacing):

* gap growth: slope of each gap statistic against :math:`\log_{10}k` (:math:`k` = step)
  over :math:`k \ge k_0`; if a gap grows like :math:`x(k) \approx \log k + c` (the
  large-argument form of :math:`x = g^{-1}(g(x_0) + c\,\alpha k)`, :math:`g(x) \approx e^{x}/T`),
  the slope is :math:`\ln 10 \approx 2.303` per decade;
* fitting time :math:`k_{\text{fit}}`: first logged step from which every noisy
  sample stays fitted (:math:`y_i f_i > 0`);
* settling times: first step from which test accuracy stays within ``accuracy_tolerance``
  of its final value, and test loss within ``loss_tolerance``;
* delayed generalisation (Remark 4.3): in accuracy, the gain
  :math:`A_{\text{test}}(\text{end}) - A_{\text{test}}(k_{\text{fit}})`; in loss, the ratio of
  the loss settling time to :math:`k_{\text{fit}}`.

A short GD run (engine ``reduced``) of the first benign configuration checks the flow
against true GD over the horizon both can reach.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verify.experiments.fits import first_step_always, settle_step, slope_per_decade
from verify.experiments.sweep import Executor, ResultStore, make_executor, run_sweep
from verify.experiments.workers import long_trajectory
from verify.output.files import atomic_write_text
from verify.output.tables import markdown_table, number, write_experiment_record, write_table
from verify.sim.config import RunConfig, preset

GAP_COLUMNS = ("clean_gap_min", "clean_gap_mean", "noisy_gap_min", "noisy_gap_mean")
LOG_SLOPE_THEORY = math.log(10.0)

#: (label, category, overrides of the benign preset) scanned for a delay.
DEFAULT_SCAN: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = (
    ("benign d=2000 |mu|=20", "benign preset", (("d", 2000), ("mu_norm", 20.0))),
    ("harmful d=5000 |mu|=5", "harmful preset", (("d", 5000), ("mu_norm", 5.0))),
    ("not-overfitting d=1000 |mu|=100", "not-overfitting preset",
     (("d", 1000), ("mu_norm", 100.0))),
    ("d=2000 |mu|=7", "near harmful|benign", (("d", 2000), ("mu_norm", 7.0))),
    ("d=2000 |mu|=10", "near harmful|benign", (("d", 2000), ("mu_norm", 10.0))),
    ("d=8000 |mu|=8", "near harmful|benign", (("d", 8000), ("mu_norm", 8.0))),
    ("d=8000 |mu|=12", "near harmful|benign", (("d", 8000), ("mu_norm", 12.0))),
    ("d=2000 |mu|=20 eta=0.3", "more label noise",
     (("d", 2000), ("mu_norm", 20.0), ("eta", 0.3))),
    ("d=2000 |mu|=20 eta=0.4", "more label noise",
     (("d", 2000), ("mu_norm", 20.0), ("eta", 0.4))),
    ("d=2000 |mu|=12 eta=0.4", "more label noise",
     (("d", 2000), ("mu_norm", 12.0), ("eta", 0.4))),
    ("d=2000 |mu|=120", "near benign|not", (("d", 2000), ("mu_norm", 120.0))),
    ("d=2000 |mu|=170", "near benign|not", (("d", 2000), ("mu_norm", 170.0))),
    ("d=1000 |mu|=80", "near benign|not", (("d", 1000), ("mu_norm", 80.0))),
    ("d=2000 |mu|=20 rho=0.02", "other", (("d", 2000), ("mu_norm", 20.0), ("rho", 0.02))),
    ("d=2000 |mu|=20 T=16", "other", (("d", 2000), ("mu_norm", 20.0), ("T", 16))),
)


@dataclass(frozen=True)
class LongtimeSettings:
    steps: int = 10**13
    log_points: int = 91
    seeds: tuple[int, ...] = (0, 1, 2)
    benign_seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    scan: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = DEFAULT_SCAN
    test_size: int = 1000
    slope_from: float = 1e4
    accuracy_tolerance: float = 0.01
    loss_tolerance: float = 1e-3
    gd_check_steps: int = 100_000

    @classmethod
    def quick(cls) -> LongtimeSettings:
        return cls(steps=10**8, log_points=25, seeds=(0,), benign_seeds=(0,),
                   scan=(("benign d=300 |mu|=10 n=10", "benign preset",
                          (("d", 300), ("mu_norm", 10.0), ("n", 10))),
                         ("d=600 |mu|=3 n=10", "near harmful|benign",
                          (("d", 600), ("mu_norm", 3.0), ("n", 10)))),
                   test_size=200, slope_from=1e3, gd_check_steps=500)

    def config(self, overrides: Sequence[tuple[str, Any]], seed: int, engine: str = "flow",
               steps: int | None = None) -> RunConfig:
        steps = self.steps if steps is None else steps
        return preset("benign", **{**dict(overrides), "seed": seed, "engine": engine,
                                   "steps": steps, "test_size": self.test_size,
                                   "log_every": steps, "log_geometric": self.log_points})

    def points(self) -> list[dict[str, Any]]:
        points = []
        for index, (label, category, overrides) in enumerate(self.scan):
            seeds = self.benign_seeds if index == 0 else self.seeds
            points += [{"label": label, "category": category,
                        "config": self.config(overrides, seed).to_dict()} for seed in seeds]
        return points


def run_metrics(result: Mapping[str, Any], settings: LongtimeSettings) -> dict[str, Any]:
    """Slopes, fitting and settling times, and delay measures of one long run."""
    history = result["history"]
    steps = np.array([number(row["step"]) for row in history])

    def column(name: str) -> np.ndarray:
        return np.array([number(row[name]) for row in history])

    test_accuracy, test_loss = column("test_accuracy"), column("test_loss")
    noisy = np.array(result["noisy"], dtype=bool)
    margins = np.array(result["margins"], dtype=float)
    sample_fit = [first_step_always(steps, margins[i] > 0) for i in np.flatnonzero(noisy)]
    fit_step = first_step_always(steps, column("noisy_fitted") >= 1.0) if noisy.any() \
        else 0.0
    at_fit = test_accuracy[steps == fit_step][0] if np.isfinite(fit_step) else math.nan
    after = steps >= (fit_step if np.isfinite(fit_step) else steps[-1])
    at_1000 = np.interp(1000.0, steps, test_accuracy)
    out: dict[str, Any] = {
        "final_step": steps[-1], "final_train_accuracy": column("train_accuracy")[-1],
        "final_test_accuracy": test_accuracy[-1], "final_test_loss": test_loss[-1],
        "final_noisy_fitted": column("noisy_fitted")[-1],
        "initial_test_accuracy": test_accuracy[0], "test_accuracy_at_1000": at_1000,
        "test_accuracy_min": float(np.min(test_accuracy)),
        "test_accuracy_max": float(np.max(test_accuracy)),
        "fit_step": fit_step,
        "noisy_fit_step_median": float(np.median(sample_fit)) if sample_fit else math.nan,
        "noisy_fit_step_max": float(np.max(sample_fit)) if sample_fit else math.nan,
        "test_accuracy_settle_step": settle_step(steps, test_accuracy,
                                                 settings.accuracy_tolerance),
        "test_loss_settle_step": settle_step(steps, test_loss, settings.loss_tolerance),
        "test_accuracy_at_fit": at_fit,
        "accuracy_gain_after_fit": test_accuracy[-1] - at_fit,
        "accuracy_max_rise_after_fit": float(np.max(test_accuracy[after])
                                             - test_accuracy[after][0]) if after.any()
        else math.nan}
    selected = np.array(result.get("selected_group_final", []), dtype=object)
    if selected.size and noisy.any():
        for group, name in (("W-", "w_minus"), ("I", "irrelevant"), ("R", "relevant")):
            out[f"noisy_selects_{name}"] = float(np.mean(selected[noisy] == group))
    fit_reference = max(fit_step, 1.0) if np.isfinite(fit_step) else math.nan
    out["loss_settle_over_fit"] = out["test_loss_settle_step"] / fit_reference
    out["accuracy_settle_over_fit"] = out["test_accuracy_settle_step"] / fit_reference
    for name in GAP_COLUMNS:
        slope, stderr, points = slope_per_decade(steps, column(name), settings.slope_from)
        out[f"{name}_slope_per_decade"] = slope
        out[f"{name}_slope_stderr"] = stderr
        out[f"{name}_final"] = column(name)[-1]
    out["slope_points"] = points
    return out


def history_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        base = {"label": record["point"]["label"], "category": record["point"]["category"],
                "seed": record["seed"]}
        for row in record["result"]["history"]:
            step = number(row["step"])
            rows.append({**base, **row,
                         "log10_step": math.log10(step) if step > 0 else math.nan})
    return rows


def summary_rows(records: Sequence[Mapping[str, Any]], settings: LongtimeSettings
                 ) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        config = record["config"]
        rows.append({"label": record["point"]["label"], "category": record["point"]["category"],
                     "seed": record["seed"], "d": config["d"], "mu_norm": config["mu_norm"],
                     "n": config["n"], "eta": config["eta"], "rho": config["rho"],
                     "T": config["T"], **run_metrics(record["result"], settings)})
    return rows


def _fmt_step(value: float) -> str:
    return "never" if not np.isfinite(value) else f"{value:.2g}"


def summary_markdown(rows: Sequence[Mapping[str, Any]], settings: LongtimeSettings) -> str:
    """Per configuration (over seeds): median fitting and settling steps, test accuracy at
    1e3 steps and at the end, the largest accuracy rise after fitting, gap slopes."""
    labels = list(dict.fromkeys(row["label"] for row in rows))
    body = []
    for label in labels:
        group = [row for row in rows if row["label"] == label]

        def med(key: str, group: list = group) -> float:
            values = np.array([number(row[key]) for row in group])
            return float(np.median(values)) if np.isfinite(values).all() else math.nan

        def mean(key: str, group: list = group) -> str:
            values = np.array([number(row[key]) for row in group])
            return f"{np.nanmean(values):.3f}"

        body.append((label, len(group), _fmt_step(med("fit_step")),
                     mean("test_accuracy_at_1000"), mean("final_test_accuracy"),
                     mean("accuracy_max_rise_after_fit"),
                     _fmt_step(med("test_accuracy_settle_step")),
                     _fmt_step(med("test_loss_settle_step")),
                     mean("clean_gap_min_slope_per_decade"),
                     mean("noisy_selects_w_minus"), mean("noisy_selects_irrelevant")))
    header = ("configuration", "seeds", "k_fit (median)", "test acc @1e3", "test acc @end",
              "max acc rise after k_fit", "acc settles (±0.01)", "loss settles (±1e-3)",
              "clean gap slope/decade", "noisy select W₋ (end)", "noisy select I (end)")
    note = (f"\nFlow to {settings.steps:.0e} steps; slopes fitted over steps >= "
            f"{settings.slope_from:.0e}; theory for log growth: ln 10 = "
            f"{LOG_SLOPE_THEORY:.3f} per decade. Step values are logged points "
            f"({settings.log_points} log-spaced).\n")
    return markdown_table(header, body) + note


def gd_check(settings: LongtimeSettings, store: ResultStore, executor: Executor,
             progress: bool) -> list[dict[str, Any]]:
    """The first scan configuration (seed 0) under true GD and under the flow, to
    ``gd_check_steps`` steps: the differences of the final observables."""
    label, _, overrides = settings.scan[0]
    seed = (settings.benign_seeds or settings.seeds)[0]
    points = [{"label": f"{label} ({engine})", "category": "gd check",
               "config": settings.config(overrides, seed, engine,
                                         settings.gd_check_steps).to_dict()}
              for engine in ("reduced", "flow")]
    report = run_sweep(points, long_trajectory, store, executor, progress=progress,
                       desc="GD vs flow")
    gd, flow = (r["result"]["history"][-1] for r in report.records)
    return [{"quantity": key, "gd": number(gd[key]), "flow": number(flow[key]),
             "difference": number(flow[key]) - number(gd[key])}
            for key in ("test_accuracy", "test_loss", "train_loss", "noisy_fitted",
                        *GAP_COLUMNS)]


def run_longtime(out: str | Path, settings: LongtimeSettings | None = None,
                 executor: Executor | None = None, progress: bool = True,
                 figures: bool = True) -> dict[str, Any]:
    """Run (or resume) the long-time scan; write tables, ``longtime.json``, figures."""
    settings = settings or LongtimeSettings()
    out = Path(out)
    tables, store = out / "tables", ResultStore(out / "runs")
    owned = executor is None
    executor = executor or make_executor()
    started = time.perf_counter()
    try:
        report = run_sweep(settings.points(), long_trajectory, store, executor,
                           progress=progress, desc="long time (flow)")
        check = gd_check(settings, store, executor, progress)
    finally:
        if owned:
            executor.close()
    summary = summary_rows(report.records, settings)
    written = write_table(tables / "longtime_history", history_rows(report.records))
    written += write_table(tables / "longtime_summary", summary)
    written += write_table(tables / "longtime_gd_check", check)
    atomic_write_text(tables / "longtime_summary.md", summary_markdown(summary, settings))
    draw = None
    if figures:
        from verify.plots.beyond import figure_longtime as draw
    record = {"settings": asdict(settings), "wall_seconds": time.perf_counter() - started,
              "runs": len(report.records), "gd_check": check}
    record = write_experiment_record(out, "longtime.json", record, written, draw)
    return record


__all__ = ["LongtimeSettings", "run_longtime", "run_metrics", "summary_rows", "history_rows",
           "DEFAULT_SCAN", "LOG_SLOPE_THEORY"]
