"""Figures 1-5 and the phase diagram, drawn from the tables that
:mod:`verify.experiments.reproduce` wrote.

Each function reads ``<out>/tables/*.csv`` and writes ``<out>/figures/<name>.png`` and
``.pdf``; nothing is taken from memory, so a figure can be redrawn from the files alone
(``python -m verify reproduce --out DIR --figures-only``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from verify.output.tables import read_table, select
from verify.plots.style import pyplot, save_figure

GROUP_COLOURS = {"R": "tab:green", "W+": "tab:blue", "W-": "tab:red", "I": "tab:gray"}
SPLIT_COLOURS = {"train": "tab:blue", "test": "tab:orange"}
REGIME_TITLES = {
    "harmful": "harmful overfitting",
    "benign": "benign overfitting",
    "not-overfitting": "not overfitting",
}
FIGURE_NUMBERS = {"harmful": 3, "benign": 4, "not-overfitting": 5}


def _regimes(table: Mapping[str, np.ndarray]) -> list[str]:
    seen: list[str] = []
    for name in table["regime"]:
        if name not in seen:
            seen.append(str(name))
    return seen


def _first_seed(table: Mapping[str, np.ndarray]) -> float:
    return float(np.min(table["seed"]))


def _preset_label(accuracy: Mapping[str, np.ndarray], regime: str) -> str:
    rows = select(accuracy, regime=regime)
    d, mu = int(rows["d"][0]), float(rows["mu_norm"][0])
    return f"d = {d}, ‖μ‖ = {mu:g}"


def figure_training(tables: Path, figures: Path, regime: str) -> list[Path]:
    """Figures 3-5: train/test loss and accuracy over steps (all seeds; the first seed
    bold), and the attention mass on each token group for one clean and one noisy sample."""
    plt = pyplot()
    history = select(read_table(tables / "presets_history"), regime=regime)
    attention = select(read_table(tables / "presets_attention"), regime=regime)
    accuracy = read_table(tables / "preset_accuracy")
    first = _first_seed(history)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for seed in np.unique(history["seed"]):
        rows = select(history, seed=seed)
        bold = seed == first
        for split in ("train", "test"):
            style = dict(
                color=SPLIT_COLOURS[split],
                lw=1.8 if bold else 0.6,
                alpha=1.0 if bold else 0.35,
                label=split if bold else None,
            )
            axes[0, 0].plot(rows["step"], rows[f"{split}_loss"], **style)
            axes[0, 1].plot(rows["step"], rows[f"{split}_accuracy"], **style)
    axes[0, 0].set(title="loss", xlabel="GD step", ylabel="logistic loss")
    axes[0, 1].set(title="accuracy", xlabel="GD step", ylabel="accuracy", ylim=(-0.02, 1.02))
    for axis in axes[0]:
        axis.legend()
    for axis, kind in zip(axes[1], ("clean", "noisy"), strict=True):
        rows = select(select(attention, seed=first), kind=kind)
        if rows["step"].size == 0:
            axis.set_axis_off()
            continue
        for group, colour in GROUP_COLOURS.items():
            part = select(rows, group=group)
            steps = np.unique(part["step"])
            mass = np.array([part["probability"][part["step"] == s].sum() for s in steps])
            axis.plot(
                steps,
                mass,
                color=colour,
                lw=1.8,
                label=f"{group} (group total)" if group == "I" else group,
            )
        sample = int(rows["sample"][0])
        axis.set(
            title=f"attention of {kind} training sample {sample} (seed {int(first)})",
            xlabel="GD step",
            ylabel="softmax probability",
            ylim=(-0.02, 1.02),
        )
        axis.legend(fontsize=8)
    number = FIGURE_NUMBERS.get(regime, 0)
    fig.suptitle(
        f"Figure {number}: {REGIME_TITLES.get(regime, regime)} ({_preset_label(accuracy, regime)})"
    )
    fig.tight_layout()
    return save_figure(fig, figures, f"fig{number}_{regime}")


def figure_saturation(tables: Path, figures: Path) -> list[Path]:
    """Figure 2: :math:`s_R(1-s_R)` of the relevant token per training sample over time
    (clean blue, noisy red; thick lines are the means), first seed."""
    plt = pyplot()
    table = read_table(tables / "presets_saturation")
    accuracy = read_table(tables / "preset_accuracy")
    regimes = _regimes(table)
    fig, axes = plt.subplots(1, len(regimes), figsize=(4.2 * len(regimes), 3.6), squeeze=False)
    first = _first_seed(table)
    for axis, regime in zip(axes[0], regimes, strict=True):
        rows = select(select(table, regime=regime), seed=first)
        for kind, colour in (("clean", "tab:blue"), ("noisy", "tab:red")):
            part = select(rows, kind=kind)
            steps = np.unique(part["step"])
            curves = [part["saturation"][part["sample"] == s] for s in np.unique(part["sample"])]
            for curve in curves:
                axis.plot(steps, curve, color=colour, lw=0.5, alpha=0.4)
            if curves:
                axis.plot(
                    steps,
                    np.mean(curves, axis=0),
                    color=colour,
                    lw=2.2,
                    label=f"{kind} (mean of {len(curves)})",
                )
        axis.set(
            title=f"{REGIME_TITLES.get(regime, regime)}\n{_preset_label(accuracy, regime)}",
            xlabel="GD step",
            ylabel=r"$s_R(1-s_R)$ of the relevant token",
        )
        axis.legend(fontsize=8)
    fig.suptitle("Figure 2: the factor that scales each sample's update")
    fig.tight_layout()
    return save_figure(fig, figures, "fig2_saturation")


def figure_selection(tables: Path, figures: Path) -> list[Path]:
    r"""Figure 1: the selected token (largest attention) of each sequence projected on
    :math:`\mu_{+1}` and :math:`\mu_{-1}` (in units of :math:`\|\mu\|^2`), training data
    (noisy samples marked x) above, test data below, at the end of training."""
    plt = pyplot()
    table = read_table(tables / "presets_selection")
    accuracy = read_table(tables / "preset_accuracy")
    regimes = _regimes(table)
    first = _first_seed(table)
    fig, axes = plt.subplots(2, len(regimes), figsize=(4.2 * len(regimes), 8), squeeze=False)
    for column, regime in enumerate(regimes):
        rows = select(select(table, regime=regime), seed=first)
        for row, split in enumerate(("train", "test")):
            axis = axes[row, column]
            part = select(rows, split=split)
            for label, colour in ((1.0, "tab:blue"), (-1.0, "tab:orange")):
                clean = (part["label"] == label) & (part["noisy"] == 0)
                noisy = (part["label"] == label) & (part["noisy"] == 1)
                size = 30 if split == "train" else 6
                axis.scatter(
                    part["proj_plus"][clean],
                    part["proj_minus"][clean],
                    s=size,
                    color=colour,
                    alpha=0.7,
                    label=f"y = {int(label):+d}",
                )
                if noisy.any():
                    axis.scatter(
                        part["proj_plus"][noisy],
                        part["proj_minus"][noisy],
                        s=70,
                        marker="x",
                        color=colour,
                        linewidths=2,
                        label=f"y = {int(label):+d}, noisy (flipped)",
                    )
            share = np.mean(part["group"] == "R") if part["group"].size else np.nan
            axis.axhline(0, color="k", lw=0.4)
            axis.axvline(0, color="k", lw=0.4)
            axis.set(
                title=f"{REGIME_TITLES.get(regime, regime)}, {split} "
                f"({_preset_label(accuracy, regime)})\nselects R: {share:.0%}",
                xlabel=r"$\langle x_{sel}, \mu_{+1}\rangle / \|\mu\|^2$",
                ylabel=r"$\langle x_{sel}, \mu_{-1}\rangle / \|\mu\|^2$",
            )
            axis.legend(fontsize=7, loc="upper right")
    fig.suptitle("Figure 1: the token each sequence selects, projected on the signals")
    fig.tight_layout()
    return save_figure(fig, figures, "fig1_selection")


def _grid(rows: Mapping[str, np.ndarray], value: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells' mean of ``value`` over seeds (NaN ignored; NaN where a cell has none),
    as a (mu, d) grid."""
    ds, columns = np.unique(rows["d"], return_inverse=True)
    mus, lines = np.unique(rows["mu_norm"], return_inverse=True)
    values = np.asarray(rows[value], dtype=float)
    present = ~np.isnan(values)
    sums, counts = np.zeros((mus.size, ds.size)), np.zeros((mus.size, ds.size))
    np.add.at(sums, (lines[present], columns[present]), values[present])
    np.add.at(counts, (lines[present], columns[present]), 1.0)
    with np.errstate(invalid="ignore"):
        return ds, mus, sums / counts


