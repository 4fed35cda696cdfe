"""The reduced GD engine on mpmath numbers: the ground truth for floating-point error."""

from __future__ import annotations

import mpmath
import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset, initial_weights
from verify.sim.engines.base import Engine, reduced_setup
from verify.sim.engines.reduced import ReducedEngine
from verify.sim.engines.registry import engine_traits
from verify.sim.kernels import MPMATH
from verify.sim.statistics import ReducedSetup

_to_float = np.frompyfunc(float, 1, 1)


class MpEngine(ReducedEngine):
    """The reduced GD engine on mpmath numbers at ``config.solver.mp_dps`` digits.

    The set-up (:math:`K`, Gram) is computed in mpmath from the float64 data and
    :math:`W_0`, so the problem is exactly the one the float engines solve. Every
    call runs inside ``mpmath.workdps(config.solver.mp_dps)``; the global precision is
    never changed. Cost grows like :math:`d^2 N` (set-up) and :math:`N^2` mpf
    operations per step: use it on small problems as the ground truth.
    """

    traits = engine_traits("mp")

    def __init__(
        self,
        config: RunConfig,
        data: Dataset,
        W0: np.ndarray | None = None,
        setup: ReducedSetup | None = None,
    ):
        self.dps = config.solver.mp_dps
        with mpmath.workdps(self.dps):
            Engine.__init__(self, config, data, MPMATH)
            self.setup = setup or reduced_setup(config, data, W0)
            self.statistics, self.signal = self.setup.statistics(), None
            self.invariant_scale = self.statistics.invariant_scale
            if W0 is None:
                W0 = initial_weights(config)
            B = MPMATH.asarray(self.setup.Z)
            V = MPMATH.asarray(W0) @ B
            self._use(V.T @ V, B.T @ B)
            N = B.shape[1]
            self.a = MPMATH.asarray(np.zeros(N))
            self.M = MPMATH.asarray(np.zeros((N, N)))
            self.c = MPMATH.asarray(np.zeros(N)) if self.trained_head else None

    def step(self, until: float) -> None:
        with mpmath.workdps(self.dps):
            super().step(until)

    def train_logits(self) -> np.ndarray:
        with mpmath.workdps(self.dps):
            return super().train_logits()

    def _float_state(self) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.asarray(_to_float(self.a), dtype=np.float64),
            np.asarray(_to_float(self.M), dtype=np.float64),
        )
