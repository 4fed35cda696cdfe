r"""When things happen in a run: the learning-rate schedule, the evaluation epochs, and the
epoch early stopping picks. Pure functions (no PyTorch).

Schedules: constant :math:`\alpha_k = \alpha`, or linear decay to 0 without warm-up over
:math:`K` updates, :math:`\alpha_k = \alpha (K - k + 1) / K` for the :math:`k`-th update
(the Hugging Face ``Trainer`` default): the first update uses :math:`\alpha`, the last
:math:`\alpha / K`, and the rate after the last is 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def scheduled_rate(rate: float, schedule: str, update: int, total: int) -> float:
    r"""The learning rate of the ``update``-th update (1-based) of ``total``."""
    if schedule == "constant":
        return rate
    if schedule == "linear":
        return rate * max(0.0, (total - update + 1) / total)
    raise ValueError(f"schedule={schedule!r} is invalid: allowed 'constant' or 'linear'")


def evaluation_epochs(epochs: int, every: int) -> list[int]:
    """0, the early epochs 1, 2, 5, 10, 20 below ``every``, the multiples of ``every``, the
    last."""
    early = {e for e in (1, 2, 5, 10, 20) if e < every and e <= epochs}
    return sorted(early | set(range(0, epochs + 1, every)) | {epochs})


def early_stopping_epoch(history: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The evaluated epoch of highest validation accuracy (on the noisy validation labels; the
    earliest on ties) and the test accuracy there. Only the validation column is read to
    choose; the test set plays no part in the choice."""
    best = max(history, key=lambda row: (row["validation_accuracy"], -row["epoch"]))
    return {
        "early_stopping_epoch": best["epoch"],
        "early_stopped_validation_accuracy": best["validation_accuracy"],
        "early_stopped_test_accuracy": best["test_accuracy"],
        "early_stopped_noisy_fitted": best["noisy_fitted"],
    }
