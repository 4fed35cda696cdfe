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

A trained head stays in the span of :math:`\nu_0` and the training tokens,
:math:`\nu = \nu_0 + Bc`: its gradient is :math:`Bg`, :math:`g = \partial L/\partial\gamma`,
so :math:`c \leftarrow c - \alpha_\nu g` and the scores are
:math:`\gamma = B^\top\nu_0 + \mathrm{Gram}\,c` (N more coordinates). The noisy-gradient
ratio is read in the same coordinates
(:func:`theory.variants.kernels.noisy_gradient_ratio`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from theory.variants.kernels import noisy_gradient_ratio
from verify.runtime.threads import single_blas_thread
from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines.base import Engine, ensure_finite, reduced_setup
from verify.sim.engines.registry import engine_traits
from verify.sim.gradient import Kernel, head_gradient, head_step
from verify.sim.kernels import FLOAT64
from verify.sim.statistics import ReducedSetup, Statistics


class ReducedEngine(Engine):
    """Float64 GD in reduced coordinates, on the :class:`~verify.sim.statistics.Statistics`
    of the draws (and, for the query vector and a finite test set, the reduced set-up;
    ``signal``: the signal part S of the tokens when the set-up holds the noise alone,
    :math:`B = Z + ES^\top`, as runs that share their draws have it)."""

    traits = engine_traits("reduced")

    def __init__(
        self,
        config: RunConfig,
        data: Dataset,
        W0: np.ndarray | None = None,
        setup: ReducedSetup | None = None,
        statistics: Statistics | None = None,
        signal: np.ndarray | None = None,
    ):
        super().__init__(config, data, FLOAT64)
        if statistics is None:
            setup = setup or reduced_setup(config, data, W0)
            statistics = setup.statistics(signal)
        self.setup, self.statistics, self.signal = setup, statistics, signal
        self.invariant_scale = statistics.invariant_scale
        self._use(statistics.K, statistics.gram)
        N = self.K.shape[0]
        self.a = np.zeros(N)
        self.M = np.zeros((N, N))
        self.c = np.zeros(N) if self.trained_head else None
        # The rank-1 updates of M wait in (N, RANK1_BLOCK) buffers and are folded into M by
        # one matrix product every RANK1_BLOCK steps (float64 only).
        self._pending_a = np.empty((N, self.RANK1_BLOCK))
        self._pending_h = np.empty((N, self.RANK1_BLOCK))

    #: Steps whose rank-1 updates of M are folded in together.
    RANK1_BLOCK = 16
    _pending = 0

    @property
    def M(self) -> np.ndarray:
        """:math:`M`, with the waiting rank-1 updates folded in."""
        if self._pending:
            k = self._pending
            self._M -= self.alpha * (self._pending_a[:, :k] @ self._pending_h[:, :k].T)
            self._pending = 0
        return self._M

    @M.setter
    def M(self, value: np.ndarray) -> None:
        self._M, self._pending = value, 0

    def _use(self, K: np.ndarray, gram: np.ndarray) -> None:
        self.K, self.gram = K, gram
        self.alpha = self.arithmetic.asarray(np.asarray(self.config.training.alpha))[()]
        if self.trained_head:
            self.alpha_nu = self.arithmetic.asarray(np.asarray(head_step(self.config)))[()]

    def _head_scores(self, c: np.ndarray | None) -> np.ndarray | None:
        r"""A trained head's scores :math:`B^\top\nu_0 + \mathrm{Gram}\,c` (n, T), or
        ``None`` (the fixed head's are the kernel's own)."""
        if c is None:
            return None
        return self.scores + (self.gram @ c).reshape(self.scores.shape)

    def _head_step(self, output: object) -> None:
        r""":math:`c \leftarrow c - \alpha_\nu g` (a trained head)."""
        if self.c is not None:
            self.c = self.c - self.alpha_nu * head_gradient(output).reshape(-1)

    # -- dynamics --------------------------------------------------------------
    def _flat_logits(self, a: np.ndarray, M: np.ndarray) -> np.ndarray:
        Ka = self.K @ a
        return Ka + self.gram @ (M.T @ Ka)

    def step(self, until: float) -> None:
        if self.arithmetic is not FLOAT64:
            logits = self._flat_logits(self.a, self.M)
            ensure_finite(logits, "training logits", self.steps_done)
            shaped = logits.reshape(self.data.n, self.data.T)
            output = self.kernel(shaped, self._head_scores(self.c))
            h = output.logit_gradient.reshape(-1)
            update_a = h + self.M @ (self.gram @ h)
            self.M -= self.alpha * np.outer(self.a, h)
            self.a = self.a - self.alpha * update_a
            self._head_step(output)
        else:
            self._float64_step()
        self.steps_done += 1

    def _float64_step(self) -> None:
        r"""One GD step with :math:`M = M_0 - \alpha \sum_j a_j h_j^\top` over the waiting
        updates: :math:`M^\top v` and :math:`M v` cost :math:`O(N^2 + Nk)`, and the
        :math:`k` rank-1 terms are folded into :math:`M_0` by one matrix product."""
        k, alpha = self._pending, self.alpha
        A, H = self._pending_a[:, :k], self._pending_h[:, :k]
        Ka = self.K @ self.a
        u = Ka @ self._M - alpha * (H @ (Ka @ A))  # M^T K a
        logits = Ka + self.gram @ u
        ensure_finite(logits, "training logits", self.steps_done)
        shaped = logits.reshape(self.data.n, self.data.T)
        if self.events:
            self._check_events(shaped, self.steps_done)
        output = self.kernel(shaped, self._head_scores(self.c))
        h = output.logit_gradient.reshape(-1)
        self._head_step(output)
        Gh = self.gram @ h
        MGh = self._M @ Gh - alpha * (A @ (H.T @ Gh))  # M Gram h
        self._pending_a[:, k], self._pending_h[:, k] = self.a, h
        self._pending = k + 1
        self.a = self.a - alpha * (h + MGh)
        if self._pending == self.RANK1_BLOCK:
            _ = self.M  # fold

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

    def _tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """:math:`(AB, B)`, :math:`A = W_0^\top W_0` and B the training tokens (d, N)."""
        setup = self._require_setup()
        return setup.A_tokens(self.signal), setup.tokens(self.signal)

    def query(self) -> np.ndarray:
        a, M = self._float_state()
        AB, B = self._tokens()
        return AB @ a + B @ (M.T @ (self.statistics.K @ a))

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """The state :math:`(a, M)`, copied (float64)."""
        a, M = self._float_state()
        return a.copy(), M.copy()

    def evaluate(self, snapshots: list[Any]) -> list[tuple[np.ndarray, dict[str, float]]]:
        r"""Test logits and parameter norms of many snapshots at once: the queries
        :math:`q_k = C_0 a_k + Z u_k` of all points meet the test tokens in one matrix
        product (the test set is read once, not once per point), and the norms are
        stacked products of :math:`N \times N` matrices."""
        if not snapshots:
            return []
        a = np.stack([state[0] for state in snapshots])
        M = np.stack([state[1] for state in snapshots])
        with single_blas_thread():  # many small products
            norms = self.statistics.stacked_norms(a, M)
        test = self.data.X_test
        if test.shape[0] == 0:
            logits = [np.zeros((0, self.data.T))] * len(snapshots)
        else:
            AB, B = self._tokens()
            u = np.einsum("lji,lj->li", M, a @ self.statistics.K.T)
            queries = a @ AB.T + u @ B.T  # (points, d)
            # (points, m T): each point's logits contiguous, the test set read once
            flat = queries @ test.reshape(-1, self.data.d).T
            logits = list(flat.reshape(len(snapshots), *test.shape[:2]))
        return list(zip(logits, norms, strict=True))

    def parameter_norms(self) -> dict[str, float]:
        return self.statistics.parameter_norms(*self._float_state())

    # -- variants ----------------------------------------------------------------
    def _float_head(self) -> np.ndarray | None:
        """A trained head's coordinates c (float64), or ``None``."""
        return None if self.c is None else np.asarray(self.c, dtype=np.float64)

    def head(self) -> np.ndarray | None:
        r""":math:`\nu = \nu_0 + Bc` (a trained head), or ``None``."""
        c = self._float_head()
        if c is None:
            return None
        return np.asarray(self.data.nu, dtype=np.float64) + self._tokens()[1] @ c

    def token_scores(self) -> np.ndarray:
        c = self._float_head()
        if c is None:
            return super().token_scores()
        base = np.asarray(self.data.train_scores, dtype=np.float64)
        return base + (self.statistics.gram @ c).reshape(base.shape)

    def noisy_gradient_ratio(self) -> float:
        """In reduced coordinates, from the float64 state and kernel."""
        a, M = self._float_state()
        if self.arithmetic is FLOAT64:
            kernel = self.gradient
        else:
            kernel = Kernel.of_run(self.config, self.data, FLOAT64)
        logits = self.statistics.K @ a
        logits = (logits + self.statistics.gram @ (M.T @ logits)).reshape(self.data.n, self.data.T)
        scores = self.token_scores() if self.c is not None else None
        h = kernel(logits, scores).logit_gradient
        K, gram = self.statistics.K, self.statistics.gram
        return float(noisy_gradient_ratio(K, gram, a, M, h, self.data.noisy))
