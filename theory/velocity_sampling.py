r"""Monte Carlo of the exact initial gap velocities, the reference for
:mod:`theory.velocity_moments`.

Each draw generates a training set of the data model (:mod:`theory.data_model`; balanced
classes, the exact label flips split evenly between the classes) and :math:`W_0`, and
computes the exact velocity at :math:`\tau = 0` with no approximation: the exact loss slope
:math:`\ell_i = 1/(1 + e^{y_if_i})`, the exact scores, and the exact
:math:`A = W_0^\top W_0`,

.. math::

    g = -G = \frac{1}{nT}\sum_{i,t}\ell_i y_i(\gamma_{i,t} - f_i)\,x_{i,t}, \qquad
    V_j = (W_0 D_j)\cdot(W_0 g),

with :math:`D_j` the mean of sample j's leader-group tokens minus the mean of its
other-group tokens (:math:`W_0^\top W_0` is never formed: two matrix-vector products per
direction).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.data_model import GROUP_NAMES, DataModel, Training


@dataclass(frozen=True)
class GapVelocitySample:
    """Per draw: the gap velocity of one sample of the set (the first) and the mean over
    the set (clean or noisy samples), arrays of shape (draws,)."""

    single: np.ndarray
    mean: np.ndarray


def labels(model: DataModel) -> tuple[np.ndarray, np.ndarray]:
    r"""True classes :math:`y^*` (first half +1) and observed labels :math:`y` (the first
    ``noisy_count / 2`` samples of each class flipped)."""
    half = model.n // 2
    ystar = np.where(np.arange(model.n) < half, 1.0, -1.0)
    flips = model.noisy_count // 2
    noisy = np.zeros(model.n, dtype=bool)
    noisy[:flips] = True
    noisy[half : half + flips] = True
    return ystar, np.where(noisy, -ystar, ystar)


def _tokens(model: DataModel, ystar: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Tokens, shape (n, T, d): signal of the token's group plus Gaussian noise."""
    groups = [model.groups[code] for code in model.position_groups]
    own = np.array([g.own for g in groups], dtype=np.float64)
    opposite = np.array([g.opposite for g in groups], dtype=np.float64)
    plus = ystar[:, None] > 0
    tokens = model.sigma_eps * rng.standard_normal((model.n, model.T, model.d))
    tokens[:, :, 0] += model.mu_norm * np.where(plus, own, opposite)
    tokens[:, :, 1] += model.mu_norm * np.where(plus, opposite, own)
    return tokens


def _init(model: DataModel, training: Training, rng: np.random.Generator) -> np.ndarray:
    scale = training.scale(model.d)
    shape = (model.d, model.d)
    if training.init == "uniform":
        return rng.uniform(-scale, scale, shape)
    return scale * rng.standard_normal(shape)


def exact_gap_velocities(
    model: DataModel, training: Training, other: str, noisy: bool, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One draw: every sample's exact gap velocity (leader R for clean, W- for noisy, minus
    ``other``) and the mask of the clean (or noisy) samples."""
    ystar, y = labels(model)
    tokens = _tokens(model, ystar, rng)
    nu = np.zeros(model.d)
    nu[0], nu[1] = model.gamma0 / model.mu_norm, -model.gamma0 / model.mu_norm
    scores = tokens @ nu
    output = scores.mean(axis=1)
    slope = 1.0 / (1.0 + np.exp(y * output))
    weights = (slope * y)[:, None] * (scores - output[:, None]) / (model.n * model.T)
    g = np.einsum("it,itd->d", weights, tokens)
    position = np.array(model.position_groups)
    leader = GROUP_NAMES.index("W-" if noisy else "R")
    direction = tokens[:, position == leader].mean(axis=1)
    direction -= tokens[:, position == GROUP_NAMES.index(other)].mean(axis=1)
    W = _init(model, training, rng)
    velocities = (direction @ W.T) @ (W @ g)
    return velocities, (y != ystar) if noisy else (y == ystar)


def sample_gap_velocities(
    model: DataModel, training: Training, other: str, noisy: bool, draws: int, seed: int
) -> GapVelocitySample:
    """``draws`` independent draws (data and :math:`W_0`) from ``seed``."""
    rng = np.random.default_rng(seed)
    single, mean = np.empty(draws), np.empty(draws)
    for draw in range(draws):
        velocities, members = exact_gap_velocities(model, training, other, noisy, rng)
        chosen = velocities[members]
        single[draw], mean[draw] = chosen[0], chosen.mean()
    return GapVelocitySample(single, mean)


__all__ = ["GapVelocitySample", "labels", "exact_gap_velocities", "sample_gap_velocities"]
