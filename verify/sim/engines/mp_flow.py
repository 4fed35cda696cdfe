r"""Gradient flow in high precision: the flow engine's ODE, integrated by extrapolation in mpmath.

The same ODE as the ``flow`` engine, in the same variables: reduced coordinates
:math:`(a, M)`, flow time :math:`t = \alpha k` (:math:`k` GD steps) and log time
:math:`s = \log(1 + t)`,

.. math::

    \frac{da}{ds} = -(1 + t)\,(h + M\,\mathrm{Gram}\,h), \qquad
    \frac{dM}{ds} = -(1 + t)\, a h^\top, \qquad 1 + t = e^s,

with the logits :math:`K a + \mathrm{Gram}\,M^\top K a` and :math:`h` the run's
cancellation-free kernel (:class:`verify.sim.gradient.Kernel`: any loss, the linear or the
FFN readout), integrated from :math:`(0, 0)` by
Gragg-Bulirsch-Stoer extrapolation (:mod:`verify.sim.extrapolation`) with local tolerance
``mp_flow_tol``. :math:`K` and Gram are those of the ``mp`` engine: computed in mpmath from
the float64 tokens and :math:`W_0`, so the problem is exactly the one the float engines
round. The kernel runs on mpmath numbers at ``mp_dps`` digits, the linear algebra in
fixed point with 64 more bits (:mod:`verify.sim.fixed_point`); the solver lands on every
requested time (no interpolation), and an event is located by Brent's method on states
re-integrated from the start of the step in which it turned positive.

Cost: :math:`1 + k^2` evaluations a step (:math:`k` from the tolerance), each
:math:`O(N^2)` integer products and :math:`N` mpmath exponentials; a run to
:math:`10^{20}` steps at :math:`n = 4, T = 3` takes a few hundred steps. A ground truth for
small problems.
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines.base import NonFiniteError
from verify.sim.engines.mp import MpEngine
from verify.sim.engines.registry import engine_traits
from verify.sim.extrapolation import Extrapolation, ScaledDerivative
from verify.sim.fixed_point import FixedPoint
from verify.sim.gradient import Kernel
from verify.sim.statistics import ReducedSetup


class FixedLogits:
    r"""Training logits :math:`K a + \mathrm{Gram}\,M^\top K a` of a fixed-point state
    :math:`y = (a, \mathrm{vec}\,M)`."""

    def __init__(self, K: np.ndarray, gram: np.ndarray, fixed: FixedPoint):
        self.K, self.gram, self.fixed = fixed.from_mpf(K), fixed.from_mpf(gram), fixed
        self.N = K.shape[0]

    def split(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return y[: self.N], y[self.N :].reshape(self.N, self.N)

    def __call__(self, y: np.ndarray) -> np.ndarray:
        a, M = self.split(y)
        Ka = self.fixed.matvec(self.K, a)
        return Ka + self.fixed.matvec(self.gram, self.fixed.matvec(M.T, Ka))


def scaled_derivative(logits: FixedLogits, kernel: Kernel) -> ScaledDerivative:
    r""":math:`c\,dy/ds` at :math:`(s, y)`: with :math:`g = -c\,e^s h` (h from the run's
    ``kernel``, :class:`verify.sim.gradient.Kernel`, in mpmath),
    :math:`c\,da/ds = g + M\,\mathrm{Gram}\,g` and :math:`c\,dM/ds = a g^\top`. A closure
    over the fixed matrices only (the solver does not hold the engine)."""
    fixed, gram = logits.fixed, logits.gram
    shape = kernel.scores.shape

    def derivative(s: mpmath.mpf, y: np.ndarray, c: mpmath.mpf) -> np.ndarray:
        a, M = logits.split(y)
        z = fixed.to_mpf(logits(y)).reshape(shape)
        h = kernel(z).logit_gradient
        g = fixed.from_mpf(h.reshape(-1) * (-c * mpmath.exp(s)))
        out = np.empty_like(y)
        out[: logits.N] = g + fixed.matvec(M, fixed.matvec(gram, g))
        out[logits.N :] = fixed.outer(a, g).reshape(-1)
        return out

    return derivative


class MpFlowEngine(MpEngine):
    r"""Gradient flow in mpmath; ``advance_to(k)`` moves to time :math:`t = \alpha k`
    exactly (see the module docstring)."""

    traits = engine_traits("mp-flow")

    def __init__(
        self,
        config: RunConfig,
        data: Dataset,
        W0: np.ndarray | None = None,
        setup: ReducedSetup | None = None,
    ):
        super().__init__(config, data, W0, setup)
        with mpmath.workdps(self.dps):
            self.fixed = FixedPoint.at_working_precision()
            self.logits = FixedLogits(self.K, self.gram, self.fixed)
            derivative = scaled_derivative(self.logits, self.gradient)
            N = self.logits.N
            state = np.array([0] * (N + N * N), dtype=object)
            self.solver = Extrapolation(
                derivative, mpmath.mpf(0), state, config.solver.mp_flow_tol, self.fixed
            )
            self.mp_alpha = mpmath.mpf(config.training.alpha)

    @property
    def solver_steps(self) -> int:
        """Accepted extrapolation steps."""
        return self.solver.accepted

    def _float_logits(self, y: np.ndarray) -> np.ndarray:
        return self.fixed.to_float(self.logits(y)).reshape(self.data.n, self.data.T)

    def step(self, until: float) -> None:
        """One accepted extrapolation step, ending at log time :math:`\\log(1 + \\alpha`
        ``until``:math:`)` or before it."""
        with mpmath.workdps(self.dps):
            target = mpmath.log1p(self.mp_alpha * until)
            try:
                self.solver.advance(target)
            except FloatingPointError as error:
                raise NonFiniteError(
                    f"the mp-flow solver failed near step {self._steps_at(self.solver.s):g}: "
                    f"{error}"
                ) from error
            if self.events:
                self._locate_events()
            N = self.logits.N
            state = self.fixed.to_mpf(self.solver.y)
            self.a, self.M = state[:N], state[N:].reshape(N, N)
            reached = self.solver.s >= target
            self.steps_done = until if reached else self._steps_at(self.solver.s)

    def _steps_at(self, s: Any) -> float:
        return float(mpmath.expm1(s) / self.mp_alpha)

    def _locate_events(self) -> None:
        """Events that turned positive within the last step, located by Brent's method on
        re-integrated states (time returned in GD steps)."""
        from scipy.optimize import brentq

        start = self.solver.previous
        end = float(self.solver.s)
        logits = self._float_logits(self.solver.y)
        for event in self.events:
            if event.at is not None or event.function(logits) <= 0:
                continue

            def value(s: float, event: Any = event) -> float:
                H = max(mpmath.mpf(s) - start[0], mpmath.mpf(0))
                return event.function(self._float_logits(self.solver.state_after(start, H)))

            before = float(start[0])
            crossing = (
                before
                if value(before) > 0
                else brentq(value, before, end, xtol=1e-15, rtol=4 * np.finfo(float).eps)
            )
            event.at = self._steps_at(mpmath.mpf(crossing))

    def train_logits(self) -> np.ndarray:
        with mpmath.workdps(self.dps):
            return self._float_logits(self.solver.y)


__all__ = ["MpFlowEngine", "FixedLogits", "scaled_derivative"]
