r"""Tables of the real-world runs: one row per run, summaries per cell, verdicts.

A *cell* is (protocol label, data set, n, eta); its runs are the seeds. The change
of test accuracy against eta = 0 is paired by seed (same subset, validation split,
initialisation, head and batch order), for the final epoch and for the epoch chosen
by early stopping on the validation split.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from verify.output.tables import number

#: Final-epoch and early-stopped columns of a run row: (accuracy, noisy labels fitted).
READOUTS = {
    "final": ("test_accuracy", "noisy_fitted"),
    "early": ("early_stopped_test_accuracy", "early_stopped_noisy_fitted"),
}


def run_rows(records: Sequence[dict[str, Any]], labels: Mapping[str, str]) -> list[dict]:
    """One row per run (member) of every group record; ``labels`` maps a record's key to its
    protocol label. A run held by two groups (same label, data set, n, eta and seed) counts
    once."""
    rows, seen = [], set()
    for record in records:
        config, result = record["config"], record["result"]
        for member in result["members"]:
            run = (
                labels[record["key"]],
                config["dataset"],
                config["n"],
                member["eta"],
                member["seed"],
            )
            if run in seen:
                continue
            seen.add(run)
            final = member["final"]
            rows.append(
                {
                    "protocol": labels[record["key"]],
                    "dataset": config["dataset"],
                    "special_tokens": result["special_tokens"],
                    "n": config["n"],
                    "eta": member["eta"],
                    "seed": member["seed"],
                    "noisy_examples": member["noisy_examples"],
                    "noisy_fraction": member["noisy_fraction"],
                    **{
                        name: final[name]
                        for name in (
                            "train_loss",
                            "train_accuracy",
                            "clean_fitted",
                            "noisy_fitted",
                            "validation_accuracy",
                            "test_accuracy",
                            "max_attention_train",
                        )
                    },
                    "mean_max_attention": final["mean_max_attention_over_training"],
                    "test_accuracy_at_reinit": member["history"][0]["test_accuracy"],
                    **{
                        name: member[name]
                        for name in (
                            "early_stopping_epoch",
                            "early_stopped_test_accuracy",
                            "early_stopped_noisy_fitted",
                            "pretrained_test_accuracy",
                        )
                    },
                    "learning_rate": result["learning_rate_used"],
                    "updates": result["updates"],
                    "epochs": config["protocol"]["epochs"],
                    "group_seconds": result["seconds"],
                    "group_members": len(result["members"]),
                }
            )
    return rows


def history_rows(records: Sequence[dict[str, Any]], labels: Mapping[str, str]) -> list[dict]:
    return [
        {
            "protocol": labels[r["key"]],
            "dataset": r["config"]["dataset"],
            "n": r["config"]["n"],
            "eta": member["eta"],
            "seed": member["seed"],
            **row,
        }
        for r in records
        for member in r["result"]["members"]
        for row in member["history"]
    ]


def _mean_sd(values: Sequence[Any]) -> tuple[float, float]:
    array = np.asarray([number(v) for v in values], dtype=float)
    array = array[np.isfinite(array)]
    if array.size == 0:
        return math.nan, math.nan
    return float(array.mean()), float(array.std(ddof=1)) if array.size > 1 else math.nan


SUMMARISED = (
    "train_loss",
    "train_accuracy",
    "noisy_fitted",
    "test_accuracy",
    "validation_accuracy",
    "early_stopping_epoch",
    "early_stopped_test_accuracy",
    "early_stopped_noisy_fitted",
    "test_accuracy_at_reinit",
    "pretrained_test_accuracy",
    "mean_max_attention",
    "noisy_fraction",
)


def summary_rows(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and sd over seeds per cell, the paired changes and the verdicts."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in runs:
        groups[(row["protocol"], row["dataset"], row["n"], row["eta"])].append(row)
    summary = []
    for (label, dataset, n, eta), rows in sorted(groups.items()):
        entry = {"protocol": label, "dataset": dataset, "n": n, "eta": eta, "seeds": len(rows)}
        for name in SUMMARISED:
            entry[name], entry[f"{name}_sd"] = _mean_sd([r[name] for r in rows])
        clean = groups.get((label, dataset, n, 0.0), [])
        for readout, (accuracy, _) in READOUTS.items():
            change = paired_change(rows, clean, accuracy)
            entry.update({f"{readout}_{k}": v for k, v in change.items()})
            entry[f"{readout}_verdict"] = verdict(entry, readout)
        summary.append(entry)
    return summary


def paired_change(
    rows: Sequence[dict[str, Any]], clean: Sequence[dict[str, Any]], column: str = "test_accuracy"
) -> dict[str, float]:
    """``column`` minus its value at eta = 0, paired by seed: the mean difference over the
    seeds present in both, its standard error (NaN with fewer than two pairs), the pairs."""
    baseline = {r["seed"]: number(r[column]) for r in clean}
    differences = np.array(
        [number(r[column]) - baseline[r["seed"]] for r in rows if r["seed"] in baseline],
        dtype=float,
    )
    differences = differences[np.isfinite(differences)]
    mean, sd = _mean_sd(list(differences))
    pairs = int(differences.size)
    return {
        "change": mean,
        "change_se": sd / math.sqrt(pairs) if pairs > 1 else math.nan,
        "pairs": pairs,
    }


def verdict(entry: Mapping[str, Any], readout: str = "final", tolerance: float = 0.02) -> str:
    r"""The paper's outcomes for a noisy cell: did it fit the noise, did test accuracy hold.

    With :math:`\Delta` the test accuracy minus that at eta = 0 (same n, paired by seed;
    ``readout`` ``final``: last epoch, ``early``: the early-stopping epoch), :math:`s` its
    standard error and :math:`t` the 97.5% Student quantile with (pairs - 1) degrees of
    freedom:

    * *not overfitting*: fewer than 90% of the noisy labels fitted (at that epoch);
    * *benign*: fitted and :math:`\Delta \ge -\text{tolerance}`;
    * *harmful*: fitted, :math:`\Delta < -\text{tolerance}` and :math:`\Delta + t s < 0`
      (a drop beyond the tolerance, significant at the 95% level);
    * *inconclusive*: fitted, a drop beyond the tolerance, not significant (or one pair);
    * *clean* (eta = 0) and *no baseline* (no eta = 0 run to compare with).
    """
    from scipy.stats import t as student

    if entry["eta"] == 0:
        return "clean"
    change = number(entry[f"{readout}_change"])
    if math.isnan(change):
        return "no baseline"
    if number(entry[READOUTS[readout][1]]) < 0.9:
        return "not overfitting"
    if change >= -tolerance:
        return "benign"
    error, pairs = number(entry[f"{readout}_change_se"]), int(entry[f"{readout}_pairs"])
    if pairs > 1 and math.isfinite(error) and change + student.ppf(0.975, pairs - 1) * error < 0:
        return "harmful"
    return "inconclusive"


def protocol_table(
    summary: Sequence[dict[str, Any]], labels: Sequence[str], readout: str = "final"
) -> list[dict[str, Any]]:
    """One row per (data set, n, eta > 0): per protocol label, the paired change and verdict."""
    cells: dict[tuple, dict[str, Any]] = {}
    for entry in summary:
        if entry["eta"] == 0 or entry["protocol"] not in labels:
            continue
        row = cells.setdefault(
            (entry["dataset"], entry["n"], entry["eta"]),
            {"dataset": entry["dataset"], "n": entry["n"], "eta": entry["eta"]},
        )
        label = entry["protocol"]
        row[f"{label}_change"] = entry[f"{readout}_change"]
        row[f"{label}_change_se"] = entry[f"{readout}_change_se"]
        row[f"{label}_noisy_fitted"] = entry[READOUTS[readout][1]]
        row[f"{label}_verdict"] = entry[f"{readout}_verdict"]
    return [cells[key] for key in sorted(cells)]


#: A (protocol, data set, n) run at this many noise levels or more is a sweep over eta.
SWEEP_LEVELS = 5
SWEEP_COLUMNS = (
    "seeds",
    "noisy_fraction",
    "test_accuracy",
    "test_accuracy_sd",
    "final_change",
    "final_change_se",
    "noisy_fitted",
    "noisy_fitted_sd",
    "final_verdict",
    "early_stopping_epoch",
    "early_stopped_test_accuracy",
    "early_change",
    "early_change_se",
    "early_stopped_noisy_fitted",
    "early_verdict",
)


def sweep_rows(summary: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cells of every (protocol, data set, n) run at :data:`SWEEP_LEVELS` noise levels or
    more (eta = 0 included), one row per level: accuracy, its paired change against eta = 0,
    the flipped labels fitted and the verdicts, final and early-stopped."""
    levels: dict[tuple, int] = defaultdict(int)
    for entry in summary:
        levels[(entry["protocol"], entry["dataset"], entry["n"])] += 1
    return [
        {
            "protocol": entry["protocol"],
            "dataset": entry["dataset"],
            "n": entry["n"],
            "eta": entry["eta"],
            **{name: entry[name] for name in SWEEP_COLUMNS},
        }
        for entry in summary
        if levels[(entry["protocol"], entry["dataset"], entry["n"])] >= SWEEP_LEVELS
    ]


