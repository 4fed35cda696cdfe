"""The grid's table, its JSON record and its figures, from the sweep's records.

``encoder_grid.csv``: one row per encoder run (d, ||mu||, seed, residual) with its final
measurements and diagnostics, and the bare model's at the same (d, ||mu||, seed) under
``bare_*``; ``agree`` says whether the two regimes (same rule) are the same.
``encoder_grid.json``: the grid settings, the per-setting regime counts, wall times and
provenance. Figures: ``regimes.png`` (per setting, the encoder's and the bare model's
regime counts over seeds) and, for the paper's settings, ``trajectories.png`` (the [CLS]
attention over training, means over seeds, with and without residuals).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from verify.measures.regimes import REGIMES, classify_regime

ENCODER_COLUMNS = (
    "train_accuracy",
    "test_accuracy",
    "clean_fitted",
    "noisy_fitted",
    "test_selects_relevant",
    "regime",
    "clean_fitted_uniform",
    "noisy_fitted_uniform",
    "test_accuracy_uniform",
    "attention_path_share",
    "wall_seconds",
)
BARE_COLUMNS = ("train_accuracy", "test_accuracy", "noisy_fitted", "test_selects_relevant")


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def setting_key(config: Mapping[str, Any]) -> tuple[int, float, int]:
    run = config["run"] if "run" in config else config
    return int(run["model"]["d"]), float(run["model"]["mu_norm"]), int(run["seed"])


def bare_row(result: Mapping[str, Any]) -> dict[str, Any]:
    """The bare model's final measurements, classified by the encoder's rule (the test
    set's selection share)."""
    row: dict[str, Any] = {f"bare_{key}": _number(result.get(key)) for key in BARE_COLUMNS}
    row["bare_regime"] = classify_regime(
        row["bare_noisy_fitted"], row["bare_test_selects_relevant"]
    )
    return row


def grid_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per encoder run, joined with the bare run of the same setting and seed."""
    bare = {
        setting_key(r["point"]["config"]): bare_row(r["result"])
        for r in records
        if r["point"]["kind"] == "bare"
    }
    rows = []
    for record in records:
        if record["point"]["kind"] != "encoder":
            continue
        result, config = record["result"], record["point"]["config"]
        d, mu, seed = setting_key(config)
        row: dict[str, Any] = {"d": d, "mu_norm": mu, "seed": seed}
        row["residual"] = bool(config["encoder"]["residual"])
        for key in ENCODER_COLUMNS:
            row[key] = result.get(key) if key == "regime" else _number(result.get(key))
        for key, value in result.items():
            if key.startswith(("attention_", "select_")):
                row[key] = _number(value)
        row.update(bare.get((d, mu, seed), {}))
        row["agree"] = row.get("bare_regime") == row["regime"]
        rows.append(row)
    return sorted(rows, key=lambda r: (r["d"], r["mu_norm"], not r["residual"], r["seed"]))


def regime_counts(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (d, ||mu||, residual): how many seeds fall in each regime, encoder and bare."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["d"], row["mu_norm"], row["residual"]), []).append(row)
    out = []
    for (d, mu, residual), members in groups.items():
        encoder = Counter(str(r["regime"]) for r in members)
        bare = Counter(str(r.get("bare_regime")) for r in members)
        out.append(
            {
                "d": d,
                "mu_norm": mu,
                "residual": residual,
                "seeds": len(members),
                "encoder": dict(encoder),
                "bare": dict(bare),
                "agree": sum(bool(r["agree"]) for r in members),
            }
        )
    return out


def majority(counts: Mapping[str, int]) -> str:
    return max(counts, key=lambda name: (counts[name], name)) if counts else "unknown"


REGIME_COLOURS = {
    "harmful": "tab:red",
    "benign": "tab:green",
    "not-overfitting": "tab:blue",
    "unknown": "lightgray",
}


def _short(counts: Mapping[str, int]) -> str:
    letters = {"harmful": "H", "benign": "B", "not-overfitting": "N"}
    return " ".join(f"{letters.get(k, '?')}{v}" for k, v in sorted(counts.items()))


def plot_regimes(counts: Sequence[Mapping[str, Any]], out: Path) -> list[Path]:
    """Per residual choice, the (d, ||mu||) cells coloured by the encoder's majority
    regime (left half) and the bare model's (right half), with the counts written."""
    from verify.plots.style import pyplot, save_figure

    plt = pyplot()
    choices = sorted({c["residual"] for c in counts}, reverse=True)
    d_values = sorted({c["d"] for c in counts})
    mu_values = sorted({c["mu_norm"] for c in counts})
    figure, axes = plt.subplots(1, len(choices), figsize=(4.6 * len(choices), 3.8), squeeze=False)
    for axis, residual in zip(axes[0], choices, strict=True):
        for cell in (c for c in counts if c["residual"] == residual):
            x, y = mu_values.index(cell["mu_norm"]), d_values.index(cell["d"])
            for offset, side in ((-0.25, "encoder"), (0.25, "bare")):
                colour = REGIME_COLOURS[majority(cell[side])]
                axis.add_patch(
                    plt.Rectangle((x + offset - 0.25, y - 0.45), 0.5, 0.9, color=colour, alpha=0.55)
                )
                axis.text(
                    x + offset,
                    y,
                    f"{side[:3]}\n{_short(cell[side])}",
                    ha="center",
                    va="center",
                    fontsize=7,
                )
        axis.set_xticks(range(len(mu_values)), [f"{m:g}" for m in mu_values])
        axis.set_yticks(range(len(d_values)), [f"{d:g}" for d in d_values])
        axis.set_xlim(-0.6, len(mu_values) - 0.4)
        axis.set_ylim(-0.6, len(d_values) - 0.4)
        axis.set_xlabel("||mu||")
        axis.set_ylabel("d")
        axis.set_title(f"residuals {'on' if residual else 'off'}: encoder | bare", fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=REGIME_COLOURS[r], alpha=0.55) for r in REGIMES]
    figure.legend(handles, REGIMES, loc="lower center", ncol=3, fontsize=8)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return save_figure(figure, out, "regimes")


