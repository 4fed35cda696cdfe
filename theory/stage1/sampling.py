r"""Monte Carlo of the exact initial gap velocities, the reference for
:mod:`theory.stage1.moments`.

Each draw generates a training set of the data model with its sampler
(:mod:`theory.foundation.sampling`, one generator for the tokens and then :math:`W_0`;
balanced classes, the exact label flips split evenly between the classes), and
computes the exact velocity at :math:`\tau = 0` with no approximation: the exact loss slope
:math:`\ell_i = 1/(1 + e^{y_if_i})` (:math:`w(y_if_i)` of the training loss), the exact
scores, and the exact :math:`A = W_0^\top W_0`,

.. math::

    g = -G = \frac{1}{nT}\sum_{i,t}\ell_i y_i(\gamma_{i,t} - f_i)\,x_{i,t}, \qquad
    V_j = (W_0 D_j)\cdot(W_0 g),

with :math:`D_j` the mean of sample j's leader-group tokens minus the mean of its
other-group tokens (:math:`W_0^\top W_0` is never formed: two matrix-vector products per
direction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import GROUP_NAMES, DataModel, Training
from theory.foundation.sampling import (
    add_signals,
    balanced_labels,
    exact_flips,
    example_rhos,
    head_vector,
    initial_weights,
    token_noise,
)
from theory.stage1.setting import check_balanced
from theory.variants.kernels import loss_weight


@dataclass(frozen=True)
class GapVelocitySample:
    """Per draw: the gap velocity of one sample of the set (the first) and the mean over
    the set (clean or noisy samples), arrays of shape (draws,)."""

    single: np.ndarray
    mean: np.ndarray


def labels(model: DataModel) -> tuple[np.ndarray, np.ndarray]:
    r"""True classes :math:`y^*` (first half +1) and observed labels :math:`y` (the first
    ``noisy_count / 2`` samples of each class flipped; n and the flip count even)."""
    check_balanced(model)
    ystar = balanced_labels(model.n).astype(np.float64)
    return ystar, np.where(exact_flips(ystar, model.noisy_count), -ystar, ystar)


@dataclass(frozen=True)
class InitialState:
    r"""One draw: tokens (n, T, d), true and observed labels, :math:`g = -G`, :math:`W_0`, and
    each sample's :math:`\rho_i` (``None`` without a spread)."""

    tokens: np.ndarray
    ystar: np.ndarray
    y: np.ndarray
    g: np.ndarray
    W: np.ndarray
    rhos: np.ndarray | None = None


def draw_initial_state(
    model: DataModel, training: Training, rng: np.random.Generator
) -> InitialState:
    r"""A training set (noise, then each sample's :math:`\rho_i` when the model has a spread)
    and :math:`W_0`, with the exact :math:`g = -G` at :math:`p = 0`."""
    ystar, y = labels(model)
    noise = token_noise(rng, model.n, model)
    rhos = example_rhos(rng, model.n, model)  # nothing drawn without a spread
    tokens = add_signals(noise, ystar, model, rhos)
    scores = tokens @ head_vector(model)
    output = scores.mean(axis=1)
    if training.loss == "logistic":
        slope = 1.0 / (1.0 + np.exp(y * output))
    else:
        slope = loss_weight(y * output, training.loss)
    weights = (slope * y)[:, None] * (scores - output[:, None]) / (model.n * model.T)
    g = np.einsum("it,itd->d", weights, tokens)
    W = initial_weights(rng, model.d, training.scale(model.d), training.init)
    return InitialState(tokens, ystar, y, g, W, rhos)


def gap_velocities(model: DataModel, state: InitialState, other: str, noisy: bool) -> np.ndarray:
    """Every sample's exact gap velocity: mean of the leader's tokens (R for clean, W- for
    noisy samples) minus mean of the ``other`` group's tokens, through :math:`W_0`."""
    position = np.array(model.position_groups)
    leader = GROUP_NAMES.index("W-" if noisy else "R")
    direction = state.tokens[:, position == leader].mean(axis=1)
    direction -= state.tokens[:, position == GROUP_NAMES.index(other)].mean(axis=1)
    return (direction @ state.W.T) @ (state.W @ state.g)


def sample_gap_velocities(
    model: DataModel,
    training: Training,
    gaps: Sequence[tuple[str, bool]],
    draws: int,
    seed: int,
) -> dict[tuple[str, bool], GapVelocitySample]:
    """``draws`` independent draws (data and :math:`W_0`) from ``seed``; for each gap
    ``(other, noisy)`` the velocity of the first sample of the clean (noisy) set and the
    mean over the set. All gaps are measured on the same draws."""
    rng = np.random.default_rng(seed)
    single = {gap: np.empty(draws) for gap in gaps}
    mean = {gap: np.empty(draws) for gap in gaps}
    for draw in range(draws):
        state = draw_initial_state(model, training, rng)
        for other, noisy in gaps:
            members = (state.y != state.ystar) if noisy else (state.y == state.ystar)
            chosen = gap_velocities(model, state, other, noisy)[members]
            single[(other, noisy)][draw], mean[(other, noisy)][draw] = chosen[0], chosen.mean()
    return {gap: GapVelocitySample(single[gap], mean[gap]) for gap in gaps}


__all__ = [
    "GapVelocitySample",
    "InitialState",
    "labels",
    "draw_initial_state",
    "gap_velocities",
    "sample_gap_velocities",
]
