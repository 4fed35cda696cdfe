r"""The tables of the max-margin experiment: per-point history, per-run summaries, means
over seeds at the milestones, per-preset rates with 95% t-intervals over seeds, and the
Markdown summary."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from verify.experiments.max_margin_settings import MaxMarginSettings
from verify.measures.intervals import mean_interval
from verify.output.tables import markdown_table


def history_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        base = {"preset": record["point"]["preset"], "seed": record["seed"]}
        rows += [{**base, **row} for row in record["result"]["history"]]
    return rows


def run_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for record in records:
        model = record["point"]["config"]["model"]
        rows.append(
            {
                "preset": record["point"]["preset"],
                "seed": record["seed"],
                "d": model["d"],
                "mu_norm": model["mu_norm"],
                "n": model["n"],
                **record["result"]["summary"],
            }
        )
    return rows


def finite(values: Sequence[float]) -> np.ndarray:
    """The finite ones of ``values`` (a run's undefined quantity is left out of the means)."""
    array = np.asarray(values, dtype=float)
    return array[np.isfinite(array)]


#: History columns averaged over seeds at each milestone.
MILESTONE_COLUMNS = (
    "cos_l2",
    "one_minus_cos_l2",
    "span_fraction",
    "one_minus_cos_in_span",
    "cos_metric_A",
    "cos_family_best",
    "family_best_c",
    "q_norm",
    "p_norm",
    "scaled_misalignment",
    "selection_agreement",
)


def milestone_rows(
    history: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    settings: MaxMarginSettings,
) -> list[dict[str, Any]]:
    r"""Per preset and milestone: means over seeds, and the prediction
    :math:`c_{\mathrm{init}}/(2\|q\|)` of :math:`1 - \cos`."""
    constant = {(r["preset"], r["seed"]): r["misalignment_constant"] for r in runs}
    rows = []
    for name in settings.presets:
        for milestone in settings.used_milestones():
            at = [
                row
                for row in history
                if row["preset"] == name and abs(row["log10_step"] - milestone) < 1e-9
            ]
            row: dict[str, Any] = {"preset": name, "log10_step": milestone, "seeds": len(at)}
            for key in MILESTONE_COLUMNS:
                estimate = mean_interval(finite([r[key] for r in at]))
                row[key], row[f"{key}_sd"] = estimate.mean, estimate.sd
            predicted = [constant[(r["preset"], r["seed"])] / (2 * r["q_norm"]) for r in at]
            row["predicted_one_minus_cos"] = mean_interval(finite(predicted)).mean
            rows.append(row)
    return rows


#: Run-summary columns aggregated over seeds per preset (mean, sd, 95% t half-width).
RATE_COLUMNS = (
    "kappa_log_t",
    "kappa_log_t_late",
    "kappa_q_norm",
    "q_norm_slope_per_log_t",
    "svm_norm",
    "final_cos_l2",
    "final_cos_metric_A",
    "final_cos_family_best",
    "final_family_best_c",
    "cos_l2_svm_vs_metric_A_svm",
    "final_scaled_misalignment",
    "misalignment_constant",
    "final_out_of_span_sq_over_q",
    "out_of_span_constant",
    "kkt_worst_residual",
    "support_scoring_higher",
    "selected_not_top_score",
    "noisy_select_w_minus",
    "noisy_select_irrelevant",
    "noisy_select_relevant",
    "selection_stable_from",
)


def preset_rows(
    runs: Sequence[Mapping[str, Any]], settings: MaxMarginSettings
) -> list[dict[str, Any]]:
    rows = []
    for name in settings.presets:
        group = [run for run in runs if run["preset"] == name]
        row: dict[str, Any] = {"preset": name, "seeds": len(group)}
        row["selection_stable_all"] = all(run["selection_stable"] for run in group)
        for key in RATE_COLUMNS:
            values = [float(run[key]) for run in group]
            estimate = mean_interval(finite(values))
            row[key], row[f"{key}_sd"], row[f"{key}_ci95"] = (
                estimate.mean,
                estimate.sd,
                estimate.half_width,
            )
        rows.append(row)
    return rows


def _cell(row: Mapping[str, Any], key: str, digits: int = 3) -> str:
    mean, half = row[key], row.get(f"{key}_ci95", math.nan)
    if not np.isfinite(half):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


#: (milestone column, label) of the Markdown summary.
MILESTONE_LABELS = (
    ("cos_l2", "cos l2"),
    ("one_minus_cos_l2", "1 - cos l2"),
    ("predicted_one_minus_cos", "c_init/(2|q|)"),
    ("cos_metric_A", "cos A^-1"),
    ("cos_family_best", "cos best (A+cI)^-1"),
    ("family_best_c", "best c"),
)

#: (preset column, label, digits) of the Markdown rates table.
RATE_LABELS = (
    ("kappa_log_t", "kappa (1/log t)", 3),
    ("kappa_log_t_late", "kappa, last 10 decades", 3),
    ("kappa_q_norm", "kappa (1/|q|)", 3),
    ("q_norm_slope_per_log_t", "d|q|/dlog t", 4),
    ("svm_norm", "|q*|", 4),
    ("final_scaled_misalignment", "2|q|(1-cos) at end", 3),
    ("misalignment_constant", "c_init", 3),
    ("cos_l2_svm_vs_metric_A_svm", "cos(l2 SVM, A SVM)", 3),
)


def milestone_markdown(milestones: Sequence[Mapping[str, Any]], settings: MaxMarginSettings) -> str:
    """The cosines at the milestones, means over seeds, one line per preset and column."""
    header = ("preset", *[f"1e{m}" for m in settings.used_milestones()])
    body = []
    for name in settings.presets:
        rows = [row for row in milestones if row["preset"] == name]
        for key, label in MILESTONE_LABELS:
            body.append((f"{name}: {label}", *[f"{row[key]:.4g}" for row in rows]))
    return markdown_table(header, body)


def rates_markdown(presets: Sequence[Mapping[str, Any]]) -> str:
    """Fitted rates and constants per preset, mean ± 95% t half-width over seeds."""
    header = ("preset", *[label for _, label, _ in RATE_LABELS], "selection stable")
    body = [
        (
            row["preset"],
            *[_cell(row, key, digits) for key, _, digits in RATE_LABELS],
            str(row["selection_stable_all"]),
        )
        for row in presets
    ]
    return markdown_table(header, body)


def summary_markdown(
    milestones: Sequence[Mapping[str, Any]],
    presets: Sequence[Mapping[str, Any]],
    settings: MaxMarginSettings,
) -> str:
    """The cosine at the milestones (means over seeds) and the fitted rates per preset."""
    note = (
        f"\nMeans over {settings.seeds} seed(s); ± is the 95% t-interval of the mean over "
        f"seeds. Fits over steps >= 1e{settings.fit_from_log10:g}, or from the step where the "
        "selection settles if later (t = alpha * steps, the flow time). c_init: the package's "
        "reconstruction, 1 - cos ~ c_init / (2|q|).\n"
    )
    return milestone_markdown(milestones, settings) + "\n" + rates_markdown(presets) + note


__all__ = [
    "history_rows",
    "run_rows",
    "finite",
    "milestone_rows",
    "preset_rows",
    "summary_markdown",
    "MILESTONE_COLUMNS",
    "RATE_COLUMNS",
]
