r"""The engine interface, the one step loop, and the reduced coordinates' set-up.

An engine owns the trained state and answers four questions: the training logits, the
effective query :math:`q = W^\top p`, the parameter norms, and the test logits. Time
advances through :meth:`Engine.advance_to`, the single loop that drives every engine:
it calls :meth:`Engine.step` (one GD step, or one adaptive step of the flow solver)
until the requested step is reached.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset, initial_weight_blocks
from verify.sim.kernels import FLOAT64, Arithmetic, KernelOutput, logit_gradient, score_differences


class NonFiniteError(FloatingPointError):
    """A simulation produced a non-finite number; the run stops instead of going on."""


def ensure_finite(values: np.ndarray, what: str, step: float) -> None:
    """Raise :class:`NonFiniteError` naming ``what`` and ``step`` if any value is not finite."""
    if values.dtype != object and not np.all(np.isfinite(values)):
        raise NonFiniteError(
            f"non-finite {what} at step {step:g}: the run was stopped. Lower alpha, or use "
            "engine='mp' or 'flow' if the gaps are very large."
        )


class Engine(ABC):
    """One way of running full-batch GD (or its flow) on a dataset."""

    name: str = "engine"

    def __init__(self, config: RunConfig, data: Dataset, arithmetic: Arithmetic = FLOAT64):
        self.config = config
        self.data = data
        self.arithmetic = arithmetic
        self.steps_done: float = 0
        self.labels = arithmetic.asarray(data.y_train)
        self.scores = arithmetic.asarray(data.train_scores)
        self.differences = score_differences(self.scores)

    def kernel(self, logits: np.ndarray) -> KernelOutput:
        return logit_gradient(logits, self.scores, self.differences, self.labels, self.arithmetic)

    def advance_to(self, step: float) -> None:
        r"""Run until ``step`` GD steps (flow time :math:`\alpha\,` ``step``) are done."""
        if step < self.steps_done:
            raise ValueError(
                f"step={step:g} is invalid: the engine is at step "
                f"{self.steps_done:g} and cannot go back"
            )
        while self.steps_done < step:
            self.step(step)

    @abstractmethod
    def step(self, until: float) -> None:
        """Advance by one step, ending at or before step ``until``."""

    @abstractmethod
    def train_logits(self) -> np.ndarray:
        r"""Logits :math:`a_{i,t} = x_{i,t}^\top W^\top p`, shape (n, T)."""

    @abstractmethod
    def query(self) -> np.ndarray:
        r"""The effective query :math:`q = W^\top p` (float64, shape (d,))."""

    @abstractmethod
    def parameter_norms(self) -> dict[str, float]:
        r"""``p_norm`` :math:`\|p\|`, ``weight_change_norm`` :math:`\|W - W_0\|_F`,
        and ``invariant_drift`` :math:`\|(WW^\top - pp^\top) - W_0W_0^\top\|_F` (zero
        under gradient flow; :math:`O(\alpha^2)` a GD step)."""

    def test_logits(self) -> np.ndarray:
        return self.data.X_test @ self.query()

    #: :func:`conserved_scale` of this engine's :math:`W_0` (set by each engine).
    invariant_scale: float = 1.0


@dataclass(frozen=True)
class ReducedCoordinates:
    r"""Fixed matrices of the reduced parametrisation.

    With :math:`B = [x_{i,t}] \in \mathbb{R}^{d\times N}`, :math:`V = W_0 B`,
    :math:`K = V^\top V`, :math:`\mathrm{Gram} = B^\top B` and :math:`C = W_0^\top V`:
    by induction from :math:`p(0) = 0`, :math:`p = V a` and :math:`W = W_0 + V M B^\top`,
    so :math:`q = W^\top p = C a + B M^\top K a` and the training logits are
    :math:`B^\top q = K a + \mathrm{Gram}\,M^\top K a`.
    """

    B: np.ndarray
    K: np.ndarray
    gram: np.ndarray
    C: np.ndarray
    invariant_scale: float

    @classmethod
    def build(
        cls, config: RunConfig, data: Dataset, W0: np.ndarray | None = None, block_rows: int = 512
    ) -> ReducedCoordinates:
        """One pass over :math:`W_0` in row blocks: :math:`O(d^2 N)` time, :math:`O(dN)`
        memory."""
        B = np.ascontiguousarray(data.X_train.reshape(-1, data.d).T)
        N = B.shape[1]
        K, C = np.zeros((N, N)), np.zeros((data.d, N))
        blocks = (
            (
                (slice(r, min(r + block_rows, data.d)), W0[r : r + block_rows])
                for r in range(0, data.d, block_rows)
            )
            if W0 is not None
            else initial_weight_blocks(config, block_rows)
        )
        second = fourth = 0.0
        for _, block in blocks:
            V_rows = block @ B
            K += V_rows.T @ V_rows
            C += block.T @ V_rows
            squares = block * block
            second, fourth = second + float(squares.sum()), fourth + float((squares**2).sum())
        scale = conserved_scale(second / data.d**2, fourth / data.d**2, data.d)
        return cls(B=B, K=K, gram=B.T @ B, C=C, invariant_scale=scale)


def conserved_scale(second: float, fourth: float, d: int) -> float:
    r"""The size of the conserved matrix, :math:`\|W_0 W_0^\top\|_F`, from the mean square
    :math:`\sigma^2` and mean fourth power :math:`m_4` of :math:`W_0`'s entries: its
    expectation for iid entries,
    :math:`\sqrt{d(d\,m_4 + d(d-1)\sigma^4) + d^2(d-1)\sigma^4}` (cost :math:`O(d^2)`
    instead of the :math:`O(d^3)` product); the invariant drift is reported relative to
    it."""
    return float(np.sqrt(d * (d * fourth + d * (d - 1) * second**2) + d * d * (d - 1) * second**2))
