r"""The max-margin limit of token selection, followed along the gradient flow.

Per run (a preset, a seed; gradient flow in reduced coordinates, log-spaced points to
``10**log10_horizon`` GD steps):

* the selected tokens are the argmax of each sample's logits at the horizon; the table
  records, at every point, the share of samples already selecting them, and the first step
  from which the selection no longer changes;
* the token-selection SVM of those tokens (:mod:`theory.max_margin`) in three geometries:
  :math:`\ell_2` (kernel Gram, :math:`q^\star = B\beta`); the metric
  :math:`A^{-1}`, :math:`A = W_0^\top W_0`, of the flow's preconditioner at the start
  (kernel :math:`K`, :math:`q^\star_A = AB\lambda`); and the family
  :math:`(A + cI)^{-1}`, :math:`c > 0` (kernel :math:`K + c\,\mathrm{Gram}`), of which
  :math:`c \to \infty` is :math:`\ell_2` and :math:`c = 0` is :math:`A^{-1}`;
* at each point the cosine of :math:`q(t)` with each candidate, exactly in reduced
  coordinates: :math:`B^\top q` are the training logits, :math:`B^\top A q = Q a + K u`
  (:math:`q = ABa + Bu`, :math:`u = M^\top K a`), :math:`\|q\|^2` from the query's moments,
  and for :math:`P = A + cI`: :math:`B^\top P q = B^\top A q + c B^\top q`,
  :math:`B^\top P^2 B = Q + 2cK + c^2\,\mathrm{Gram}`;
* the split :math:`\cos = (\|\Pi_B q\|/\|q\|)\cdot\cos(\Pi_B q, q^\star)` and the
  prediction :math:`1 - \cos \approx c_{\mathrm{init}}/(2\|q\|)`
  (:func:`theory.max_margin.misalignment_constant`, the package's own reconstruction);
* rates over the points from ``10**fit_from_log10`` steps (or from the step where the
  selection settles, if later): :math:`1 - \cos` as a power of
  :math:`1/\log t` (:math:`t = \alpha k` the flow time) and of :math:`1/\|q\|`, the slope
  of :math:`\|q\|` against :math:`\log t` (the SVM predicts :math:`\|q^\star\|`), and
  :math:`2\|q\|(1 - \cos)` at the horizon against :math:`c_{\mathrm{init}}`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import cho_factor

from theory.max_margin import (
    TokenSVM,
    direction_cosine,
    kkt_residuals,
    misalignment_constant,
    out_of_span_constant,
    selected_tokens,
    solve_token_svm,
    span_fraction,
)
from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.fits import first_step_always, fit_power_law
from verify.experiments.max_margin_settings import MaxMarginSettings
from verify.experiments.max_margin_tables import (
    history_rows,
    milestone_rows,
    preset_rows,
    run_rows,
    summary_markdown,
)
from verify.experiments.sweep import run_sweep
from verify.experiments.workers import config_of
from verify.plots.max_margin import figure_max_margin
from verify.runtime.executors import Executor
from verify.runtime.store import ResultStore
from verify.runtime.threads import single_blas_thread
from verify.sim.data import GROUP_NAMES, Dataset, generate
from verify.sim.engines.flow import FlowEngine
from verify.sim.statistics import Statistics


@dataclass(frozen=True)
class FlowPoint:
    """The flow's state at one logged step, as the cosines need it."""

    step: float
    logits: np.ndarray  # B^T q, (n, T)
    A_projections: np.ndarray  # B^T A q, (N,)
    q_sq: float
    p_norm: float


def metric_projections(statistics: Statistics, a: np.ndarray, M: np.ndarray) -> np.ndarray:
    r""":math:`B^\top A q = Q a + K u` with :math:`u = M^\top K a` (:math:`q = ABa + Bu`)."""
    return statistics.Q @ a + statistics.K @ (M.T @ (statistics.K @ a))


