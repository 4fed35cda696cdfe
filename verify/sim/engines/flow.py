r"""Gradient flow in reduced coordinates, in logarithmic time, with an adaptive solver.

Gradient flow is the :math:`\alpha \to 0` limit of GD in time :math:`t = \alpha k`
(:math:`k` = GD steps):

.. math::

    \dot a = -(h + M\,\mathrm{Gram}\,h), \qquad \dot M = -a h^\top
    \quad\big(\text{and } \dot c = -(\alpha_\nu/\alpha)\,g \text{ for a trained head}\big).

Gaps grow like :math:`\log t` and the loss decays like :math:`1/t`, so the flow is
integrated in :math:`s = \log(1 + t)`, where :math:`dy/ds = (1 + t)\,\dot y` stays
of order one: an explicit high-order solver (DOP853) then reaches :math:`10^{12}` GD
steps and far beyond in a few hundred solver steps. States between solver steps
come from the solver's dense output.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import DOP853

from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines.base import NonFiniteError, ensure_finite
from verify.sim.engines.reduced import ReducedEngine
from verify.sim.engines.registry import engine_traits
from verify.sim.gradient import head_gradient, head_rate
from verify.sim.statistics import ReducedSetup, Statistics


class FlowEngine(ReducedEngine):
    r"""Gradient flow; ``advance_to(k)`` moves to time :math:`t = \alpha k`."""

    traits = engine_traits("flow")

    def __init__(
        self,
        config: RunConfig,
        data: Dataset,
        W0: np.ndarray | None = None,
        setup: ReducedSetup | None = None,
        statistics: Statistics | None = None,
        signal: np.ndarray | None = None,
    ):
        super().__init__(config, data, W0, setup, statistics, signal)
        self.solver_steps = 0
        self._solver: DOP853 | None = None

    @staticmethod
    def log_time(step: float, alpha: float) -> float:
        return math.log1p(alpha * step)

    def _derivative(self):
        """The right-hand side :math:`dy/ds`, a closure over the fixed matrices only: the
        solver must not hold the engine (an engine <-> solver reference cycle kept each
        finished run's data alive until a full garbage collection)."""
        K, gram, kernel, scores = self.K, self.gram, self.gradient, self.scores
        n, T = self.data.n, self.data.T
        N = K.shape[0]
        alpha = self.config.training.alpha
        trained = self.trained_head
        rate = head_rate(self.config) if trained else 0.0

        def derivative(s: float, y: np.ndarray) -> np.ndarray:
            a, M = y[:N], y[N : N + N * N].reshape(N, N)
            Ka = K @ a
            logits = Ka + gram @ (M.T @ Ka)
            ensure_finite(logits, "training logits", math.expm1(s) / alpha)
            current = scores + (gram @ y[N + N * N :]).reshape(n, T) if trained else None
            output = kernel(logits.reshape(n, T), current)
            h = output.logit_gradient.reshape(-1)
            scale = math.exp(s)  # dt/ds = 1 + t
            out = np.empty_like(y)
            out[:N] = -scale * (h + M @ (gram @ h))
            out[N : N + N * N] = (-scale * np.outer(a, h)).reshape(-1)
            if trained:
                out[N + N * N :] = -scale * rate * head_gradient(output).reshape(-1)
            return out

        return derivative

    def _state(self) -> np.ndarray:
        r"""The solver's state: :math:`(a, \mathrm{vec}\,M)`, then c for a trained head."""
        parts = [self.a, self.M.reshape(-1)]
        return np.concatenate(parts if self.c is None else [*parts, self.c])

    def _set_state(self, y: np.ndarray) -> None:
        N = self.a.shape[0]
        self.a = y[:N].copy()
        self.M = y[N : N + N * N].reshape(N, N).copy()
        if self.c is not None:
            self.c = y[N + N * N :].copy()

    def _solver_for(self, target: float) -> DOP853:
        """The solver, created on first use with the run's horizon, or restarted from its
        current state when ``target`` lies past the planned horizon."""
        alpha = self.config.training.alpha
        if self._solver is None:
            horizon = max(target, self.log_time(self.config.training.steps, alpha))
            self._solver = DOP853(
                self._derivative(),
                0.0,
                self._state(),
                horizon,
                rtol=self.config.solver.flow_rtol,
                atol=self.config.solver.flow_atol,
            )
        elif target > self._solver.t_bound:
            self._solver = DOP853(
                self._derivative(),
                self._solver.t,
                self._solver.y,
                target,
                rtol=self.config.solver.flow_rtol,
                atol=self.config.solver.flow_atol,
            )
        return self._solver

    def _logits_of(self, y: np.ndarray) -> np.ndarray:
        N = self.a.shape[0]
        a, M = y[:N], y[N : N + N * N].reshape(N, N)
        Ka = self.K @ a
        return (Ka + self.gram @ (M.T @ Ka)).reshape(self.data.n, self.data.T)

    def _locate_events(self, before: float, solver: DOP853) -> None:
        """Events that turned positive within the last solver step, located by Brent's
        method on the step's dense output (time returned in GD steps)."""
        from scipy.optimize import brentq

        dense = solver.dense_output()
        alpha = self.config.training.alpha
        for event in self.events:
            if event.at is not None or event.function(self._logits_of(solver.y)) <= 0:
                continue
            value = lambda s, event=event: event.function(self._logits_of(dense(s)))  # noqa: E731
            crossing = (
                before
                if value(before) > 0
                else brentq(value, before, solver.t, xtol=1e-12, rtol=1e-12)
            )
            event.at = math.expm1(crossing) / alpha

    def step(self, until: float) -> None:
        """One adaptive solver step (none if the solver is already past ``until``); the
        state at ``until`` comes from the solver's dense output."""
        alpha = self.config.training.alpha
        target = self.log_time(until, alpha)
        solver = self._solver_for(target)
        if solver.t < target and solver.status == "running":
            before = solver.t
            message = solver.step()
            self.solver_steps += 1
            if solver.status == "failed":
                raise NonFiniteError(
                    f"the flow solver failed near step {math.expm1(solver.t) / alpha:g}: {message}"
                )
            if self.events:
                self._locate_events(before, solver)
        reached = solver.t >= target or solver.status != "running"
        y = solver.dense_output()(target) if solver.t > target else solver.y
        self._set_state(y)
        self.steps_done = until if reached else math.expm1(solver.t) / alpha