def _edges(centres: np.ndarray) -> np.ndarray:
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    middle = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[2 * centres[0] - middle[0]], middle, [2 * centres[-1] - middle[-1]]])


def _theory_lines(tables: Path) -> list[dict[str, Any]]:
    """The theory's boundary curves (table ``phase_theory``: boundary, label, d, mu_norm)."""
    path = tables / "phase_theory.csv"
    if not path.exists():
        return []
    rows = read_table(path)
    lines = []
    for boundary in dict.fromkeys(rows["boundary"]):
        chosen = select(rows, boundary=boundary)
        lines.append(
            {"d": chosen["d"], "mu_norm": chosen["mu_norm"], "label": str(chosen["label"][0])}
        )
    return lines


#: Heat maps drawn flat, as an image in vector files (a 39 x 39 grid as 1521 PDF paths per
#: panel takes seconds to write and to display).
MESH_STYLE = {"shading": "flat", "rasterized": True}


def figure_phase_diagram(
    tables: Path, figures: Path, presets: Sequence[tuple[str, float, float]] = ()
) -> list[Path]:
    """Phase diagram (Figure 4, right): final train/test loss and accuracy, the fraction
    of noisy samples fitted and the classified regime over (d, ||mu||), seed-averaged."""
    plt = pyplot()
    from matplotlib.colors import ListedColormap

    rows = read_table(tables / "phase_diagram")
    codes = {"harmful": 0.0, "benign": 1.0, "not-overfitting": 2.0}
    rows["regime_code"] = np.array([codes.get(str(r), np.nan) for r in rows["regime"]])
    panels = (
        ("train_loss", "final train loss", "viridis", None),
        ("population_test_loss", "final test loss (population)", "viridis", None),
        ("noisy_fitted", "fraction of noisy samples fitted", "magma", (0.0, 1.0)),
        (
            "population_test_selects_relevant",
            "test sequences selecting R (population)",
            "magma",
            (0.0, 1.0),
        ),
        ("population_test_accuracy", "final test accuracy (population)", "magma", (0.5, 1.0)),
        ("regime_code", "regime by token selection (seed-mean code)", None, None),
    )
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    n = int(rows["n"][0])
    theory_lines = _theory_lines(tables)
    for axis, (value, title, cmap, limits) in zip(axes.ravel(), panels, strict=True):
        ds, mus, grid = _grid(rows, value)
        x_edges, y_edges = _edges(ds), _edges(mus)
        if cmap is None:
            cmap = ListedColormap(["tab:red", "tab:green", "tab:blue"])
            mesh = axis.pcolormesh(
                x_edges, y_edges, grid, cmap=cmap, vmin=-0.5, vmax=2.5, **MESH_STYLE
            )
            bar = fig.colorbar(mesh, ax=axis, ticks=[0, 1, 2])
            bar.ax.set_yticklabels(["harmful", "benign", "not\noverfitting"])
        else:
            vmin, vmax = limits if limits else (None, None)
            mesh = axis.pcolormesh(
                x_edges, y_edges, grid, cmap=cmap, vmin=vmin, vmax=vmax, **MESH_STYLE
            )
            fig.colorbar(mesh, ax=axis)
        for line in theory_lines:
            axis.plot(line["d"], line["mu_norm"], "w--", lw=1, label=line["label"])
        for name, d, mu in presets:
            if not (x_edges[0] <= d <= x_edges[-1] and y_edges[0] <= mu <= y_edges[-1]):
                continue
            axis.plot(d, mu, marker="*", ms=13, color="white", mec="black")
            axis.annotate(
                name, (d, mu), textcoords="offset points", xytext=(5, 5), fontsize=8, color="white"
            )
        axis.set(
            title=title,
            xlabel="d",
            ylabel="‖μ‖",
            xlim=(x_edges[0], x_edges[-1]),
            ylim=(y_edges[0], y_edges[-1]),
        )
    axes[0, 0].legend(fontsize=7, loc="upper left")
    steps = int(np.nanmax(rows["steps"]))
    seeds = np.unique(rows["seed"]).size
    fig.suptitle(f"Phase diagram after {steps} GD steps (n = {n}, {seeds} seed(s) per cell)")
    fig.tight_layout()
    return save_figure(fig, figures, "phase_diagram")


def draw_reproduce_figures(tables: Path, figures: Path) -> list[Path]:
    """Every reproduce figure from the tables in ``tables`` into ``figures``."""
    accuracy = read_table(tables / "preset_accuracy")
    regimes = _regimes(accuracy)
    presets = [
        (
            r,
            float(select(accuracy, regime=r)["d"][0]),
            float(select(accuracy, regime=r)["mu_norm"][0]),
        )
        for r in regimes
    ]
    written = figure_selection(tables, figures) + figure_saturation(tables, figures)
    for regime in regimes:
        written += figure_training(tables, figures, regime)
    written += figure_phase_diagram(tables, figures, presets)
    return written


__all__ = [
    "draw_reproduce_figures",
    "figure_training",
    "figure_saturation",
    "figure_selection",
    "figure_phase_diagram",
]