def follow_flow(engine: FlowEngine, steps: Sequence[float]) -> list[FlowPoint]:
    """Advance ``engine`` through ``steps`` and record a :class:`FlowPoint` at each."""
    points = []
    for step in steps:
        engine.advance_to(step)
        q_sq, _ = engine.query_moments()
        points.append(
            FlowPoint(
                step=float(step),
                logits=engine.train_logits().copy(),
                A_projections=metric_projections(engine.statistics, engine.a, engine.M),
                q_sq=q_sq,
                p_norm=engine.parameter_norms()["p_norm"],
            )
        )
    return points


@dataclass(frozen=True)
class Candidates:
    r"""The SVMs of one selection: :math:`\ell_2`, :math:`A^{-1}`, and the family
    :math:`(A + cI)^{-1}` over ``family_c``."""

    l2: TokenSVM
    metric_A: TokenSVM
    family_c: np.ndarray
    family: list[TokenSVM]
    gram_factor: Any  # scipy.linalg.cho_factor(Gram)


def solve_candidates(
    statistics: Statistics, selected: np.ndarray, T: int, settings: MaxMarginSettings
) -> Candidates:
    low, high = settings.family_range[:2]
    family_c = np.geomspace(low, high, settings.family_points)
    gram, K = statistics.gram, statistics.K
    return Candidates(
        l2=solve_token_svm(gram, selected, T),
        metric_A=solve_token_svm(K, selected, T),
        family_c=family_c,
        family=[solve_token_svm(K + c * gram, selected, T) for c in family_c],
        gram_factor=cho_factor(gram),
    )


def family_cosine(
    point: FlowPoint, statistics: Statistics, c: float, coefficients: np.ndarray
) -> float:
    r""":math:`\cos(q, (A + cI)B\lambda)`; :math:`c = 0` is the :math:`A^{-1}` candidate."""
    projections = point.A_projections + c * point.logits.reshape(-1)
    second = statistics.Q + 2.0 * c * statistics.K + c * c * statistics.gram
    return direction_cosine(projections, point.q_sq, coefficients, second)


def point_row(
    point: FlowPoint,
    statistics: Statistics,
    candidates: Candidates,
    selected: np.ndarray,
    alpha: float,
) -> dict[str, Any]:
    """The cosines and their parts at one point (see the module docstring)."""
    flat = point.logits.reshape(-1)
    beta = candidates.l2.coefficients
    cos_l2 = direction_cosine(flat, point.q_sq, beta, statistics.gram)
    inside = span_fraction(flat, point.q_sq, statistics.gram, candidates.gram_factor)
    family = [
        family_cosine(point, statistics, c, svm.coefficients)
        for c, svm in zip(candidates.family_c, candidates.family, strict=True)
    ]
    best = int(np.argmax(family))
    q_norm = math.sqrt(point.q_sq)
    pairs = candidates.l2.pairs
    gaps = point.logits[pairs[:, 0], selected[pairs[:, 0]]] - point.logits[pairs[:, 0], pairs[:, 1]]
    flow_time = alpha * point.step
    return {
        "step": point.step,
        "log10_step": math.log10(point.step),
        "log_flow_time": math.log(flow_time),
        "q_norm": q_norm,
        "p_norm": point.p_norm,
        "cos_l2": cos_l2,
        "one_minus_cos_l2": 1.0 - cos_l2,
        "span_fraction": inside,
        "one_minus_cos_in_span": 1.0 - cos_l2 / inside,
        "out_of_span_sq_over_q": point.q_sq * (1.0 - inside**2) / q_norm,
        "scaled_misalignment": 2.0 * q_norm * (1.0 - cos_l2),
        "cos_metric_A": family_cosine(point, statistics, 0.0, candidates.metric_A.coefficients),
        "cos_family_best": family[best],
        "family_best_c": float(candidates.family_c[best]),
        "normalised_margin_ratio": float(np.min(gaps)) * candidates.l2.norm / q_norm,
        "selection_agreement": float(np.mean(selected_tokens(point.logits) == selected)),
    }


