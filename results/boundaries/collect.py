"""Collect the sweeps of this directory into two Markdown tables (``tables.md``):
measured against predicted boundaries over (d, n, horizon), and the exponents under both
harmful|benign rules. Reads only the CSV tables the sweeps wrote here.

    python results/boundaries/collect.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
TARGET = 0.15


def sweeps() -> list[tuple[str, dict, Path]]:
    found = []
    for record in sorted(HERE.glob("*/boundaries.json")):
        found.append(
            (record.parent.name, json.loads(record.read_text())["settings"], record.parent)
        )
    return found


def cell(value: float, form: str) -> str:
    return "–" if not math.isfinite(value) else format(value, form)


def prediction_table() -> str:
    lines = [
        "| boundary | rule | engine | steps | d | n | measured ‖μ‖* (sd log) "
        "| predicted (model error) | measured/predicted − 1 | within 15% |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    seen = set()
    for _name, settings, folder in sweeps():
        table = pd.read_csv(folder / "boundary_summary.csv")
        for r in table.itertuples():
            key = (r.kind, r.rule, settings["engine"], settings["steps"], r.d, r.n)
            if key in seen:
                continue
            seen.add(key)
            error = float(r.relative_error)
            verdict = (
                "–" if not math.isfinite(error) else ("yes" if abs(error) <= TARGET else "**no**")
            )
            lines.append(
                f"| {r.kind.replace('|', '/')} | {r.rule} | {settings['engine']} | "
                f"{settings['steps']:.0e} | "
                f"{r.d:.0e} | {r.n} | {cell(r.mu_star_geomean, '.4g')} "
                f"({cell(r.log_mu_star_sd, '.3f')}) "
                f"| {cell(r.predicted, '.4g')} ({cell(r.model_error, '.2g')}) | "
                f"{cell(100 * error, '+.1f')}% | {verdict} |"
            )
    return "\n".join(lines) + "\n"


def exponent_table() -> str:
    lines = [
        "| boundary | rule | engine | steps | law | fitted b | 95% CI (t) | 95% CI (bootstrap) "
        "| theory b | stage-2 prediction's b | points | R² |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    seen = set()
    for _name, settings, folder in sweeps():
        table = pd.read_csv(folder / "boundary_exponents.csv")
        for r in table.itertuples():
            rule = r.rule if r.boundary == "harmful|benign" else "noisy fitted"
            key = (r.boundary, rule, settings["engine"], settings["steps"], r.variable)
            if key in seen:
                continue
            seen.add(key)
            lines.append(
                f"| {r.boundary.replace('|', '/')} | {rule} | {settings['engine']} | "
                f"{settings['steps']:.0e} | "
                f"‖μ‖* ∝ {r.variable}^b ({r.fixed}) | {r.exponent:.3f} | "
                f"[{r.ci_low:.3f}, {r.ci_high:.3f}] | "
                f"[{r.bootstrap_low:.3f}, {r.bootstrap_high:.3f}] "
                f"| {r.theory:g} | {cell(r.predicted_exponent, '.3f')} | {r.points} "
                f"| {r.r_squared:.3f} |"
            )
    return "\n".join(lines) + "\n"


def restricted_exponent_table(low: float = 1e3) -> str:
    """Exponents in d refitted over d >= ``low`` (per-seed estimates; predictions over the
    same d), to leave out d = 100 < nT."""
    from verify.experiments.fits import bootstrap_exponent, fit_power_law

    lines = [
        f"| boundary | rule | engine | steps | fitted b (d ≥ {low:.0e}) | 95% CI (t) "
        "| 95% CI (bootstrap) | stage-2 prediction's b | points |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    seen = set()
    for _name, settings, folder in sweeps():
        if not settings["d_values"]:
            continue
        estimates = pd.read_csv(folder / "boundary_estimates.csv")
        summary = pd.read_csv(folder / "boundary_summary.csv")
        for kind, group in estimates[estimates.d >= low].groupby("kind"):
            rule = settings["rule"] if kind == "harmful|benign" else "noisy fitted"
            key = (kind, rule, settings["engine"], settings["steps"])
            kept = group[group.bracketed == 1]
            if key in seen or kept.empty:
                continue
            seen.add(key)
            fit = fit_power_law(kept.d, kept.mu_star)
            replicates = {float(d): list(g.mu_star) for d, g in kept.groupby("d")}
            boot = bootstrap_exponent(replicates, 2000, 0.95)
            rows = summary[(summary.kind == kind) & (summary.d.isin(list(replicates)))]
            predicted = fit_power_law(rows.d, rows.predicted).exponent
            lines.append(
                f"| {kind.replace('|', '/')} | {rule} | {settings['engine']} | "
                f"{settings['steps']:.0e} | {fit.exponent:.3f} | "
                f"[{fit.ci_low:.3f}, {fit.ci_high:.3f}] | [{boot[0]:.3f}, {boot[1]:.3f}] | "
                f"{cell(predicted, '.3f')} | {fit.n_points} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    text = "## Measured against predicted\n\n" + prediction_table()
    text += "\n## Exponents\n\n" + exponent_table()
    text += "\n### Exponents in d without d = 100\n\n" + restricted_exponent_table()
    (HERE / "tables.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