def verdict_stretches(rows: Sequence[dict[str, Any]], readout: str = "final") -> list[tuple]:
    """Consecutive noisy levels (eta > 0, in order) with the same verdict:
    ``(verdict, first eta, last eta, levels)``."""
    stretches: list[list] = []
    for row in sorted((r for r in rows if r["eta"] > 0), key=lambda r: r["eta"]):
        verdict_here = row[f"{readout}_verdict"]
        if stretches and stretches[-1][0] == verdict_here:
            stretches[-1][2:] = [row["eta"], stretches[-1][3] + 1]
        else:
            stretches.append([verdict_here, row["eta"], row["eta"], 1])
    return [tuple(s) for s in stretches]


def sweep_trend(rows: Sequence[dict[str, Any]], tolerance: float = 0.02) -> dict[str, Any]:
    r"""One data set's sweep over eta in a few numbers: the clean test accuracy, the first
    noisy level whose paired change is below ``-tolerance`` (and the last level before it),
    the least-squares slope :math:`b` of the change :math:`\Delta` on eta through the origin,
    :math:`b = \sum \eta \Delta / \sum \eta^2`, with its standard error, and how many noisy
    levels fit at least 90% of the flipped labels (final and early-stopped)."""
    noisy = sorted((r for r in rows if r["eta"] > 0), key=lambda r: r["eta"])
    clean = [r for r in rows if r["eta"] == 0]
    eta = np.array([r["eta"] for r in noisy], dtype=float)
    change = np.array([number(r["final_change"]) for r in noisy], dtype=float)
    keep = np.isfinite(change)
    eta, change = eta[keep], change[keep]
    below = [e for e, c in zip(eta, change, strict=True) if c < -tolerance]
    slope = float(eta @ change / (eta @ eta)) if eta.size else math.nan
    spread = (
        math.sqrt(float(((change - slope * eta) ** 2).sum()) / (eta.size - 1) / float(eta @ eta))
        if eta.size > 1
        else math.nan
    )
    return {
        "clean_test_accuracy": number(clean[0]["test_accuracy"]) if clean else math.nan,
        "first_drop_eta": below[0] if below else math.nan,
        "slope": slope,
        "slope_se": spread,
        "levels": len(noisy),
        "levels_fitted": sum(number(r["noisy_fitted"]) >= 0.9 for r in noisy),
        "levels_fitted_early": sum(number(r["early_stopped_noisy_fitted"]) >= 0.9 for r in noisy),
    }
