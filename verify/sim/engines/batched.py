r"""Many independent GD runs that share their draws, advanced as one array program.

Runs that differ only in :math:`\|\mu\|`, :math:`\rho`, the head scale or the step size
share :math:`W_0` and the tokens' noise :math:`Z`, hence the products of
:class:`~verify.sim.statistics.ReducedSetup`. Run :math:`r` has tokens
:math:`B_r = Z + E S_r^\top` and

.. math::

    K_r a = P a + P_E (S_r^\top a) + S_r \big(P_E^\top a + P_{EE} S_r^\top a\big), \qquad
    \mathrm{Gram}_r v = Z^\top Z v + (E^\top Z)^\top S_r^\top v + S_r (E^\top Z v + S_r^\top v),

so every product with the shared :math:`N \times N` matrices is one matrix product for
all runs, and only the state :math:`(a_r, M_r)` is per run. The GD step is the reduced
engine's, :math:`a \leftarrow a - \alpha (h + M\,\mathrm{Gram}\,h)`,
:math:`M \leftarrow M - \alpha\, a h^\top`. Runs advance in chunks small enough that their
states stay in the processor's cache.
"""

from __future__ import annotations

import numpy as np

from verify.sim.engines.base import ensure_finite, single_blas_thread
from verify.sim.engines.run_view import RunView
from verify.sim.kernels import logit_gradient, score_differences
from verify.sim.statistics import ReducedSetup, Statistics


class BatchedGD:
    """GD for ``R`` runs sharing ``setup``: signals ``S`` (R, N, 2), scores (R, n, T),
    labels (R, n), step sizes (R,)."""

    name = "batched"

    def __init__(
        self,
        setup: ReducedSetup,
        signals: np.ndarray,
        scores: np.ndarray,
        labels: np.ndarray,
        alphas: np.ndarray,
        chunk: int = 8,
    ):
        self.setup = setup
        self.S = np.ascontiguousarray(signals, dtype=np.float64)
        self.scores = np.asarray(scores, dtype=np.float64)
        self.differences = score_differences(self.scores)
        self.labels = np.asarray(labels, dtype=np.float64)
        self.alphas = np.asarray(alphas, dtype=np.float64)
        runs, N = self.S.shape[:2]
        self.n, self.T = self.scores.shape[1:]
        self.a = np.zeros((runs, N))
        self.M0 = np.zeros((runs, N, N))
        # Rank-1 updates of M (alpha a, h) wait here; folded in every RANK1_BLOCK steps.
        self.pending_a = np.zeros((runs, N, self.RANK1_BLOCK))
        self.pending_h = np.zeros((runs, N, self.RANK1_BLOCK))
        self.pending = 0
        self.chunk = max(1, chunk)
        self.steps_done = 0
        self.Z_E = setup.Z[:2]  # (2, N)

    #: Steps whose rank-1 updates of M are folded in together.
    RANK1_BLOCK = 32

    @property
    def runs(self) -> int:
        return self.S.shape[0]

    @property
    def M(self) -> np.ndarray:
        """Every run's :math:`M` (R, N, N), the waiting updates folded in."""
        self._fold(slice(None))
        self.pending = 0
        return self.M0

    def _fold(self, rows: slice) -> None:
        k = self.pending
        if k:
            self.M0[rows] -= self.pending_a[rows, :, :k] @ np.swapaxes(
                self.pending_h[rows, :, :k], 1, 2
            )

    # -- the shared-matrix products ------------------------------------------------------
    @staticmethod
    def _apply(v: np.ndarray, S: np.ndarray) -> np.ndarray:
        r""":math:`S_r^\top v_r` for every run, (r, 2)."""
        return (v[:, None, :] @ S)[:, 0]

    def _K(self, a: np.ndarray, S: np.ndarray) -> np.ndarray:
        s = self.setup
        Sa = self._apply(a, S)
        inner = a @ s.P_E + Sa @ s.P_EE.T
        return a @ s.P + Sa @ s.P_E.T + (S @ inner[:, :, None])[..., 0]

    def _gram(self, v: np.ndarray, S: np.ndarray) -> np.ndarray:
        Sv = self._apply(v, S)
        inner = v @ self.Z_E.T + Sv
        return v @ self.setup.gram0 + Sv @ self.Z_E + (S @ inner[:, :, None])[..., 0]

    def _M_transpose_times(self, rows: slice, v: np.ndarray) -> np.ndarray:
        r""":math:`M_r^\top v_r` with the waiting updates:
        :math:`M_0^\top v - H (A^\top v)` (the buffer A holds :math:`\alpha a`)."""
        k = self.pending
        out = (v[:, None, :] @ self.M0[rows])[:, 0]
        if k:
            weights = v[:, None, :] @ self.pending_a[rows, :, :k]  # (r, 1, k)
            out -= (weights @ np.swapaxes(self.pending_h[rows, :, :k], 1, 2))[:, 0]
        return out

    def _M_times(self, rows: slice, v: np.ndarray) -> np.ndarray:
        r""":math:`M_r v_r` with the waiting updates: :math:`M_0 v - A (H^\top v)`."""
        k = self.pending
        out = (self.M0[rows] @ v[:, :, None])[..., 0]
        if k:
            weights = v[:, None, :] @ self.pending_h[rows, :, :k]  # (r, 1, k)
            out -= (weights @ np.swapaxes(self.pending_a[rows, :, :k], 1, 2))[:, 0]
        return out

    def _logits(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """(K a, training logits) of the runs ``rows``, flat (r, N)."""
        S = self.S[rows]
        Ka = self._K(self.a[rows], S)
        return Ka, Ka + self._gram(self._M_transpose_times(rows, Ka), S)

    def _step_chunk(self, rows: slice) -> None:
        S = self.S[rows]
        _, logits = self._logits(rows)
        ensure_finite(logits, "training logits", self.steps_done)
        shape = (logits.shape[0], self.n, self.T)
        h = logit_gradient(
            logits.reshape(shape), self.scores[rows], self.differences[rows], self.labels[rows]
        ).logit_gradient.reshape(logits.shape)
        update = h + self._M_times(rows, self._gram(h, S))
        self.pending_a[rows, :, self.pending] = self.alphas[rows, None] * self.a[rows]
        self.pending_h[rows, :, self.pending] = h
        self.a[rows] -= self.alphas[rows, None] * update

    def advance_to(self, step: float) -> None:
        """Run every run until ``step`` GD steps are done (one BLAS thread; chunk by chunk,
        so that a chunk's state stays in the processor's cache)."""
        steps = max(int(step - self.steps_done), 0)
        start = self.pending
        with single_blas_thread():
            for first in range(0, self.runs, self.chunk):
                rows = slice(first, first + self.chunk)
                self.pending = start
                for _ in range(steps):
                    self._step_chunk(rows)
                    self.pending += 1
                    if self.pending == self.RANK1_BLOCK:
                        self._fold(rows)
                        self.pending = 0
        self.steps_done += steps

    def view(self, run: int) -> BatchedRunView:
        return BatchedRunView(self, run)


class BatchedRunView(RunView):
    """One run of a :class:`BatchedGD`: its statistics are the shared set-up's with the
    run's signal added, formed when first read."""

    def build_statistics(self) -> Statistics:
        return self.batch.setup.statistics(self.batch.S[self.run])

    def train_logits(self) -> np.ndarray:
        _, logits = self.batch._logits(slice(self.run, self.run + 1))
        return logits.reshape(self.batch.n, self.batch.T)


__all__ = ["BatchedGD", "BatchedRunView"]
