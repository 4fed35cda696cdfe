"""Figures of the real-world experiments, drawn from their tables (never from live runs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verify.output.tables import read_table, select
from verify.plots.style import pyplot, save_figure
from verify.realworld.report import INITIALS, heatmap_name

SHOWN = ("authors", "fullbatch-adam", "gd")
#: The grid's noise levels above 0 (a sweep over eta has its own figure).
GRID_NOISY_ETAS = (0.1, 0.2)
LINE = {"authors": "-", "fullbatch-adam": "--", "gd": ":"}


def base_of(label: str) -> str:
    """The named protocol a variant label starts from (``authors[epochs=3]``: authors)."""
    return label.split("[")[0].split("+")[0]


def _datasets(table) -> list[str]:
    return sorted(set(table["dataset"].tolist()))


def _nearest(values: np.ndarray, wanted: float) -> float:
    values = np.unique(values)
    return float(values[np.argmin(np.abs(values - wanted))])


def figure_over_epochs(tables: Path, figures: Path, eta: float = 0.1) -> list[Path]:
    """Per data set, at label noise ``eta``, mean over seeds against the epoch: test accuracy,
    fraction of noisy labels fitted, mean maximum attention of the query row; one line per
    (protocol variant, n), the line style by the named protocol it starts from."""
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
        present = dict.fromkeys(rows["protocol"].tolist())
        for label in [p for p in present if base_of(p) in SHOWN]:
            for n in np.unique(select(rows, protocol=label)["n"]):
                run = select(select(rows, protocol=label), n=n)
                epochs = np.unique(run["epoch"])
                for row, (name, title) in enumerate(panels):
                    values = [np.nanmean(run[name][run["epoch"] == e]) for e in epochs]
                    axes[row, column].plot(
                        np.maximum(epochs, 0.5),
                        values,
                        LINE[base_of(label)],
                        label=f"{label}, n = {int(n)}",
                    )
                    axes[row, column].set_ylabel(title)
        for row in range(len(panels)):
            axes[row, column].set_xscale("log")
            axes[row, column].set_xlabel("epoch (0 drawn at 0.5)")
        axes[0, column].set_title(f"{dataset}, eta = {eta:g}")
        axes[0, column].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return save_figure(fig, figures, "realworld_over_epochs")


def figure_protocol_changes(tables: Path, figures: Path) -> list[Path]:
    """Per data set: the paired test-accuracy change against eta = 0 (final epoch) for each
    protocol (rows) and (n, eta) (columns), with its verdict's initial."""
    plt = pyplot()
    summary = read_table(tables / "realworld_summary")
    grid = (summary["eta"] > 0) & np.isin(summary["eta"], GRID_NOISY_ETAS)
    noisy = {k: v[grid] for k, v in summary.items()}
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
        axis.set_ylabel("protocol")
        axis.set_title(f"{dataset}: test accuracy minus eta = 0")
        fig.colorbar(image, ax=axis)
    fig.tight_layout()
    return save_figure(fig, figures, "realworld_protocol_changes")


LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.7, "linewidth": 0}
#: The heat maps of a sweep over eta: (column, title, colour map, fixed range or None).
HEATMAP_PANELS = (
    ("final_change", "test accuracy minus eta = 0 (paired by seed), verdict", "RdBu", None),
    ("test_accuracy", "test accuracy", "viridis", None),
    ("noisy_fitted", "share of flipped labels fitted", "magma", (0.0, 1.0)),
)


def figure_eta_heatmaps(tables: Path, figures: Path) -> list[Path]:
    """Per sweep over eta (protocol, n): heat maps data set x eta of the paired accuracy
    change with each verdict's initial, the test accuracy and the flipped labels fitted
    (final epoch, mean over seeds), and the accuracy against eta with its spread."""
    path = tables / "realworld_eta_sweep.csv"
    if not path.is_file():
        return []
    sweep = read_table(path)
    drawn = []
    sweeps = set(zip(sweep["protocol"].tolist(), sweep["n"].tolist(), strict=True))
    for protocol, n in sorted(sweeps):
        rows = select(select(sweep, protocol=protocol), n=n)
        drawn += _heatmap_figure(rows, figures, str(protocol), int(n))
    return drawn


def _heatmap_figure(rows, figures: Path, protocol: str, n: int) -> list[Path]:
    plt = pyplot()
    datasets, etas = _datasets(rows), np.unique(rows["eta"])
    fig, axes = plt.subplots(len(HEATMAP_PANELS) + 1, 1, figsize=(12, 13))
    for axis, (column, title, colours, limits) in zip(axes[:-1], HEATMAP_PANELS, strict=True):
        grid = _grid(rows, datasets, etas, column)
        if limits is None and column == "final_change":
            spread = max(float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 0, 1e-3)
            limits = (-spread, spread)
        low, high = limits or (np.nanmin(grid), np.nanmax(grid))
        image = axis.imshow(grid, aspect="auto", cmap=colours, vmin=low, vmax=high)
        labels = _grid(
            rows, datasets, etas, "final_verdict" if column == "final_change" else column
        )
        for (i, j), value in np.ndenumerate(labels):
            axis.text(j, i, _label(value), ha="center", va="center", fontsize=6, bbox=LABEL_BOX)
        axis.set_yticks(range(len(datasets)), datasets)
        axis.set_xticks(range(len(etas)), [f"{eta:g}" for eta in etas], fontsize=7)
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("eta (label-noise rate)", fontsize=8)
        axis.set_ylabel("data set", fontsize=8)
        fig.colorbar(image, ax=axis, fraction=0.03)
    _accuracy_lines(axes[-1], rows, datasets)
    fig.suptitle(f"{protocol}, n = {n}: test accuracy against eta, every data set (final epoch)")
    fig.tight_layout()
    return save_figure(fig, figures, heatmap_name(protocol, n))


def _grid(rows, datasets: list[str], etas: np.ndarray, column: str) -> np.ndarray:
    text = rows[column].dtype == object
    grid = np.full(
        (len(datasets), len(etas)), "" if text else np.nan, dtype=object if text else float
    )
    for i, dataset in enumerate(datasets):
        for j, eta in enumerate(etas):
            cell = select(select(rows, dataset=dataset), eta=eta)[column]
            if cell.size:
                grid[i, j] = cell[0]
    return grid


def _label(value) -> str:
    if isinstance(value, str):
        return INITIALS.get(value, "")
    return "" if not np.isfinite(value) else f"{value:.2f}".replace("0.", ".", 1)


def _accuracy_lines(axis, rows, datasets: list[str]) -> None:
    for dataset in datasets:
        part = select(rows, dataset=dataset)
        order = np.argsort(part["eta"])
        eta, mean = part["eta"][order], part["test_accuracy"][order]
        spread = np.nan_to_num(part["test_accuracy_sd"][order])
        axis.plot(eta, mean, marker="o", markersize=3, label=dataset)
        axis.fill_between(eta, mean - spread, mean + spread, alpha=0.2)
    axis.set_xlabel("eta (label-noise rate)")
    axis.set_ylabel("test accuracy (mean ± sd over seeds)")
    axis.legend(fontsize=8)


def draw_realworld_figures(tables: Path, figures: Path) -> list[Path]:
    return (
        figure_over_epochs(tables, figures)
        + figure_protocol_changes(tables, figures)
        + figure_eta_heatmaps(tables, figures)
    )
