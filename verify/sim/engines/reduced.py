r"""GD in reduced coordinates: the dense engine's trajectory at O(N^2) a step.

The same trajectory as the dense engine, in :math:`N = nT` coordinates, at
:math:`O(N^2)` per step instead of :math:`O(d^2)`.

Derivation (checked against the dense engine in ``tests/test_engines.py``): with
:math:`p = V a` and :math:`W = W_0 + V M B^\top`, and :math:`h = \partial L/\partial a`
(the logits), :math:`G = B h`, the GD step :math:`p \leftarrow p - \alpha W G`,
:math:`W \leftarrow W - \alpha p G^\top` becomes

.. math::

    a \leftarrow a - \alpha (h + M\,\mathrm{Gram}\,h), \qquad
    M \leftarrow M - \alpha\, a h^\top

(both right-hand sides at the old state), since
:math:`W G = W_0 B h + V M B^\top B h = V (h + M\,\mathrm{Gram}\,h)` and
:math:`p G^\top = V a h^\top B^\top`.
"""

from __future__ import annotations

import math

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines.base import Engine, ReducedCoordinates, ensure_finite
from verify.sim.kernels import FLOAT64


class ReducedEngine(Engine):
    """Float64 GD in reduced coordinates."""

    name = "reduced"

    def __init__(
        self,
        config: RunConfig,
        data: Dataset,
        W0: np.ndarray | None = None,
        coordinates: ReducedCoordinates | None = None,
    ):
        super().__init__(config, data, FLOAT64)
        self.coordinates = coordinates or ReducedCoordinates.build(config, data, W0)
        self.invariant_scale = self.coordinates.invariant_scale
        self._use(self.coordinates.K, self.coordinates.gram)
        N = self.K.shape[0]
        self.a = np.zeros(N)
        self.M = np.zeros((N, N))

    def _use(self, K: np.ndarray, gram: np.ndarray) -> None:
        self.K, self.gram = K, gram
        self.alpha = self.arithmetic.asarray(np.asarray(self.config.training.alpha))[()]

    # -- dynamics --------------------------------------------------------------
    def _flat_logits(self, a: np.ndarray, M: np.ndarray) -> np.ndarray:
        Ka = self.K @ a
        return Ka + self.gram @ (M.T @ Ka)

    def _flat_gradient(self, a: np.ndarray, M: np.ndarray) -> np.ndarray:
        logits = self._flat_logits(a, M)
        ensure_finite(logits, "training logits", self.steps_done)
        n, T = self.data.n, self.data.T
        return self.kernel(logits.reshape(n, T)).logit_gradient.reshape(-1)

    def step(self, until: float) -> None:
        h = self._flat_gradient(self.a, self.M)
        update_a = h + self.M @ (self.gram @ h)
        self.M -= self.alpha * np.outer(self.a, h)
        self.a = self.a - self.alpha * update_a
        self.steps_done += 1

    # -- observables -----------------------------------------------------------
    def train_logits(self) -> np.ndarray:
        return self._flat_logits(self.a, self.M).reshape(self.data.n, self.data.T)

    def query(self) -> np.ndarray:
        a, M = self._float_state()
        c = self.coordinates
        return c.C @ a + c.B @ (M.T @ (c.K @ a))

    def _float_state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.a, self.M

    #: Test evaluations after which the test set is projected onto the reduced basis.
    TEST_PROJECTION_AFTER = 3
    _test_evaluations = 0
    _test_projection: tuple[np.ndarray, np.ndarray] | None = None

    def test_logits(self) -> np.ndarray:
        r"""Test logits :math:`X_{\text{test}} q`. After a few evaluations the test tokens are
        projected once onto :math:`C` and :math:`B` (:math:`O(m T d N)`), so that each later
        evaluation, :math:`(X C) a + (X B)(M^\top K a)`, costs :math:`O(m T N)` instead of
        :math:`O(m T d)`."""
        self._test_evaluations += 1
        if self._test_evaluations <= self.TEST_PROJECTION_AFTER:
            return super().test_logits()
        c = self.coordinates
        if self._test_projection is None:
            tokens = self.data.X_test.reshape(-1, self.data.d)
            self._test_projection = (tokens @ c.C, tokens @ c.B)
        a, M = self._float_state()
        via_C, via_B = self._test_projection
        flat = via_C @ a + via_B @ (M.T @ (c.K @ a))
        return flat.reshape(self.data.X_test.shape[:2])

    def parameter_norms(self) -> dict[str, float]:
        a, M = self._float_state()
        K, gram = self.coordinates.K, self.coordinates.gram
        MGMt = M @ gram @ M.T
        drift_matrix = M + M.T + MGMt - np.outer(a, a)
        return {
            "p_norm": math.sqrt(max(float(a @ K @ a), 0.0)),
            "weight_change_norm": math.sqrt(max(float(np.sum(MGMt * K)), 0.0)),
            "invariant_drift": math.sqrt(
                max(float(np.sum((drift_matrix @ K) * (drift_matrix.T @ K).T)), 0.0)
            ),
        }
