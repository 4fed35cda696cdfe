"""Figures of the real-world experiments, drawn from their tables (never from live runs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verify.output.tables import read_table, select
from verify.plots.style import pyplot, save_figure

SHOWN = ("authors", "fullbatch-adam", "gd")
LINE = {"authors": "-", "fullbatch-adam": "--", "gd": ":"}


def _datasets(table) -> list[str]:
    return sorted(set(table["dataset"].tolist()))


def _nearest(values: np.ndarray, wanted: float) -> float:
    values = np.unique(values)
    return float(values[np.argmin(np.abs(values - wanted))])


def figure_over_epochs(tables: Path, figures: Path, eta: float = 0.1) -> list[Path]:
    """Per data set, at label noise ``eta``, mean over seeds against the epoch: test accuracy,
    fraction of noisy labels fitted, mean maximum attention of the query row; one line per
    (protocol, n)."""
    plt = pyplot()
    history = read_table(tables / "realworld_history")
    datasets = _datasets(history)
    eta = _nearest(history["eta"], eta)
    panels = (
        ("test_accuracy", "test accuracy"),
        ("noisy_fitted", "noisy labels fitted"),
        ("max_attention_train", "mean max attention (train)"),
    )
    fig, axes = plt.subplots(
        len(panels), len(datasets), figsize=(5 * len(datasets), 10), squeeze=False
    )
    for column, dataset in enumerate(datasets):
        rows = select(select(history, dataset=dataset), eta=eta)
        for label in [p for p in SHOWN if p in set(rows["protocol"].tolist())]:
            for n in np.unique(select(rows, protocol=label)["n"]):
                run = select(select(rows, protocol=label), n=n)
                epochs = np.unique(run["epoch"])
                for row, (name, title) in enumerate(panels):
                    values = [np.nanmean(run[name][run["epoch"] == e]) for e in epochs]
                    axes[row, column].plot(
                        np.maximum(epochs, 0.5), values, LINE[label], label=f"{label}, n = {int(n)}"
                    )
                    axes[row, column].set_ylabel(title)
        for row in range(len(panels)):
            axes[row, column].set_xscale("log")
        axes[0, column].set_title(f"{dataset}, eta = {eta:g}")
        axes[-1, column].set_xlabel("epoch (0 drawn at 0.5)")
        axes[0, column].legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, figures, "realworld_over_epochs")


def figure_protocol_changes(tables: Path, figures: Path) -> list[Path]:
    """Per data set: the paired test-accuracy change against eta = 0 (final epoch) for each
    protocol (rows) and (n, eta) (columns), with its verdict's initial."""
    plt = pyplot()
    summary = read_table(tables / "realworld_summary")
    noisy = {k: v[summary["eta"] > 0] for k, v in summary.items()}
    datasets = _datasets(noisy)
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4), squeeze=False)
    for axis, dataset in zip(axes[0], datasets, strict=True):
        rows = select(noisy, dataset=dataset)
        labels = list(dict.fromkeys(rows["protocol"].tolist()))
        cells = sorted(set(zip(rows["n"].tolist(), rows["eta"].tolist(), strict=True)))
        grid = np.full((len(labels), len(cells)), np.nan)
        for i, label in enumerate(labels):
            for j, (n, eta) in enumerate(cells):
                entry = select(select(select(rows, protocol=label), n=n), eta=eta)
                if entry["final_change"].size:
                    grid[i, j] = entry["final_change"][0]
                    axis.text(
                        j,
                        i,
                        str(entry["final_verdict"][0])[:4],
                        ha="center",
                        va="center",
                        fontsize=7,
                    )
        limit = max(float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 0, 1e-3)
        image = axis.imshow(grid, aspect="auto", cmap="RdBu", vmin=-limit, vmax=limit)
        axis.set_yticks(range(len(labels)), labels, fontsize=7)
        axis.set_xticks(
            range(len(cells)), [f"{int(n)}, {eta:g}" for n, eta in cells], rotation=45, fontsize=7
        )
        axis.set_xlabel("n, eta")
        axis.set_title(f"{dataset}: test accuracy minus eta = 0")
        fig.colorbar(image, ax=axis)
    fig.tight_layout()
    return save_figure(fig, figures, "realworld_protocol_changes")


def draw_realworld_figures(tables: Path, figures: Path) -> list[Path]:
    return figure_over_epochs(tables, figures) + figure_protocol_changes(tables, figures)
