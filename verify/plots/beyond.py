"""Figures beyond the paper: regime-boundary scaling and the exponential-time regime.

Drawn from the tables of :mod:`verify.experiments.boundaries` and
:mod:`verify.experiments.longtime`."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from theory.quadrature import LOG_SLOPE_PER_DECADE
from verify.output.tables import read_table, select
from verify.plots.style import pyplot, save_figure

BOUNDARY_COLOURS = {"harmful|benign": "tab:red", "benign|not-overfitting": "tab:blue"}


def figure_boundaries(tables: Path, figures: Path) -> list[Path]:
    """Boundary ||mu||* against d (left) and n (right), log-log: per-seed estimates (dots),
    geometric means, the fitted power law and the theory's slope through the data's centre."""
    plt = pyplot()
    estimates = read_table(tables / "boundary_estimates")
    exponents = read_table(tables / "boundary_exponents")
    points = read_table(tables / "boundary_points")
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    for axis, sweep in zip(axes[:2], ("d", "n"), strict=True):
        for kind, colour in BOUNDARY_COLOURS.items():
            rows = select(select(estimates, sweep=sweep), kind=kind)
            ok = rows["bracketed"] == 1
            x, y = rows[sweep][ok], rows["mu_star"][ok]
            if x.size == 0:
                continue
            axis.scatter(x, y, s=12, color=colour, alpha=0.5)
            xs = np.unique(x)
            means = np.array([np.exp(np.mean(np.log(y[x == v]))) for v in xs])
            axis.plot(xs, means, "o", color=colour, ms=7, label=f"{kind} (geometric mean)")
            fit = select(select(exponents, boundary=kind), variable=sweep)
            if fit["exponent"].size:
                b, c = float(fit["exponent"][0]), float(fit["prefactor"][0])
                theory = float(fit["theory"][0])
                line = np.geomspace(xs.min(), xs.max(), 50)
                axis.plot(
                    line,
                    c * line**b,
                    "-",
                    color=colour,
                    label=f"fit b = {b:.2f} [{fit['ci_low'][0]:.2f}, {fit['ci_high'][0]:.2f}]",
                )
                centre_x = math.exp(np.mean(np.log(xs)))
                centre_y = math.exp(np.mean(np.log(means)))
                axis.plot(
                    line,
                    centre_y * (line / centre_x) ** theory,
                    ":",
                    color=colour,
                    lw=2,
                    label=f"theory slope {theory:g}",
                )
        fixed = "n = 20" if sweep == "d" else "fixed d"
        axis.set(
            xscale="log",
            yscale="log",
            xlabel=sweep,
            ylabel="boundary ‖μ‖*",
            title=f"boundaries vs {sweep} ({fixed})",
        )
        values = np.unique(select(estimates, sweep=sweep)[sweep])
        axis.set_xticks(values, [f"{v:g}" for v in values])
        axis.minorticks_off()
        axis.legend(fontsize=7)
    axis = axes[2]
    colours = {"harmful": "tab:red", "benign": "tab:green", "not-overfitting": "tab:blue"}
    n_fixed = np.bincount(points["n"].astype(int)).argmax()
    rows = select(points, n=float(n_fixed))
    for regime, colour in colours.items():
        part = select(rows, regime=regime)
        axis.scatter(
            part["d"] * np.exp(0.04 * (part["seed"] - 2)),
            part["mu_norm"],
            s=8,
            color=colour,
            label=regime,
        )
    axis.set(
        xscale="log",
        yscale="log",
        xlabel="d (seeds offset)",
        ylabel="‖μ‖",
        title=f"every evaluated run, classified (n = {n_fixed})",
    )
    values = np.unique(rows["d"])
    axis.set_xticks(values, [f"{v:g}" for v in values])
    axis.minorticks_off()
    axis.legend(fontsize=7)
    steps = int(np.nanmax(points["steps"]))
    engine = str(points["engine"][0]) if "engine" in points else "reduced"
    fig.suptitle(
        f"Regime boundaries after {steps:.0e} steps (engine {engine}): bisection "
        "in log ‖μ‖ per seed"
    )
    fig.tight_layout()
    return save_figure(fig, figures, "boundaries")


def _log_steps(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    keep = rows["step"] >= 1
    return keep, np.log10(rows["step"][keep])


def figure_longtime(tables: Path, figures: Path) -> list[Path]:
    """Two figures. ``longtime_benign``: gaps, test accuracy and test loss against
    log10(step) for the first scanned configuration (every seed), with ln(10)-per-decade
    reference lines and the noisy-fitting step. ``longtime_scan``: test accuracy and test
    loss against log10(step) for every configuration (seed mean)."""
    plt = pyplot()
    history = read_table(tables / "longtime_history")
    summary = read_table(tables / "longtime_summary")
    labels = list(dict.fromkeys(str(v) for v in history["label"]))
    first = select(history, label=labels[0])
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    styles = {
        "clean_gap_min": ("tab:green", "-"),
        "clean_gap_mean": ("tab:green", "--"),
        "noisy_gap_min": ("tab:red", "-"),
        "noisy_gap_mean": ("tab:red", "--"),
    }
    for seed in np.unique(first["seed"]):
        rows = select(first, seed=seed)
        keep, x = _log_steps(rows)
        bold = seed == np.min(first["seed"])
        for name, (colour, line) in styles.items():
            axes[0].plot(
                x,
                rows[name][keep],
                line,
                color=colour,
                lw=1.6 if bold else 0.6,
                label=name.replace("_", " ") if bold else None,
            )
        axes[1].plot(x, rows["test_accuracy"][keep], color="tab:orange", lw=1.6 if bold else 0.6)
        axes[2].plot(x, rows["test_loss"][keep], color="tab:orange", lw=1.6 if bold else 0.6)
        fit = select(select(summary, label=labels[0]), seed=seed)["fit_step"]
        for axis in axes:
            if fit.size and np.isfinite(fit[0]) and fit[0] >= 1:
                axis.axvline(np.log10(fit[0]), color="gray", lw=0.6, ls=":")
    keep, x = _log_steps(first)
    anchor = np.nanmax(first["clean_gap_min"][keep])
    grid = np.linspace(x.min(), x.max(), 10)
    axes[0].plot(
        grid,
        anchor + LOG_SLOPE_PER_DECADE * (grid - x.max()),
        "k:",
        lw=1,
        label="slope ln 10 per decade",
    )
    axes[0].set(
        xlabel="log10 GD step",
        ylabel="attention gap (logit units)",
        title="gaps: Λ (clean, R leads) and Γ (noisy, W₋ leads)",
    )
    axes[0].legend(fontsize=7)
    axes[1].set(xlabel="log10 GD step", ylabel="test accuracy", title="test accuracy")
    axes[2].set(xlabel="log10 GD step", ylabel="test loss", title="test loss")
    fig.suptitle(f"{labels[0]}: gradient flow, every seed (dotted: all noisy samples fitted)")
    fig.tight_layout()
    written = save_figure(fig, figures, "longtime_benign")

    fig, axes = plt.subplots(1, 2, figsize=(15, 5.5))
    cmap = plt.get_cmap("tab20")
    for index, label in enumerate(labels):
        rows = select(history, label=label)
        steps = np.unique(rows["step"][rows["step"] >= 1])
        accuracy = [np.mean(rows["test_accuracy"][rows["step"] == s]) for s in steps]
        loss = [np.mean(rows["test_loss"][rows["step"] == s]) for s in steps]
        axes[0].plot(np.log10(steps), accuracy, color=cmap(index % 20), label=label)
        axes[1].plot(np.log10(steps), loss, color=cmap(index % 20))
    axes[0].set(
        xlabel="log10 GD step",
        ylabel="test accuracy (seed mean)",
        title="test accuracy over exponential time",
    )
    axes[1].set(xlabel="log10 GD step", ylabel="test loss (seed mean)", title="test loss")
    axes[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return written + save_figure(fig, figures, "longtime_scan")


__all__ = ["figure_boundaries", "figure_longtime"]
