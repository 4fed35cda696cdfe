"""Figures of encoder runs, drawn from the written tables only (``history.csv``,
``config.json``), so that they can be redrawn from the files alone.

* ``attention.png``: the [CLS] attention mass on each token group over training, clean
  training samples on the left, noisy ones on the right (means over the samples), with
  the [CLS] token's attention to itself dashed;
* ``accuracy.png``: training and test accuracy over training.

:func:`plot_residual_comparison` draws several runs' attention (e.g. with and without the
residual connections) in one figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from theory.foundation.data_model import GROUP_NAMES
from verify.encoder.observables import read_encoder_history
from verify.output.files import read_json
from verify.plots.reproduce import GROUP_COLOURS, SPLIT_COLOURS
from verify.plots.style import pyplot, save_figure

SPLIT_TITLES = {"clean": "clean training samples", "noisy": "noisy training samples"}


def run_title(out: Path) -> str:
    """``d, ||mu||, residuals on/off, seed`` from a run's ``config.json``."""
    record = read_json(out / "config.json")
    model = record["config"]["run"]["model"]
    residual = record["config"]["encoder"]["residual"]
    return (
        f"d = {model['d']}, ||mu|| = {model['mu_norm']:g}, residuals "
        f"{'on' if residual else 'off'}, seed {record['seed']}"
    )


def draw_attention(axis: Any, history: Mapping[str, np.ndarray], split: str, style: str) -> None:
    """The groups' mean attention mass over training for ``split`` on ``axis``."""
    steps = history["step"]
    for name in GROUP_NAMES:
        values = history[f"attention_{split}_{name}"]
        axis.plot(steps, values, style, color=GROUP_COLOURS[name], label=name)
    axis.plot(steps, history[f"attention_{split}_cls"], ":", color="black", label="[CLS]")
    axis.set_ylim(-0.02, 1.02)
    axis.set_xlabel("step")


def plot_run(out: str | Path) -> list[Path]:
    """``attention.png`` and ``accuracy.png`` (and PDFs) of the run in ``out``."""
    out = Path(out)
    history = read_encoder_history(out / "history.csv")
    plt, title = pyplot(), run_title(out)
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for axis, split in zip(axes, SPLIT_TITLES, strict=True):
        draw_attention(axis, history, split, "-")
        axis.set_title(SPLIT_TITLES[split])
    axes[0].set_ylabel("[CLS] attention mass")
    axes[1].legend(loc="center right", fontsize=8)
    figure.suptitle(f"encoder: {title}", fontsize=10)
    figure.tight_layout()
    written = save_figure(figure, out, "attention")
    figure, axis = plt.subplots(figsize=(5.5, 3.8))
    for split in ("train", "test"):
        values = history[f"{split}_accuracy"]
        shown = np.isfinite(values)
        axis.plot(history["step"][shown], values[shown], ".-", color=SPLIT_COLOURS[split])
        axis.lines[-1].set_label(split)
    axis.set_xlabel("step")
    axis.set_ylabel("accuracy")
    axis.set_ylim(-0.02, 1.02)
    axis.legend()
    axis.set_title(f"encoder: {title}", fontsize=9)
    figure.tight_layout()
    return written + save_figure(figure, out, "accuracy")


def plot_residual_comparison(
    runs: Sequence[tuple[str, Mapping[str, np.ndarray]]], out: str | Path, name: str
) -> list[Path]:
    """Rows of (clean, noisy) attention panels, one row per ``(label, history)``."""
    plt = pyplot()
    rows = max(len(runs), 1)
    figure, axes = plt.subplots(rows, 2, figsize=(10, 2.8 * rows), sharey=True, squeeze=False)
    for (label, history), pair in zip(runs, axes, strict=False):
        for axis, split in zip(pair, SPLIT_TITLES, strict=True):
            draw_attention(axis, history, split, "-")
            axis.set_title(f"{label}: {SPLIT_TITLES[split]}", fontsize=9)
        pair[0].set_ylabel("attention mass")
    axes[0][1].legend(loc="center right", fontsize=7)
    figure.tight_layout()
    return save_figure(figure, Path(out), name)


def finite_mean(values: Sequence[float]) -> float:
    kept = [v for v in values if math.isfinite(v)]
    return float(np.mean(kept)) if kept else math.nan


__all__ = ["plot_run", "plot_residual_comparison", "draw_attention", "run_title", "finite_mean"]
