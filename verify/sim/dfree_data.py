r"""A d-free run's data: labels, flips, token scores and the reduced statistics, no tokens.

A d-free run never holds a d-dimensional array. What the engines and the recording read
of a run's data is the labels :math:`y, y^*`, the flipped set, the token groups, the
training scores :math:`\gamma = B^\top \nu` and, for the dynamics and the query's
moments, the :class:`~verify.sim.statistics.Statistics` of the draws, sampled in law by
:mod:`verify.sim.dfree_law`. Since :math:`\nu = \gamma_0 (e_1 - e_2)/\|\mu\|` lies in the
signal plane, the scores are :math:`\gamma = (\gamma_0/\|\mu\|)\,(E^\top B)^\top (1, -1)^\top`
exactly. There is no finite test set (its arrays have length 0, so they hold no memory
whatever d is): test metrics come from the population.

The seed's streams are used as the d-dimensional generator uses them: the labels are
balanced and the flipped set comes from the ``flips`` stream (the same flipped set as a
d-dimensional run of the same seed), the token noise from ``train`` and
:math:`W_0` from ``init``; the same seed gives the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from theory.foundation.data_model import DataModel
from theory.foundation.validation import require
from verify.runtime.threads import single_blas_thread
from verify.sim.config import RunConfig
from verify.sim.data import (
    balanced_labels,
    noisy_mask,
    position_groups,
    random_streams,
    signal_part,
)
from verify.sim.dfree_law import sample_statistics
from verify.sim.statistics import Statistics


@dataclass(frozen=True)
class ReducedData:
    """The training set as a d-free run sees it (see the module docstring).

    ``mu_plus`` and ``mu_minus`` are the signals' coordinates on :math:`(e_1, e_2)`.
    """

    y_train: np.ndarray
    y_clean: np.ndarray
    train_scores: np.ndarray  # (n, T)
    groups: np.ndarray
    statistics: Statistics
    d: int
    mu_plus: np.ndarray
    mu_minus: np.ndarray
    source: str = field(default="dfree", compare=False)

    @property
    def n(self) -> int:
        return int(self.train_scores.shape[0])

    @property
    def T(self) -> int:
        return int(self.train_scores.shape[1])

    @property
    def noisy(self) -> np.ndarray:
        """Boolean mask of the training samples whose observed label is flipped."""
        return self.y_train != self.y_clean

    @property
    def X_test(self) -> np.ndarray:
        """No finite test set: shape (0, T, d), no entries."""
        return np.zeros((0, self.T, self.d))

    @property
    def test_scores(self) -> np.ndarray:
        """No finite test set: shape (0, T)."""
        return np.zeros((0, self.T))

    @property
    def y_test(self) -> np.ndarray:
        return np.zeros(0, dtype=np.int64)


def head_coordinates(model: DataModel) -> np.ndarray:
    r""":math:`E^\top \nu = (\gamma_0/\|\mu\|)\,(1, -1)`."""
    return np.array([1.0, -1.0]) * (model.gamma0 / model.mu_norm)


def draw_reduced_data(config: RunConfig) -> ReducedData:
    """The run's labels, flips, scores and statistics, drawn from the seed's streams
    (:math:`W_0` must be Gaussian: the law sampled is that of the Gaussian init)."""
    require(
        config.training.init == "gaussian",
        "init",
        config.training.init,
        "gaussian for data sampled in law (a rotation-invariant W0)",
    )
    m = config.model
    streams = random_streams(config.seed)
    y_clean = balanced_labels(m.n)
    flipped = noisy_mask(y_clean, m, streams["flips"])
    signal = signal_part(y_clean, m).reshape(-1, 2)
    with single_blas_thread():  # (N + 2)-sized products
        statistics = sample_statistics(
            signal, m.sigma_eps, config.init_scale, m.d, streams["train"], streams["init"]
        )
    scores = head_coordinates(m) @ statistics.signal_B
    return ReducedData(
        y_train=np.where(flipped, -y_clean, y_clean),
        y_clean=y_clean,
        train_scores=scores.reshape(m.n, m.T),
        groups=position_groups(m),
        statistics=statistics,
        d=m.d,
        mu_plus=np.array([m.mu_norm, 0.0]),
        mu_minus=np.array([0.0, m.mu_norm]),
    )


__all__ = ["ReducedData", "draw_reduced_data", "head_coordinates"]
