r"""Literal float64 GD on the full :math:`W \in \mathbb{R}^{d\times d}` and :math:`p`.

.. math::

    a_{i,t} = x_{i,t}^\top W^\top p, \quad G = \sum_{i,t} h_{i,t} x_{i,t}, \quad
    p \leftarrow p - \alpha W G, \quad W \leftarrow W - \alpha p G^\top .

With a trained head also :math:`\nu \leftarrow \nu - \alpha_\nu\sum_{i,t}g_{i,t}x_{i,t}`,
:math:`g_{i,t} = \partial L/\partial\gamma_{i,t}` (every update at the old state). The
reference anyone can read against the model's definition. :math:`O(d^2)` per step.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg.blas import dger

from verify.sim.config import RunConfig
from verify.sim.data import Dataset, initial_weights
from verify.sim.engines.base import Engine, ensure_finite
from verify.sim.engines.registry import DENSE_DRIFT_MAX_D, engine_traits
from verify.sim.gradient import head_gradient, head_step, noisy_gradient_ratio_dense
from verify.sim.statistics import conserved_scale


class DenseEngine(Engine):
    traits = engine_traits("dense")

    def __init__(self, config: RunConfig, data: Dataset, W0: np.ndarray | None = None):
        super().__init__(config, data)
        self.W0 = initial_weights(config) if W0 is None else np.array(W0, dtype=np.float64)
        self.W = np.array(self.W0, order="C")
        self.p = np.zeros(data.d)
        self.tokens = data.X_train.reshape(-1, data.d)
        squares = self.W0 * self.W0
        self.invariant_scale = conserved_scale(
            float(squares.mean()), float((squares**2).mean()), data.d
        )
        self.nu = np.array(data.nu, dtype=np.float64) if self.trained_head else None

    def step(self, until: float) -> None:
        logits = self.tokens @ (self.W.T @ self.p)
        ensure_finite(logits, "training logits", self.steps_done)
        shaped = logits.reshape(self.data.n, self.data.T)
        output = self.kernel(shaped, self.token_scores() if self.trained_head else None)
        h = output.logit_gradient.reshape(-1)
        G = self.tokens.T @ h
        grad_p = self.W @ G
        # W <- W - alpha p G^T, in place: on the Fortran view W^T this is W^T - alpha G p^T.
        dger(-self.config.training.alpha, G, self.p, a=self.W.T, overwrite_a=True)
        self.p -= self.config.training.alpha * grad_p
        if self.nu is not None:
            grad_nu = self.tokens.T @ head_gradient(output).reshape(-1)
            self.nu -= head_step(self.config) * grad_nu
        self.steps_done += 1

    def head(self) -> np.ndarray | None:
        return None if self.nu is None else self.nu.copy()

    def token_scores(self) -> np.ndarray:
        if self.nu is None:
            return super().token_scores()
        return (self.tokens @ self.nu).reshape(self.data.n, self.data.T)

    def noisy_gradient_ratio(self) -> float:
        logits = self.train_logits()
        output = self.kernel(logits, self.token_scores() if self.trained_head else None)
        return noisy_gradient_ratio_dense(
            self.tokens, self.W, self.p, output.logit_gradient, self.data.noisy
        )

    def train_logits(self) -> np.ndarray:
        return (self.tokens @ self.query()).reshape(self.data.n, self.data.T)

    def query(self) -> np.ndarray:
        return self.W.T @ self.p

    def query_moments(self) -> tuple[float, np.ndarray]:
        q = self.query()
        return float(q @ q), q[:2].copy()

    def parameter_norms(self) -> dict[str, float]:
        """The drift is exact (:math:`O(d^3)`) for d <= DENSE_DRIFT_MAX_D, else NaN."""
        drift = math.nan
        if self.data.d <= DENSE_DRIFT_MAX_D:
            drift_matrix = self.W @ self.W.T - np.outer(self.p, self.p) - self.W0 @ self.W0.T
            drift = float(np.linalg.norm(drift_matrix))
        return {
            "p_norm": float(np.linalg.norm(self.p)),
            "weight_change_norm": float(np.linalg.norm(self.W - self.W0)),
            "invariant_drift": drift,
        }
