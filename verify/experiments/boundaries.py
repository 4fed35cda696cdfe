r"""Regime boundaries from simulation, by bisection in log ||mu||, and their exponents.

Two boundaries, each a threshold crossing of a measured final-state quantity as
:math:`\|\mu\|` grows at fixed :math:`(d, n)` and seed:

* harmful | benign, by the mechanism (rule ``selection``, the default): the population
  fraction :math:`\pi_R` of test sequences whose argmax token is their relevant one reaches
  :math:`\pi^* = 1/2` from below (below it most test sequences select a noise token); in
  the practical view (rule ``accuracy``): the test accuracy :math:`A_{\text{test}}`
  (population, else the test set's) reaches :math:`A^*` (default 0.95) from below;
* benign | not-overfitting: the fraction of noisy training samples fitted,
  :math:`\phi_N`, drops below :math:`\phi^\circ` (default 1/2) from above.

For each seed, a bracket :math:`[\mu_{lo}, \mu_{hi}]` that straddles the crossing is
halved ``rounds`` times in :math:`\log\|\mu\|`; the estimate is the geometric midpoint
:math:`\mu^* = \sqrt{\mu_{lo}\mu_{hi}}` (resolution :math:`(\mu_{hi}/\mu_{lo})^{2^{-R-1}}`).
All brackets of one round run as one resumable sweep. Exponents of
:math:`\mu^* \propto d^{b}` (at fixed n) and :math:`\mu^* \propto n^{c}` (at fixed d) come
from :func:`verify.experiments.fits.fit_power_law` on the per-seed estimates (t interval) and from
:func:`verify.experiments.fits.bootstrap_exponent` over seeds. Theory:
harmful | benign :math:`\|\mu\| \sim (d/n)^{1/4}`; benign | not :math:`\|\mu\| \sim \sqrt{d/n}`
(up to a slowly growing factor of the horizon); the stage-2 mean field's values stand next to
each measured boundary (:mod:`verify.experiments.boundary_theory`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify.experiments.boundary_theory import (
    BENIGN_NOT,
    HARMFUL_BENIGN,
    NO_PREDICTION,
    Prediction,
    predicted_boundary,
    relative_error,
)
from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.fits import bootstrap_exponent, fit_power_law
from verify.experiments.settings import BoundarySettings
from verify.experiments.sweep import run_sweep
from verify.experiments.workers import final_state
from verify.measures.regimes import regimes_of, selects_relevant, test_accuracy
from verify.output.tables import markdown_table
from verify.plots.beyond import figure_boundaries
from verify.runtime.executors import Executor
from verify.runtime.store import ResultStore, point_key
from verify.sim.history import row_of

#: Exponents the theory states: (boundary, variable) -> exponent.
THEORY_EXPONENTS = {
    (HARMFUL_BENIGN, "d"): 0.25,
    (BENIGN_NOT, "d"): 0.5,
    (BENIGN_NOT, "n"): -0.5,
    (HARMFUL_BENIGN, "n"): -0.25,
}
THEORY_NOTES = {
    (HARMFUL_BENIGN, "d"): "SNR² ≍ d^{-1/2} (A2, Remark 4.2)",
    (BENIGN_NOT, "d"): "n SNR² ≍ 1 (Theorem 4.1)",
    (BENIGN_NOT, "n"): "n SNR² ≍ 1 (Theorem 4.1)",
    (HARMFUL_BENIGN, "n"): "z ∝ √n ‖μ‖²/(σ²√d) at z_1/2, ‖μ‖* ∝ (d/n)^{1/4}",
}


@dataclass
class Bracket:
    """One bisection: boundary ``kind`` at (d, n, seed) between ``low`` and ``high``."""

    kind: str
    sweep: str
    d: int
    n: int
    seed: int
    low: float
    high: float
    bracketed: bool | None = None
    note: str = ""

    @property
    def estimate(self) -> float:
        return math.sqrt(self.low * self.high) if self.bracketed else math.nan


def upper_side(kind: str, result: dict[str, Any], settings: BoundarySettings) -> bool:
    """Whether a run lies on the large-||mu|| side of boundary ``kind`` (harmful|benign by
    ``settings.rule``; population metrics where the run has them)."""
    row = row_of(result)
    if kind == BENIGN_NOT:
        return row.get("noisy_fitted", math.nan) < settings.fitted_level
    if settings.rule == "selection":
        return selects_relevant(row) >= settings.selection_level
    return test_accuracy(row) >= settings.test_threshold


def _evaluate(
    settings: BoundarySettings,
    requests: set[tuple[int, int, float, int]],
    store: ResultStore,
    executor: Executor,
    progress: bool,
    desc: str,
) -> dict[tuple[int, int, float, int], dict[str, Any]]:
    order = sorted(requests, key=lambda r: (r[0], r[1], r[3], r[2]))  # (d, n, seed, mu)
    points = [{"config": settings.config(d, n, mu, seed).to_dict()} for d, n, mu, seed in order]
    report = run_sweep(points, final_state, store, executor, progress=progress, desc=desc)
    by_key = {record["key"]: record["result"] for record in report.records}
    return {
        request: by_key[point_key(final_state, point)]
        for request, point in zip(order, points, strict=True)
    }


def _completed(
    b: Bracket, evaluated: dict[tuple[int, int, float, int], dict[str, Any]], round_number: int
) -> bool:
    """Whether this round's runs of bracket ``b`` finished; if not, the bracket stops with
    a note (a run that ended early has no final state to classify)."""
    mus = (b.low, b.high) if round_number == 0 else (math.sqrt(b.low * b.high),)
    for mu in mus:
        result = evaluated[(b.d, b.n, mu, b.seed)]
        if result.get("status", "completed") != "completed":
            b.bracketed = False
            b.note = f"run at ||mu|| = {mu:.4g} {result.get('status')}: {result.get('message')}"
            return False
    return True


def bisect_boundaries(
    settings: BoundarySettings, store: ResultStore, executor: Executor, progress: bool = True
) -> tuple[list[Bracket], list[dict[str, Any]]]:
    """Run every bisection; return the brackets and every evaluated run (as rows)."""
    brackets = [
        Bracket(kind, sweep, d, n, seed, *settings.bracket(name, d, n))
        for sweep, d, n in settings.cases()
        for seed in range(settings.seeds)
        for kind, name in ((HARMFUL_BENIGN, "harmful"), (BENIGN_NOT, "overfit"))
    ]
    evaluated: dict[tuple[int, int, float, int], dict[str, Any]] = {}
    for round_number in range(settings.rounds + 1):
        active = [b for b in brackets if b.bracketed is not False]
        if round_number == 0:
            requests = {(b.d, b.n, mu, b.seed) for b in active for mu in (b.low, b.high)}
        else:
            requests = {(b.d, b.n, math.sqrt(b.low * b.high), b.seed) for b in active}
        evaluated.update(
            _evaluate(
                settings,
                requests,
                store,
                executor,
                progress,
                f"boundaries {round_number}/{settings.rounds}",
            )
        )
        for b in active:
            if not _completed(b, evaluated, round_number):
                continue
            if round_number == 0:
                low = upper_side(b.kind, evaluated[(b.d, b.n, b.low, b.seed)], settings)
                high = upper_side(b.kind, evaluated[(b.d, b.n, b.high, b.seed)], settings)
                b.bracketed = (not low) and high
                if not b.bracketed:
                    b.note = "above the bracket" if not high else "below the bracket"
                continue
            middle = math.sqrt(b.low * b.high)
            if upper_side(b.kind, evaluated[(b.d, b.n, middle, b.seed)], settings):
                b.high = middle
            else:
                b.low = middle
    rows = [point_row(request, result, settings) for request, result in sorted(evaluated.items())]
    return brackets, rows


def point_row(
    request: tuple[int, int, float, int], result: dict[str, Any], settings: BoundarySettings
) -> dict[str, Any]:
    """One evaluated run as a table row: its final metrics and both regime labels."""
    d, n, mu, seed = request
    row = row_of(result)
    regimes = regimes_of(row, settings.thresholds)
    return {
        "d": d,
        "n": n,
        "mu_norm": mu,
        "seed": seed,
        "steps": result.get("step"),
        "engine": settings.engine,
        "train_accuracy": row.get("train_accuracy", math.nan),
        "test_accuracy": test_accuracy(row),
        "selects_relevant": selects_relevant(row),
        "noisy_fitted": row.get("noisy_fitted", math.nan),
        "clean_fitted": row.get("clean_fitted", math.nan),
        "train_loss": row.get("train_loss", math.nan),
        "regime": regimes["regime"],
        "regime_practical": regimes["regime_practical"],
        "status": result.get("status", ""),
    }


def bracket_rows(brackets: Sequence[Bracket]) -> list[dict[str, Any]]:
    return [
        {
            "kind": b.kind,
            "sweep": b.sweep,
            "d": b.d,
            "n": b.n,
            "seed": b.seed,
            "mu_star": b.estimate,
            "low": b.low,
            "high": b.high,
            "bracketed": int(bool(b.bracketed)),
            "note": b.note,
        }
        for b in brackets
    ]


Predictions = dict[tuple[str, int, int], Prediction]


def boundary_predictions(settings: BoundarySettings, brackets: Sequence[Bracket]) -> Predictions:
    """The stage-2 prediction of every (kind, d, n) the brackets cover."""
    keys = sorted({(b.kind, b.d, b.n) for b in brackets})
    return {(kind, d, n): predicted_boundary(kind, settings, d, n) for kind, d, n in keys}


def summary_rows(
    brackets: Sequence[Bracket], predictions: Predictions | None = None, rule: str = ""
) -> list[dict[str, Any]]:
    """Per (kind, sweep, d, n): geometric mean and sd of log mu* over seeds, next to the
    prediction and the relative error of the geometric mean."""
    rows = []
    keys = sorted({(b.kind, b.sweep, b.d, b.n) for b in brackets})
    for kind, sweep, d, n in keys:
        group = [b for b in brackets if (b.kind, b.sweep, b.d, b.n) == (kind, sweep, d, n)]
        logs = np.log([b.estimate for b in group if b.bracketed])
        measured = float(np.exp(logs.mean())) if logs.size else math.nan
        predicted = (predictions or {}).get((kind, d, n), NO_PREDICTION)
        rows.append(
            {
                "kind": kind,
                "rule": rule if kind == HARMFUL_BENIGN else "noisy fitted",
                "sweep": sweep,
                "d": d,
                "n": n,
                "mu_star_geomean": measured,
                "log_mu_star_sd": float(logs.std(ddof=1)) if logs.size > 1 else math.nan,
                "predicted": predicted.value,
                "model_error": predicted.model_error,
                "relative_error": relative_error(measured, predicted.value),
                "bracketed_seeds": int(logs.size),
                "seeds": len(group),
                "notes": "; ".join(sorted({b.note for b in group if b.note})),
            }
        )
    return rows


def exponent_rows(
    brackets: Sequence[Bracket],
    confidence: float = 0.95,
    repetitions: int = 2000,
    predictions: Predictions | None = None,
) -> list[dict[str, Any]]:
    """Fitted exponent of mu* in d (d-sweep) and in n (n-sweep), next to the theory's law
    and the exponent of the stage-2 predictions over the same values."""
    rows = []
    for kind in (HARMFUL_BENIGN, BENIGN_NOT):
        for sweep in ("d", "n"):
            group = [b for b in brackets if b.kind == kind and b.sweep == sweep and b.bracketed]
            if not group:
                continue
            x = [getattr(b, sweep) for b in group]
            fit = fit_power_law(x, [b.estimate for b in group], confidence)
            replicates: dict[float, list[float]] = {}
            for b in group:
                replicates.setdefault(float(getattr(b, sweep)), []).append(b.estimate)
            boot = bootstrap_exponent(replicates, repetitions, confidence)
            fixed = f"n = {group[0].n}" if sweep == "d" else f"d = {group[0].d}"
            predicted = predicted_exponent(predictions or {}, kind, replicates, group[0], sweep)
            rows.append(
                {
                    "boundary": kind,
                    "variable": sweep,
                    "fixed": fixed,
                    "exponent": fit.exponent,
                    "stderr": fit.stderr,
                    "ci_low": fit.ci_low,
                    "ci_high": fit.ci_high,
                    "bootstrap_low": boot[0],
                    "bootstrap_high": boot[1],
                    "theory": THEORY_EXPONENTS[(kind, sweep)],
                    "theory_basis": THEORY_NOTES[(kind, sweep)],
                    "predicted_exponent": predicted,
                    "points": fit.n_points,
                    "values": len(replicates),
                    "r_squared": fit.r_squared,
                    "prefactor": fit.prefactor,
                }
            )
    return rows


def predicted_exponent(
    predictions: Predictions,
    kind: str,
    replicates: dict[float, list[float]],
    first: Bracket,
    sweep: str,
) -> float:
    """The power-law exponent of the stage-2 predictions over the swept values."""
    values = sorted(replicates)
    keys = [(kind, int(x), first.n) if sweep == "d" else (kind, first.d, int(x)) for x in values]
    found = [predictions.get(key, NO_PREDICTION).value for key in keys]
    return fit_power_law(values, found).exponent


def local_slope_rows(summary: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    r"""Exponent between consecutive sweep values from the seed geometric means,
    :math:`\Delta \log \bar\mu^* / \Delta \log x` (shows curvature a single power law hides)."""
    rows = []
    for kind in (HARMFUL_BENIGN, BENIGN_NOT):
        for sweep in ("d", "n"):
            group = sorted(
                (r for r in summary if r["kind"] == kind and r["sweep"] == sweep),
                key=lambda r: r[sweep],
            )
            for left, right in zip(group, group[1:], strict=False):
                slope = math.log(right["mu_star_geomean"] / left["mu_star_geomean"]) / math.log(
                    right[sweep] / left[sweep]
                )
                rows.append(
                    {
                        "boundary": kind,
                        "variable": sweep,
                        "from": left[sweep],
                        "to": right[sweep],
                        "local_exponent": slope,
                        "theory": THEORY_EXPONENTS[(kind, sweep)],
                    }
                )
    return rows


def exponent_markdown(rows: Sequence[dict[str, Any]], settings: BoundarySettings) -> str:
    body = [
        (
            r["boundary"],
            f"‖μ‖* ∝ {r['variable']}^b ({r['fixed']})",
            f"{r['exponent']:.3f}",
            f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
            f"[{r['bootstrap_low']:.3f}, {r['bootstrap_high']:.3f}]",
            f"{r['theory']:g}",
            f"{r.get('predicted_exponent', math.nan):.3f}",
            r["points"],
            f"{r['r_squared']:.3f}",
        )
        for r in rows
    ]
    header = (
        "boundary",
        "law",
        "fitted b",
        "95% CI (t)",
        "95% CI (bootstrap over seeds)",
        "theory b",
        "stage-2 prediction's b",
        "points",
        "R²",
    )
    return markdown_table(header, body) + rule_note(settings)


def rule_note(settings: BoundarySettings) -> str:
    """What the tables measured: horizon, engine, seeds, rounds and both crossing rules."""
    rule = (
        f"fraction of test sequences selecting R (population) crosses {settings.selection_level}"
        if settings.rule == "selection"
        else f"test accuracy crosses {settings.test_threshold} (practical view)"
    )
    return (
        f"\n{settings.steps:g} steps, engine {settings.engine}, seeds 0..{settings.seeds - 1}, "
        f"{settings.rounds} bisection rounds in log ‖μ‖; harmful|benign ({settings.rule}): "
        f"{rule}; benign|not: fraction of noisy samples fitted drops below "
        f"{settings.fitted_level}.\n"
    )


def prediction_markdown(summary: Sequence[dict[str, Any]]) -> str:
    """Measured boundaries (seed geometric means) against the stage-2 predictions."""
    body = [
        (
            r["kind"],
            r["rule"],
            f"{r['d']:.0e}",
            r["n"],
            f"{r['mu_star_geomean']:.4g}",
            f"{r['log_mu_star_sd']:.3f}",
            f"{r['predicted']:.4g}",
            f"{r['model_error']:.2g}",
            f"{r['relative_error']:+.1%}",
            f"{r['bracketed_seeds']}/{r['seeds']}",
        )
        for r in summary
    ]
    header = (
        "boundary",
        "rule",
        "d",
        "n",
        "measured ‖μ‖*",
        "sd log",
        "predicted",
        "model error",
        "measured/predicted - 1",
        "seeds bracketed",
    )
    return "\nMeasured against the stage-2 predictions:\n\n" + markdown_table(header, body)


def local_slope_markdown(rows: Sequence[dict[str, Any]]) -> str:
    body = [
        (
            r["boundary"],
            r["variable"],
            f"{r['from']:g} → {r['to']:g}",
            f"{r['local_exponent']:.3f}",
            f"{r['theory']:g}",
        )
        for r in rows
    ]
    return (
        "\nLocal exponents between consecutive values (seed geometric means):\n\n"
        + markdown_table(("boundary", "variable", "between", "local b", "theory b"), body)
    )


def boundary_sweep(settings: BoundarySettings | None = None) -> Experiment:
    """Bisect every boundary; tables ``boundary_*``, record ``boundaries.json``, figure."""
    settings = settings or BoundarySettings()

    def compute(store: ResultStore, executor: Executor, progress: bool) -> ExperimentOutput:
        brackets, rows = bisect_boundaries(settings, store, executor, progress)
        predictions = boundary_predictions(settings, brackets)
        summary = summary_rows(brackets, predictions, settings.rule)
        exponents = [
            {"rule": settings.rule, **row}
            for row in exponent_rows(brackets, predictions=predictions)
        ]
        local = local_slope_rows(summary)
        return ExperimentOutput(
            tables={
                "boundary_points": rows,
                "boundary_estimates": bracket_rows(brackets),
                "boundary_summary": summary,
                "boundary_exponents": exponents,
                "boundary_local_exponents": local,
            },
            markdown={
                "boundary_exponents": exponent_markdown(exponents, settings)
                + prediction_markdown(summary)
                + local_slope_markdown(local)
            },
            record={"runs": len(rows), "exponents": exponents, "summary": summary},
        )

    largest = settings.config(
        max(settings.d_values + (settings.d_fixed,)),
        max(settings.n_values + (settings.n_fixed,)),
        20.0,
        0,
    )
    return Experiment("boundaries", settings, compute, figure_boundaries, largest)


__all__ = [
    "BoundarySettings",
    "Bracket",
    "bisect_boundaries",
    "boundary_sweep",
    "exponent_rows",
    "summary_rows",
    "bracket_rows",
    "boundary_predictions",
    "upper_side",
    "THEORY_EXPONENTS",
    "HARMFUL_BENIGN",
    "BENIGN_NOT",
]
