"""Figures of the real-world grid, drawn from its tables (never from live runs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verify.output.tables import read_table, select
from verify.plots.reproduce import _pyplot, save_figure


def _datasets(table) -> list[str]:
    return sorted(set(table["dataset"].tolist()))


def figure_attention_over_epochs(tables: Path, figures: Path, eta: float = 0.1) -> list[Path]:
    """Per data set: mean maximum [CLS] attention, training loss and test accuracy against
    the epoch, one line per n (mean over seeds), at label noise ``eta``."""
    plt = _pyplot()
    history = read_table(tables / "realworld_history")
    datasets = _datasets(history)
    etas = np.unique(history["eta"])
    eta = float(etas[np.argmin(np.abs(etas - eta))])
    fig, axes = plt.subplots(3, len(datasets), figsize=(5 * len(datasets), 10), squeeze=False)
    for column, dataset in enumerate(datasets):
        rows = select(select(history, dataset=dataset), eta=eta)
        for n in np.unique(rows["n"]):
            run = select(rows, n=n)
            epochs = np.unique(run["epoch"])
            attention = [run["max_attention_train"][run["epoch"] == e].mean() for e in epochs]
            loss = [run["train_loss"][run["epoch"] == e].mean() for e in epochs]
            axes[0, column].plot(epochs, attention, label=f"n = {int(n)}")
            axes[1, column].semilogy(epochs, np.maximum(loss, 1e-8), label=f"n = {int(n)}")
            tested = np.isfinite(run["test_accuracy"])
            evaluated = np.unique(run["epoch"][tested])
            accuracy = [
                run["test_accuracy"][tested & (run["epoch"] == e)].mean() for e in evaluated
            ]
            axes[2, column].plot(evaluated, accuracy, "o-", ms=2, label=f"n = {int(n)}")
        axes[0, column].set_title(f"{dataset}, eta = {eta:g}")
        axes[0, column].set_ylabel("mean max [CLS] attention (train)")
        axes[1, column].set_ylabel("training loss (noisy labels)")
        axes[2, column].set_ylabel("test accuracy")
        axes[2, column].set_xlabel("epoch")
        axes[0, column].legend()
    fig.tight_layout()
    return save_figure(fig, figures, "realworld_attention_over_epochs")


def figure_noise_heatmap(tables: Path, figures: Path) -> list[Path]:
    """Per data set, over (n, eta), mean over seeds: test accuracy, its change against
    eta = 0 (red: lower), and the fraction of noisy labels fitted."""
    plt = _pyplot()
    summary = read_table(tables / "realworld_table2")
    datasets = _datasets(summary)
    panels = (
        ("test_accuracy", "test accuracy", "viridis", None),
        ("test_accuracy_minus_clean", "test accuracy minus eta = 0", "RdBu", "centred"),
        ("noisy_fitted", "noisy labels fitted", "magma", (0.0, 1.0)),
    )
    fig, axes = plt.subplots(
        len(panels), len(datasets), figsize=(5 * len(datasets), 10), squeeze=False
    )
    for column, dataset in enumerate(datasets):
        rows = select(summary, dataset=dataset)
        ns, etas = np.unique(rows["n"]), np.unique(rows["eta"])
        for row, (name, title, cmap, scale) in enumerate(panels):
            grid = np.full((ns.size, etas.size), np.nan)
            for i, n in enumerate(ns):
                for j, eta in enumerate(etas):
                    cell = select(select(rows, n=n), eta=eta)[name]
                    if cell.size:
                        grid[i, j] = cell[0]
            if scale == "centred":
                limit = max(float(np.nanmax(np.abs(grid))), 1e-3)
                scale = (-limit, limit)
            low, high = scale if scale else (None, None)
            axis = axes[row, column]
            image = axis.imshow(grid, aspect="auto", origin="lower", cmap=cmap, vmin=low, vmax=high)
            for (i, j), value in np.ndenumerate(grid):
                if np.isfinite(value):
                    red, green, blue, _ = image.cmap(image.norm(value))
                    bright = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
                    axis.text(
                        j,
                        i,
                        f"{value:.2f}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="k" if bright else "w",
                    )
            axis.set_xticks(range(etas.size), [f"{e:g}" for e in etas])
            axis.set_yticks(range(ns.size), [str(int(n)) for n in ns])
            axis.set_xlabel("label noise eta")
            axis.set_ylabel("n")
            axis.set_title(f"{dataset}: {title}")
            fig.colorbar(image, ax=axis)
    fig.tight_layout()
    return save_figure(fig, figures, "realworld_noise_heatmap")


def draw_realworld_figures(tables: Path, figures: Path) -> list[Path]:
    return figure_attention_over_epochs(tables, figures) + figure_noise_heatmap(tables, figures)
