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

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines.base import Engine, ensure_finite, reduced_setup
from verify.sim.kernels import FLOAT64
from verify.sim.statistics import ReducedSetup, Statistics


class ReducedEngine(Engine):
    """Float64 GD in reduced coordinates, on the :class:`~verify.sim.statistics.Statistics`
    of the draws (and, for the query vector and a finite test set, the reduced set-up)."""

    name = "reduced"

    def __init__(
        self,
        config: RunConfig,
        data: Dataset,
        W0: np.ndarray | None = None,
        setup: ReducedSetup | None = None,
        statistics: Statistics | None = None,
    ):
        super().__init__(config, data, FLOAT64)
        if statistics is None:
            setup = setup or reduced_setup(config, data, W0)
            statistics = setup.statistics()
        self.setup, self.statistics = setup, statistics
        self.invariant_scale = statistics.invariant_scale
        self._use(statistics.K, statistics.gram)
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

    def _float_state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.a, self.M

    def query_moments(self) -> tuple[float, np.ndarray]:
        return self.statistics.query_moments(*self._float_state())

    def _require_setup(self) -> ReducedSetup:
        if self.setup is None:
            raise ValueError(
                "this engine holds only the reduced statistics: the query "
                "vector and finite test sets are not available"
            )
        return self.setup

    def query(self) -> np.ndarray:
        a, M = self._float_state()
        setup = self._require_setup()
        return setup.C0 @ a + setup.Z @ (M.T @ (self.statistics.K @ a))

    #: Test evaluations after which the test set is projected onto the reduced basis.
    TEST_PROJECTION_AFTER = 3
    _test_evaluations = 0
    _test_projection: tuple[np.ndarray, np.ndarray] | None = None

    def test_logits(self) -> np.ndarray:
        r"""Test logits :math:`X_{\text{test}} q`. After a few evaluations the test tokens are
        projected once onto :math:`C_0 = AZ` and :math:`Z` (:math:`O(m T d N)`), so that each
        later evaluation, :math:`(X C_0) a + (X Z)(M^\top K a)`, costs :math:`O(m T N)`
        instead of :math:`O(m T d)`."""
        self._test_evaluations += 1
        if self._test_evaluations <= self.TEST_PROJECTION_AFTER:
            return super().test_logits()
        setup = self._require_setup()
        if self._test_projection is None:
            tokens = self.data.X_test.reshape(-1, self.data.d)
            self._test_projection = (tokens @ setup.C0, tokens @ setup.Z)
        a, M = self._float_state()
        via_C, via_B = self._test_projection
        flat = via_C @ a + via_B @ (M.T @ (self.statistics.K @ a))
        return flat.reshape(self.data.X_test.shape[:2])

    def parameter_norms(self) -> dict[str, float]:
        return self.statistics.parameter_norms(*self._float_state())
