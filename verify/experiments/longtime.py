r"""The exponential-time regime, followed with gradient flow to 1e13 GD steps.

Runs use the ``flow`` engine and record on log-spaced points.

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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from theory.quadrature import LOG_SLOPE_PER_DECADE
from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.fits import first_step_always, settle_step, slope_per_decade
from verify.experiments.settings import DEFAULT_SCAN, LongtimeSettings
from verify.experiments.sweep import run_sweep
from verify.experiments.workers import long_trajectory
from verify.output.tables import markdown_table
from verify.plots.beyond import figure_longtime
from verify.runtime.executors import Executor
from verify.runtime.store import ResultStore
from verify.sim.config import RunConfig
from verify.sim.history import History

GAP_COLUMNS = ("clean_gap_min", "clean_gap_mean", "noisy_gap_min", "noisy_gap_mean")
LOG_SLOPE_THEORY = LOG_SLOPE_PER_DECADE


def run_metrics(result: Mapping[str, Any], settings: LongtimeSettings) -> dict[str, Any]:
    """Slopes, fitting and settling times, and delay measures of one long run."""
    history = History.from_rows(result["history"])
    steps, test_accuracy, test_loss = history.step, history.test_accuracy, history.test_loss
    noisy = np.array(result["noisy"], dtype=bool)
    margins = np.array(result["margins"], dtype=float)
    sample_fit = [first_step_always(steps, margins[i] > 0) for i in np.flatnonzero(noisy)]
    fit_step = first_step_always(steps, history.noisy_fitted >= 1.0) if noisy.any() else 0.0
    at_fit = test_accuracy[steps == fit_step][0] if np.isfinite(fit_step) else math.nan
    after = steps >= (fit_step if np.isfinite(fit_step) else steps[-1])
    at_1000 = np.interp(1000.0, steps, test_accuracy)
    out: dict[str, Any] = {
        "final_step": steps[-1],
        "final_train_accuracy": history.train_accuracy[-1],
        "final_test_accuracy": test_accuracy[-1],
        "final_test_loss": test_loss[-1],
        "final_noisy_fitted": history.noisy_fitted[-1],
        "initial_test_accuracy": test_accuracy[0],
        "test_accuracy_at_1000": at_1000,
        "test_accuracy_min": float(np.min(test_accuracy)),
        "test_accuracy_max": float(np.max(test_accuracy)),
        "fit_step": fit_step,
        "noisy_fit_step_median": float(np.median(sample_fit)) if sample_fit else math.nan,
        "noisy_fit_step_max": float(np.max(sample_fit)) if sample_fit else math.nan,
        "test_accuracy_settle_step": settle_step(steps, test_accuracy, settings.accuracy_tolerance),
        "test_loss_settle_step": settle_step(steps, test_loss, settings.loss_tolerance),
        "test_accuracy_at_fit": at_fit,
        "accuracy_gain_after_fit": test_accuracy[-1] - at_fit,
        "accuracy_max_rise_after_fit": float(np.max(test_accuracy[after]) - test_accuracy[after][0])
        if after.any()
        else math.nan,
    }
    selected = np.array(result.get("selected_group_final", []), dtype=object)
    if selected.size and noisy.any():
        for group, name in (("W-", "w_minus"), ("I", "irrelevant"), ("R", "relevant")):
            out[f"noisy_selects_{name}"] = float(np.mean(selected[noisy] == group))
    fit_reference = max(fit_step, 1.0) if np.isfinite(fit_step) else math.nan
    out["loss_settle_over_fit"] = out["test_loss_settle_step"] / fit_reference
    out["accuracy_settle_over_fit"] = out["test_accuracy_settle_step"] / fit_reference
    for name in GAP_COLUMNS:
        slope, stderr, points = slope_per_decade(steps, history[name], settings.slope_from)
        out[f"{name}_slope_per_decade"] = slope
        out[f"{name}_slope_stderr"] = stderr
        out[f"{name}_final"] = history[name][-1]
    out["slope_points"] = points
    return out


def history_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        base = {
            "label": record["point"]["label"],
            "category": record["point"]["category"],
            "seed": record["seed"],
        }
        raw = record["result"]["history"]
        for row, step in zip(raw, History.from_rows(raw).step, strict=True):
            rows.append({**base, **row, "log10_step": math.log10(step) if step > 0 else math.nan})
    return rows


def summary_rows(
    records: Sequence[Mapping[str, Any]], settings: LongtimeSettings
) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        config = RunConfig.from_dict(record["config"]).flat()
        rows.append(
            {
                "label": record["point"]["label"],
                "category": record["point"]["category"],
                "seed": record["seed"],
                "d": config["d"],
                "mu_norm": config["mu_norm"],
                "n": config["n"],
                "eta": config["eta"],
                "rho": config["rho"],
                "T": config["T"],
                **run_metrics(record["result"], settings),
            }
        )
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
            values = np.array([row[key] for row in group], dtype=float)
            return float(np.median(values)) if np.isfinite(values).all() else math.nan

        def mean(key: str, group: list = group) -> str:
            values = np.array([row[key] for row in group], dtype=float)
            return f"{np.nanmean(values):.3f}"

        body.append(
            (
                label,
                len(group),
                _fmt_step(med("fit_step")),
                mean("test_accuracy_at_1000"),
                mean("final_test_accuracy"),
                mean("accuracy_max_rise_after_fit"),
                _fmt_step(med("test_accuracy_settle_step")),
                _fmt_step(med("test_loss_settle_step")),
                mean("clean_gap_min_slope_per_decade"),
                mean("noisy_selects_w_minus"),
                mean("noisy_selects_irrelevant"),
            )
        )
    header = (
        "configuration",
        "seeds",
        "k_fit (median)",
        "test acc @1e3",
        "test acc @end",
        "max acc rise after k_fit",
        "acc settles (±0.01)",
        "loss settles (±1e-3)",
        "clean gap slope/decade",
        "noisy select W₋ (end)",
        "noisy select I (end)",
    )
    note = (
        f"\nFlow to {settings.steps:.0e} steps; slopes fitted over steps >= "
        f"{settings.slope_from:.0e}; theory for log growth: ln 10 = "
        f"{LOG_SLOPE_THEORY:.3f} per decade. Step values are logged points "
        f"({settings.log_points} log-spaced).\n"
    )
    return markdown_table(header, body) + note


def gd_check(
    settings: LongtimeSettings, store: ResultStore, executor: Executor, progress: bool
) -> list[dict[str, Any]]:
    """The first scan configuration (seed 0) under true GD and under the flow, to
    ``gd_check_steps`` steps: the differences of the final observables."""
    label, _, overrides = settings.scan[0]
    seed = 0
    points = [
        {
            "label": f"{label} ({engine})",
            "category": "gd check",
            "config": settings.config(overrides, seed, engine, settings.gd_check_steps).to_dict(),
        }
        for engine in ("reduced", "flow")
    ]
    report = run_sweep(
        points, long_trajectory, store, executor, progress=progress, desc="GD vs flow"
    )
    gd, flow = (History.from_rows(r["result"]["history"]).final for r in report.records)
    return [
        {"quantity": key, "gd": gd[key], "flow": flow[key], "difference": flow[key] - gd[key]}
        for key in ("test_accuracy", "test_loss", "train_loss", "noisy_fitted", *GAP_COLUMNS)
    ]


def long_time(settings: LongtimeSettings | None = None) -> Experiment:
    """The long-time scan and the GD-vs-flow check; tables ``longtime_*``, figures."""
    settings = settings or LongtimeSettings()

    def compute(store: ResultStore, executor: Executor, progress: bool) -> ExperimentOutput:
        report = run_sweep(
            settings.points(),
            long_trajectory,
            store,
            executor,
            progress=progress,
            desc="long time (flow)",
        )
        check = gd_check(settings, store, executor, progress)
        summary = summary_rows(report.records, settings)
        return ExperimentOutput(
            tables={
                "longtime_history": history_rows(report.records),
                "longtime_summary": summary,
                "longtime_gd_check": check,
            },
            markdown={"longtime_summary": summary_markdown(summary, settings)},
            record={"runs": len(report.records), "gd_check": check},
        )

    largest = max(
        (settings.config(overrides, 0) for _, _, overrides in settings.scan),
        key=lambda config: config.model.d * config.model.n * config.model.T,
    )
    return Experiment("longtime", settings, compute, figure_longtime, largest)


__all__ = [
    "LongtimeSettings",
    "long_time",
    "run_metrics",
    "summary_rows",
    "history_rows",
    "DEFAULT_SCAN",
    "LOG_SLOPE_THEORY",
]
