r"""The max-margin figure: the cosine between :math:`q(t)` and the token-selection SVMs
against :math:`\log_{10}` steps, drawn from the tables of
:mod:`verify.experiments.max_margin`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verify.output.tables import read_table, select
from verify.plots.style import pyplot, save_figure

#: (column, label, line style) of the cosine panels.
COSINES = (
    ("cos_l2", "l2 SVM", "-"),
    ("cos_metric_A", "SVM in the metric A^-1 (A = W0^T W0)", "--"),
    ("cos_family_best", "best SVM in the metrics (A + cI)^-1", ":"),
)


def _by_seed(rows: dict[str, np.ndarray]):
    for seed in np.unique(rows["seed"]):
        yield select(rows, seed=seed)


def _draw_preset(top, bottom, rows: dict[str, np.ndarray], runs: dict[str, np.ndarray]) -> None:
    """One preset: cosines on ``top``; 1 - cos, its prediction and in-span part on
    ``bottom``; one line per seed."""
    for index, seed_rows in enumerate(_by_seed(rows)):
        first = index == 0
        x = seed_rows["log10_step"]
        for (key, label, style), colour in zip(COSINES, ("C0", "C1", "C2"), strict=True):
            top.plot(x, seed_rows[key], style, color=colour, label=label if first else None)
        run = select(runs, seed=seed_rows["seed"][0])
        predicted = run["misalignment_constant"][0] / (2 * seed_rows["q_norm"])
        for values, style, colour, label in (
            (seed_rows["one_minus_cos_l2"], "-", "C0", "1 - cos (l2)"),
            (predicted, "--", "k", "c_init / (2|q|)"),
            (seed_rows["one_minus_cos_in_span"], ":", "C3", "1 - cos within the tokens' span"),
        ):
            bottom.semilogy(x, values, style, color=colour, label=label if first else None)
    top.set_ylabel("cosine with the SVM direction")
    top.set_ylim(0.5, 1.0)
    bottom.set_xlabel("log10 GD steps (gradient flow)")
    bottom.set_ylabel("1 - cos")
    for axis in (top, bottom):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)


def figure_max_margin(tables: Path, figures: Path) -> list[Path]:
    """Per preset (columns): the cosines (top) and 1 - cos with its prediction
    c_init / (2|q|) and its in-span part (bottom, log scale)."""
    plt = pyplot()
    history = read_table(tables / "max_margin_history")
    runs = read_table(tables / "max_margin_runs")
    presets = list(dict.fromkeys(history["preset"].tolist()))
    fig, axes = plt.subplots(2, len(presets), figsize=(5.5 * len(presets), 8), squeeze=False)
    for column, name in enumerate(presets):
        _draw_preset(
            axes[0, column],
            axes[1, column],
            select(history, preset=name),
            select(runs, preset=name),
        )
        axes[0, column].set_title(name)
    fig.tight_layout()
    return save_figure(fig, figures, "max_margin")


__all__ = ["figure_max_margin"]
