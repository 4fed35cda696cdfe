r"""What a log point of an encoder run records, from the outputs and the [CLS] attention.

The attention is the [CLS] row over ``[cls; X]``: column 0 is the [CLS] token itself,
columns 1..T the data tokens (the authors record these T). A group's *mass* is the
attention summed over the group's tokens (so the irrelevant group's mass adds up its
:math:`T - 3` tokens); a sequence *selects* the group of its data token of largest
attention (argmax over the T data tokens). For each split (clean and noisy training
samples, test sequences) the masses and the selection shares are averaged over the
split's sequences (NaN for an empty split).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from theory.foundation.data_model import GROUP_NAMES
from verify.encoder.layers import logistic_loss
from verify.sim.history import Column, History, declared
from verify.sim.run_files import read_history

SPLITS = ("clean", "noisy", "test")
_SPLIT_TEXT = {
    "clean": "the clean training sequences",
    "noisy": "the noisy training sequences",
    "test": "the test sequences",
}


def _split_columns(split: str) -> list[Column]:
    where = _SPLIT_TEXT[split]
    masses = [
        Column(
            f"attention_{split}_{name}",
            "share",
            f"[CLS] attention mass on {name}, mean over {where}",
        )
        for name in GROUP_NAMES
    ]
    own = Column(f"attention_{split}_cls", "share", f"[CLS] self-attention, mean over {where}")
    chosen = [
        Column(
            f"select_{split}_{name}",
            "share",
            f"share of {where} whose largest data-token attention is on {name}",
        )
        for name in GROUP_NAMES
    ]
    return [*masses, own, *chosen]


#: The columns of an encoder run's history, in the order a log point records them.
ENCODER_COLUMNS: tuple[Column, ...] = (
    Column("step", "steps", "GD steps taken"),
    Column("train_loss", "nats", "mean logistic loss on the training set (observed labels)"),
    Column("train_accuracy", "share", "share of training sequences with y f > 0"),
    Column("clean_fitted", "share", "share of clean training sequences fitted (y f > 0)"),
    Column("noisy_fitted", "share", "share of noisy training sequences fitted (y f > 0)"),
    Column("test_loss", "nats", "mean logistic loss on the test set (NaN between test steps)"),
    Column("test_accuracy", "share", "test accuracy (NaN between test steps)"),
    *(column for split in SPLITS for column in _split_columns(split)),
    Column("test_selects_relevant", "share", "select_test_R, under the bare model's name"),
)
ENCODER_COLUMN_NAMES = tuple(column.name for column in ENCODER_COLUMNS)
ENCODER_BY_NAME = declared(ENCODER_COLUMNS)


def read_encoder_history(path: str | Path) -> History:
    """An encoder run's ``history.csv`` read back as a :class:`History` of its declared
    columns (:data:`ENCODER_COLUMNS`)."""
    return read_history(path, ENCODER_BY_NAME)


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else math.nan


def group_masses(probabilities: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Attention mass on each group per sequence, (m, 4), from (m, T + 1) probabilities."""
    data = probabilities[:, 1:]
    return np.stack([data[:, groups == code].sum(axis=1) for code in range(len(GROUP_NAMES))], 1)


def selected_groups(probabilities: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Group code of each sequence's data token of largest attention, (m,)."""
    return groups[np.argmax(probabilities[:, 1:], axis=1)]


def attention_columns(split: str, probabilities: np.ndarray, groups: np.ndarray) -> dict:
    """``attention_<split>_<G>`` (mean mass), ``attention_<split>_cls`` (mean self
    attention) and ``select_<split>_<G>`` (share of sequences selecting G)."""
    masses, chosen = group_masses(probabilities, groups), selected_groups(probabilities, groups)
    out = {}
    for code, name in enumerate(GROUP_NAMES):
        out[f"attention_{split}_{name}"] = _mean(masses[:, code])
    out[f"attention_{split}_cls"] = _mean(probabilities[:, 0])
    for code, name in enumerate(GROUP_NAMES):
        out[f"select_{split}_{name}"] = _mean((chosen == code).astype(float))
    return out


def fit_columns(outputs: np.ndarray, labels: np.ndarray, noisy: np.ndarray) -> dict:
    """Training loss and accuracy, and the fitted share of clean and noisy samples."""
    margins = labels * outputs
    fitted = margins > 0
    return {
        "train_loss": float(np.mean(logistic_loss(margins))),
        "train_accuracy": float(np.mean(fitted)),
        "clean_fitted": _mean(fitted[~noisy].astype(float)),
        "noisy_fitted": _mean(fitted[noisy].astype(float)),
    }


def log_row(
    step: int,
    train: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray | None, np.ndarray],
    labels: tuple[np.ndarray, np.ndarray],
    noisy: np.ndarray,
    groups: np.ndarray,
) -> dict[str, float]:
    """One history row from the (outputs, probabilities) of the training and the test
    sequences and their (training, test) labels; test outputs ``None`` (not evaluated at
    this point) give NaN test loss and accuracy."""
    (train_outputs, train_probabilities), (test_outputs, test_probabilities) = train, test
    row: dict[str, float] = {"step": float(step)}
    row.update(fit_columns(train_outputs, labels[0], noisy))
    row["test_loss"] = row["test_accuracy"] = math.nan
    if test_outputs is not None:
        test_margins = labels[1] * test_outputs
        row["test_loss"] = _mean(logistic_loss(test_margins))
        row["test_accuracy"] = _mean((test_margins > 0).astype(float))
    row.update(attention_columns("clean", train_probabilities[~noisy], groups))
    row.update(attention_columns("noisy", train_probabilities[noisy], groups))
    row.update(attention_columns("test", test_probabilities, groups))
    row["test_selects_relevant"] = row["select_test_R"]
    return row


__all__ = [
    "SPLITS",
    "group_masses",
    "selected_groups",
    "attention_columns",
    "fit_columns",
    "log_row",
]