def selection_report(
    data: Dataset, selected: np.ndarray, svm: TokenSVM, rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    r"""Which tokens are selected, since when, and whether the selection is locally optimal
    in Tarzanagh et al.'s sense: every support token (active constraint) scores lower
    than the selected one, :math:`y_i(\gamma_{i,\mathrm{sel}} - \gamma_{i,t}) > 0`."""
    steps = [float(row["step"]) for row in rows]
    agree = [row["selection_agreement"] == 1.0 for row in rows]
    scores, y = data.train_scores, data.y_train
    i, t = svm.pairs[:, 0], svm.pairs[:, 1]
    advantage = y[i] * (scores[i, selected[i]] - scores[i, t])
    groups = np.array([GROUP_NAMES[g] for g in data.groups[selected]], dtype=object)
    noisy = data.noisy
    best_score = np.argmax(y[:, None] * scores, axis=1)
    out: dict[str, Any] = {
        "selection_stable_from": first_step_always(steps, agree),
        "support_constraints": int(svm.active.sum()),
        "support_scoring_higher": int(np.sum(svm.active & (advantage <= 0))),
        "selected_not_top_score": int(np.sum(selected != best_score)),
        "clean_select_relevant": float(np.mean(groups[~noisy] == "R")),
    }
    for group, name in (("W-", "w_minus"), ("I", "irrelevant"), ("R", "relevant")):
        out[f"noisy_select_{name}"] = float(np.mean(groups[noisy] == group)) if noisy.any() else 0.0
    return out


def rate_fits(
    rows: Sequence[Mapping[str, Any]], settings: MaxMarginSettings, stable_from: float
) -> dict[str, Any]:
    r"""Exponents :math:`\kappa` of :math:`1 - \cos \propto (\log t)^{-\kappa}` (over the fit
    window and over its last ten decades) and :math:`\propto \|q\|^{-\kappa}`, and the slope of
    :math:`\|q\|` against :math:`\log t`. The window starts at ``10**fit_from_log10`` steps,
    or later where the selection settles later (before that, the run is compared with the
    SVM of tokens it does not yet select)."""
    from scipy import stats  # scipy.stats is slow to import: only when the rates are fitted

    start = max(settings.fit_from_log10, math.log10(stable_from)) - 1e-9
    window = [row for row in rows if row["log10_step"] >= start]
    late = [row for row in window if row["log10_step"] >= settings.log10_horizon - 10 - 1e-9]

    def column(selection: Sequence[Mapping[str, Any]], key: str) -> list[float]:
        return [float(row[key]) for row in selection]

    misfit = column(window, "one_minus_cos_l2")
    by_time = fit_power_law(column(window, "log_flow_time"), misfit)
    by_norm = fit_power_law(column(window, "q_norm"), misfit)
    by_time_late = fit_power_law(column(late, "log_flow_time"), column(late, "one_minus_cos_l2"))
    growth = stats.linregress(column(window, "log_flow_time"), column(window, "q_norm"))
    return {
        "kappa_log_t": -by_time.exponent,
        "kappa_log_t_stderr": by_time.stderr,
        "kappa_log_t_late": -by_time_late.exponent,
        "kappa_q_norm": -by_norm.exponent,
        "kappa_q_norm_stderr": by_norm.stderr,
        "q_norm_slope_per_log_t": float(growth.slope),
        "q_norm_intercept": float(growth.intercept),
        "fit_points": by_time.n_points,
        "fit_from_step": float(window[0]["step"]),
    }


def svm_report(statistics: Statistics, candidates: Candidates, selected: np.ndarray, T: int):
    r"""Norms, KKT residuals and predicted constants of the run's SVMs, and the Rayleigh
    quotient :math:`\hat v^\top A\hat v` of the :math:`\ell_2` direction (matching the
    :math:`O(\|p\|)` term of :math:`q` with the family :math:`(A + cI)^{-1}` gives
    :math:`c \approx \|p\|\sqrt{\hat v^\top A\hat v}`, a heuristic of this package)."""
    gram, K, Q = statistics.gram, statistics.K, statistics.Q
    l2, metric_A = candidates.l2, candidates.metric_A
    worst = max(
        max(kkt_residuals(kernel, selected, T, svm.coefficients, svm.multipliers).values())
        for kernel, svm in ((gram, l2), (K, metric_A))
    )
    lam, beta = metric_A.coefficients, l2.coefficients
    return {
        "svm_norm": l2.norm,
        "svm_condition": l2.condition,
        "kkt_worst_residual": worst,
        "cos_l2_svm_vs_metric_A_svm": float(beta @ K @ lam)
        / math.sqrt(float(beta @ gram @ beta) * float(lam @ Q @ lam)),
        "svm_rayleigh_A": float(beta @ K @ beta) / float(beta @ gram @ beta),
        "misalignment_constant": misalignment_constant(beta, gram, K, Q),
        "out_of_span_constant": out_of_span_constant(beta, gram, K, Q),
    }


def max_margin_run(point: Mapping[str, Any]) -> dict[str, Any]:
    """Sweep worker: one flow run followed on the settings' points, its SVMs, the history
    rows and the run's summary (plain JSON numbers); small-matrix work under one BLAS
    thread."""
    config = config_of(point)
    settings = MaxMarginSettings(**dict(point["settings"]))
    data = generate(config)
    engine = FlowEngine(config, data)
    with single_blas_thread():
        points = follow_flow(engine, settings.steps())
        selected = selected_tokens(points[-1].logits)
        statistics = engine.statistics
        candidates = solve_candidates(statistics, selected, data.T, settings)
        alpha = config.training.alpha
        rows = [point_row(p, statistics, candidates, selected, alpha) for p in points]
        summary = run_summary(statistics, candidates, selected, data, rows, settings)
    summary["flow_solver_steps"] = engine.solver_steps
    return {"history": rows, "summary": summary, "selected": selected.tolist()}


def run_summary(
    statistics: Statistics,
    candidates: Candidates,
    selected: np.ndarray,
    data: Dataset,
    rows: Sequence[Mapping[str, Any]],
    settings: MaxMarginSettings,
) -> dict[str, Any]:
    """The run's SVM report, selection report, rate fits and final cosines."""
    final = rows[-1]
    selection = selection_report(data, selected, candidates.l2, rows)
    summary = {
        **svm_report(statistics, candidates, selected, data.T),
        **selection,
        **rate_fits(rows, settings, selection["selection_stable_from"]),
        **{
            f"final_{key}": final[key]
            for key in (
                "cos_l2",
                "cos_metric_A",
                "cos_family_best",
                "family_best_c",
                "scaled_misalignment",
                "out_of_span_sq_over_q",
            )
        },
    }
    horizon = 10.0**settings.log10_horizon
    stable_since = horizon / 10.0**settings.stable_decades
    summary["selection_stable"] = bool(summary["selection_stable_from"] <= stable_since)
    return summary


def sweep_points(settings: MaxMarginSettings) -> list[dict[str, Any]]:
    """One point per (preset, seed): the run's configuration and the settings."""
    return [
        {
            "preset": name,
            "config": settings.config(name, seed).to_dict(),
            "settings": settings.to_dict(),
        }
        for name in settings.presets
        for seed in range(settings.seeds)
    ]


def max_margin(settings: MaxMarginSettings | None = None) -> Experiment:
    """The max-margin experiment: tables ``max_margin_*``, the figure, the record."""
    settings = settings or MaxMarginSettings()

    def compute(store: ResultStore, executor: Executor, progress: bool) -> ExperimentOutput:
        report = run_sweep(
            sweep_points(settings),
            max_margin_run,
            store,
            executor,
            progress=progress,
            desc="max-margin (flow)",
        )
        history = history_rows(report.records)
        runs = run_rows(report.records)
        milestones = milestone_rows(history, runs, settings)
        presets = preset_rows(runs, settings)
        return ExperimentOutput(
            tables={
                "max_margin_history": history,
                "max_margin_runs": runs,
                "max_margin_milestones": milestones,
                "max_margin_presets": presets,
            },
            markdown={"max_margin_summary": summary_markdown(milestones, presets, settings)},
            record={"runs": len(runs), "presets": presets},
        )

    largest = max(
        (settings.config(name, 0) for name in settings.presets),
        key=lambda config: config.model.d,
    )
    return Experiment("max_margin", settings, compute, figure_max_margin, largest)


__all__ = [
    "FlowPoint",
    "Candidates",
    "MaxMarginSettings",
    "follow_flow",
    "metric_projections",
    "solve_candidates",
    "family_cosine",
    "point_row",
    "max_margin_run",
    "max_margin",
    "sweep_points",
]