def trajectory_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (d, ||mu||, residual) and log step, the encoder's history columns averaged
    over seeds (the rows of ``encoder_trajectories.csv``)."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for record in records:
        if record["point"]["kind"] != "encoder" or not record["result"].get("history"):
            continue
        d, mu, _ = setting_key(record["point"]["config"])
        residual = bool(record["point"]["config"]["encoder"]["residual"])
        groups.setdefault((d, mu, residual), []).append(record["result"]["history"])
    rows = []
    for (d, mu, residual), histories in sorted(groups.items()):
        keys = list(histories[0])
        means = {k: np.mean([np.asarray(h[k], dtype=float) for h in histories], 0) for k in keys}
        for index in range(len(means["step"])):
            row = {"d": d, "mu_norm": mu, "residual": residual, "seeds": len(histories)}
            row.update({key: float(means[key][index]) for key in keys})
            rows.append(row)
    return rows


def plot_trajectories(table: Mapping[str, np.ndarray], out: Path) -> list[Path]:
    """``trajectories.png``: one row of (clean, noisy) panels per (d, ||mu||, residual)."""
    from verify.encoder.figures import plot_residual_comparison

    keys = []
    for d, mu, residual in zip(table["d"], table["mu_norm"], table["residual"], strict=True):
        if (d, mu, residual) not in keys:
            keys.append((d, mu, residual))
    runs = []
    for d, mu, residual in sorted(keys, key=lambda k: (k[0], str(k[2]) != "True")):
        mask = (table["d"] == d) & (table["mu_norm"] == mu) & (table["residual"] == residual)
        switch = "on" if str(residual) == "True" else "off"
        label = f"d={d:g}, ||mu||={mu:g}, residuals {switch}"
        runs.append((label, {key: column[mask] for key, column in table.items()}))
    return plot_residual_comparison(runs, out, "trajectories")


__all__ = [
    "grid_rows",
    "regime_counts",
    "plot_regimes",
    "trajectory_rows",
    "plot_trajectories",
    "bare_row",
    "majority",
]
