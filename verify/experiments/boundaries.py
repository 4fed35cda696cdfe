r"""Regime boundaries from simulation, by bisection in log ||mu||, and their exponents.

Two boundaries, each a threshold crossing of a measured final-state quantity as
:math:`\|\mu\|` grows at fixed :math:`(d, n)` and seed:

* harmful | benign: test accuracy :math:`A_{\text{test}}` reaches :math:`A^*`
  (default 0.95) from below;
* benign | not-overfitting: the fraction of noisy training samples fitted,
  :math:`\phi_N`, drops below :math:`\phi^\circ` (default 1/2) from above.

For each seed, a bracket :math:`[\mu_{lo}, \mu_{hi}]` that straddles the crossing is
halved ``rounds`` times in :math:`\log\|\mu\|`; the estimate is the geometric midpoint
:math:`\mu^* = \sqrt{\mu_{lo}\mu_{hi}}` (resolution :math:`(\mu_{hi}/\mu_{lo})^{2^{-R-1}}`).
All brackets of one round run as one resumable sweep. Exponents of
:math:`\mu^* \propto d^{b}` (at fixed n) and :math:`\mu^* \propto n^{c}` (at fixed d) come
from :func:`verify.experiments.fits.fit_power_law` on the per-seed estimates (t interval) and from
:func:`verify.experiments.fits.bootstrap_exponent` over seeds. Theory:
harmful | benign :math:`\|\mu\| \sim d^{1/4}`; benign | not :math:`\|\mu\| \sim \sqrt{d/n}`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from verify.checks.regimes import regimes_of
from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.fits import bootstrap_exponent, fit_power_law
from verify.experiments.settings import BoundarySettings
from verify.experiments.sweep import Executor, ResultStore, point_key, run_sweep
from verify.experiments.workers import final_state
from verify.output.tables import markdown_table, number

HARMFUL_BENIGN = "harmful|benign"
BENIGN_NOT = "benign|not-overfitting"

#: Exponents the theory states: (boundary, variable) -> exponent.
THEORY_EXPONENTS = {
    (HARMFUL_BENIGN, "d"): 0.25,
    (BENIGN_NOT, "d"): 0.5,
    (BENIGN_NOT, "n"): -0.5,
    (HARMFUL_BENIGN, "n"): 0.0,
}
THEORY_NOTES = {
    (HARMFUL_BENIGN, "d"): "SNR² ≍ d^{-1/2} (A2, Remark 4.2)",
    (BENIGN_NOT, "d"): "n SNR² ≍ 1 (Theorem 4.1)",
    (BENIGN_NOT, "n"): "n SNR² ≍ 1 (Theorem 4.1)",
    (HARMFUL_BENIGN, "n"): "no n in SNR² ≍ d^{-1/2} (package's reading)",
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
    """Whether a run lies on the large-||mu|| side of boundary ``kind``."""
    if kind == HARMFUL_BENIGN:
        return number(result.get("test_accuracy")) >= settings.thresholds.test_accuracy
    return number(result.get("noisy_fitted")) < settings.fitted_level


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


def bisect_boundaries(
    settings: BoundarySettings, store: ResultStore, executor: Executor, progress: bool = True
) -> tuple[list[Bracket], list[dict[str, Any]]]:
    """Run every bisection; return the brackets and every evaluated run (as rows)."""
    brackets = [
        Bracket(kind, sweep, d, n, seed, *bounds)
        for sweep, d, n in settings.cases()
        for seed in range(settings.seeds)
        for kind, bounds in (
            (HARMFUL_BENIGN, settings.harmful_bracket),
            (BENIGN_NOT, settings.overfit_bracket),
        )
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
    rows = []
    for (d, n, mu, seed), result in sorted(evaluated.items()):
        noisy, test = number(result.get("noisy_fitted")), number(result.get("test_accuracy"))
        rows.append(
            {
                "d": d,
                "n": n,
                "mu_norm": mu,
                "seed": seed,
                "steps": result.get("step"),
                "engine": settings.engine,
                "train_accuracy": number(result.get("train_accuracy")),
                "test_accuracy": test,
                "noisy_fitted": noisy,
                "clean_fitted": number(result.get("clean_fitted")),
                "train_loss": number(result.get("train_loss")),
                "test_loss": number(result.get("test_loss")),
                "regime": regimes_of(result, settings.thresholds)["regime"],
                "regime_practical": regimes_of(result, settings.thresholds)["regime_practical"],
                "status": result.get("status", ""),
            }
        )
    return brackets, rows


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


def summary_rows(brackets: Sequence[Bracket]) -> list[dict[str, Any]]:
    """Per (kind, sweep, d, n): geometric mean and sd of log mu* over seeds."""
    rows = []
    keys = sorted({(b.kind, b.sweep, b.d, b.n) for b in brackets})
    for kind, sweep, d, n in keys:
        group = [b for b in brackets if (b.kind, b.sweep, b.d, b.n) == (kind, sweep, d, n)]
        logs = np.log([b.estimate for b in group if b.bracketed])
        rows.append(
            {
                "kind": kind,
                "sweep": sweep,
                "d": d,
                "n": n,
                "mu_star_geomean": float(np.exp(logs.mean())) if logs.size else math.nan,
                "log_mu_star_sd": float(logs.std(ddof=1)) if logs.size > 1 else math.nan,
                "bracketed_seeds": int(logs.size),
                "seeds": len(group),
                "notes": "; ".join(sorted({b.note for b in group if b.note})),
            }
        )
    return rows


def exponent_rows(
    brackets: Sequence[Bracket], confidence: float = 0.95, repetitions: int = 2000
) -> list[dict[str, Any]]:
    """Fitted exponent of mu* in d (d-sweep) and in n (n-sweep), next to theory."""
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
                    "points": fit.n_points,
                    "values": len(replicates),
                    "r_squared": fit.r_squared,
                    "prefactor": fit.prefactor,
                }
            )
    return rows


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
        "points",
        "R²",
    )
    note = (
        f"\n{settings.steps} steps, engine {settings.engine}, seeds 0..{settings.seeds - 1}, "
        f"{settings.rounds} bisection rounds in log ‖μ‖; harmful|benign: test accuracy "
        f"crosses {settings.thresholds.test_accuracy}; benign|not: fraction of noisy "
        f"samples fitted drops below {settings.fitted_level}.\n"
    )
    return markdown_table(header, body) + note


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
        summary = summary_rows(brackets)
        exponents = exponent_rows(brackets)
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
                + local_slope_markdown(local)
            },
            record={"runs": len(rows), "exponents": exponents},
        )

    def draw(tables: Path, figures: Path) -> list[Path]:
        from verify.plots.beyond import figure_boundaries

        return figure_boundaries(tables, figures)

    largest = settings.config(
        max(settings.d_values + (settings.d_fixed,)),
        max(settings.n_values + (settings.n_fixed,)),
        20.0,
        0,
    )
    return Experiment("boundaries", settings, compute, draw, largest)


__all__ = [
    "BoundarySettings",
    "Bracket",
    "bisect_boundaries",
    "boundary_sweep",
    "exponent_rows",
    "summary_rows",
    "bracket_rows",
    "THEORY_EXPONENTS",
    "HARMFUL_BENIGN",
    "BENIGN_NOT",
]
