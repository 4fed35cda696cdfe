"""Collect the encoder's runs in this directory into Markdown tables (``tables.md``): the
paper's three settings with and without residuals (means over seeds), the grid's regimes
against the bare model's, the claim measures, and the timings. Reads only the files the
commands wrote here (``paper/``, ``grid/``, ``default/``, ``timing.json``).

    python results/encoder/collect.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import verify

HERE = Path(__file__).resolve().parent
GROUPS = ("R", "W+", "W-", "I")


def mean_sd(values: pd.Series) -> str:
    return (
        f"{values.mean():.3f} ± {values.std(ddof=1):.3f}"
        if len(values) > 1
        else f"{values.mean():.3f}"
    )


def counts(values: pd.Series) -> str:
    return ", ".join(f"{name} {count}" for name, count in values.value_counts().items())


def paper_table(paper: pd.DataFrame) -> str:
    lines = [
        "| d | ‖μ‖ | residuals | seeds | train acc | test acc | noisy fitted | encoder regimes "
        "| bare regimes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    masses = [
        "| d | ‖μ‖ | residuals | split | "
        + " | ".join(f"mass {g}" for g in GROUPS)
        + " | [CLS] self | "
        + " | ".join(f"selects {g}" for g in GROUPS)
        + " |",
        "|---|---|---|---|" + "---|" * (2 * len(GROUPS) + 1),
    ]
    for (d, mu, residual), part in paper.groupby(["d", "mu_norm", "residual"], sort=False):
        switch = "on" if residual else "off"
        lines.append(
            f"| {d} | {mu:g} | {switch} | {len(part)} | {mean_sd(part.train_accuracy)} "
            f"| {mean_sd(part.test_accuracy)} | {mean_sd(part.noisy_fitted)} "
            f"| {counts(part.regime)} | {counts(part.bare_regime)} |"
        )
        for split in ("clean", "noisy", "test"):
            mass = " | ".join(f"{part[f'attention_{split}_{g}'].mean():.3f}" for g in GROUPS)
            chosen = " | ".join(f"{part[f'select_{split}_{g}'].mean():.2f}" for g in GROUPS)
            cls = part[f"attention_{split}_cls"].mean()
            masses.append(f"| {d} | {mu:g} | {switch} | {split} | {mass} | {cls:.3f} | {chosen} |")
    return "\n".join(lines) + "\n\n" + "\n".join(masses)


def diagnostics_table(paper: pd.DataFrame) -> str:
    lines = [
        "| d | ‖μ‖ | residuals | noisy fitted | noisy fitted, attention uniform "
        "| test acc, attention uniform | attention-path share |",
        "|---|---|---|---|---|---|---|",
    ]
    for (d, mu, residual), part in paper.groupby(["d", "mu_norm", "residual"], sort=False):
        lines.append(
            f"| {d} | {mu:g} | {'on' if residual else 'off'} | {part.noisy_fitted.mean():.2f} "
            f"| {part.noisy_fitted_uniform.mean():.2f} | {part.test_accuracy_uniform.mean():.3f} "
            f"| {part.attention_path_share.mean():.3f} |"
        )
    return "\n".join(lines)


def grid_table(grid: pd.DataFrame) -> str:
    lines = ["| d | ‖μ‖ | encoder regimes | bare regimes | agree |", "|---|---|---|---|---|"]
    for (d, mu), part in grid.groupby(["d", "mu_norm"]):
        lines.append(
            f"| {d} | {mu:g} | {counts(part.regime)} | {counts(part.bare_regime)} "
            f"| {int(part.agree.sum())}/{len(part)} |"
        )
    return "\n".join(lines)


def claims_table(paper: pd.DataFrame) -> str:
    rows = paper.to_dict("records")
    lines = ["| claim | estimate | 95% interval | threshold | holds |", "|---|---|---|---|---|"]
    for claim in verify.ENCODER_CLAIMS.values():
        holds, measure = verify.claim_verdict(claim, rows)
        low, high = measure.interval
        lines.append(
            f"| {claim.text} | {measure.estimate:.3f} | [{low:.3f}, {high:.3f}] "
            f"| {claim.side} {claim.threshold:g} | {'yes' if holds else 'no'} |"
        )
    return "\n".join(lines)


def table(name: str) -> pd.DataFrame | None:
    """A grid table written here, or None when absent or empty."""
    path = HERE / name / "tables" / "encoder_grid.csv"
    if not path.is_file():
        return None
    frame = pd.read_csv(path)
    return frame if len(frame) else None


def default_table() -> str:
    """The single default run's summary (benign setting, seed 0, residuals on)."""
    path = HERE / "default" / "summary.json"
    if not path.is_file():
        return "(no default run here)"
    summary = json.loads(path.read_text())
    keys = ["train_accuracy", "test_accuracy", "noisy_fitted", "regime", "steps", "wall_seconds"]
    keys += [f"attention_{s}_{g}" for s in ("clean", "noisy", "test") for g in GROUPS]
    keys += [f"select_{s}_{g}" for s in ("clean", "noisy") for g in GROUPS]
    lines = ["| quantity | value |", "|---|---|"]
    for key in keys:
        value = summary[key]
        lines.append(
            f"| {key} | {value:.4g} |" if isinstance(value, float) else f"| {key} | {value} |"
        )
    return "\n".join(lines)


def main() -> None:
    parts = [
        "# The encoder's measurements (written by collect.py)",
        "## The default run (benign setting, seed 0, residuals on)",
        default_table(),
    ]
    paper = table("paper")
    if paper is not None:
        paper = paper.sort_values(["d", "residual"], ascending=[False, False])
        parts += [
            "## The paper's three settings (means ± sd over seeds)",
            paper_table(paper),
            "## Where the fit is stored (means over seeds)",
            diagnostics_table(paper),
            "## Claims at the benign setting (residuals on)",
            claims_table(paper),
        ]
    grid = table("grid")
    if grid is not None:
        parts += [
            "## Regimes on the grid, encoder against the bare model (residuals on)",
            grid_table(grid),
            "## Where the fit is stored on the grid (means over seeds)",
            diagnostics_table(grid),
        ]
    timing = HERE / "timing.json"
    if timing.is_file():
        parts += ["## Timings", "```json\n" + timing.read_text().strip() + "\n```"]
    (HERE / "tables.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
