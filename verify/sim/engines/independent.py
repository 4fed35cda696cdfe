r"""Independent GD runs of one :math:`(n, T)`, each on its own statistics, as one array program.

Runs that share nothing (other seeds, d-free draws) still have the same shapes: run
:math:`r` holds :math:`K_r`, :math:`\mathrm{Gram}_r` (stacked, :math:`R \times N \times N`)
and its state :math:`(a_r, M_r)`, and takes the reduced engine's GD step

.. math::

    \text{logits}_r = K_r a_r + \mathrm{Gram}_r M_r^\top K_r a_r, \qquad
    a_r \leftarrow a_r - \alpha_r (h_r + M_r \mathrm{Gram}_r h_r), \qquad
    M_r \leftarrow M_r - \alpha_r\, a_r h_r^\top,

as stacked matrix products, so a step of :math:`R` runs costs a few NumPy calls instead
of :math:`R` times as many. Runs advance in chunks small enough that their matrices stay
in the processor's cache while the chunk takes all its steps. Many seeds of the d-free
engine (or of the reduced engine, from each seed's
:class:`~verify.sim.statistics.ReducedSetup`) run this way; each run is recorded through
:class:`IndependentRunView`, which answers what :func:`verify.sim.simulate.record` asks
(the query through its moments, no finite test set).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from verify.sim.engines.base import ensure_finite, single_blas_thread
from verify.sim.engines.run_view import RunView
from verify.sim.kernels import logit_gradient, score_differences
from verify.sim.statistics import Statistics


def _apply(matrices: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """:math:`X_r v_r` for every run: (R, N, N) and (R, N) -> (R, N)."""
    return np.matmul(matrices, vectors[:, :, None])[:, :, 0]


def _apply_transposed(matrices: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    r""":math:`X_r^\top v_r` for every run."""
    return np.matmul(vectors[:, None, :], matrices)[:, 0, :]


class IndependentGD:
    """GD for runs with ``statistics`` (one per run), scores (R, n, T), labels (R, n) and
    step sizes (R,); ``chunk`` runs advance together (default: as many as keep about
    1 MB of matrices)."""

    name = "independent"

    def __init__(
        self,
        statistics: Sequence[Statistics],
        scores: np.ndarray,
        labels: np.ndarray,
        alphas: np.ndarray,
        chunk: int | None = None,
    ):
        self.statistics = list(statistics)
        self.K = np.stack([s.K for s in self.statistics])
        self.gram = np.stack([s.gram for s in self.statistics])
        self.scores = np.asarray(scores, dtype=np.float64)
        self.differences = score_differences(self.scores)
        self.labels = np.asarray(labels, dtype=np.float64)
        self.alphas = np.asarray(alphas, dtype=np.float64)[:, None]
        runs, N = self.K.shape[:2]
        self.a = np.zeros((runs, N))
        self.M = np.zeros((runs, N, N))
        self.chunk = max(1, chunk if chunk is not None else (1 << 17) // (N * N))
        self.steps_done = 0

    def logits(self, rows: slice = slice(None)) -> np.ndarray:
        """The training logits of the runs ``rows`` (all by default), flat (r, N)."""
        Ka = _apply(self.K[rows], self.a[rows])
        return Ka + _apply(self.gram[rows], _apply_transposed(self.M[rows], Ka))

    def _step(self, rows: slice, done: int) -> None:
        """One GD step of the runs ``rows``, which have done ``done`` steps."""
        logits = self.logits(rows)
        ensure_finite(logits, "training logits", done)
        shape = (logits.shape[0], *self.scores.shape[1:])
        h = logit_gradient(
            logits.reshape(shape), self.scores[rows], self.differences[rows], self.labels[rows]
        ).logit_gradient.reshape(logits.shape)
        M, a, alphas = self.M[rows], self.a[rows], self.alphas[rows]
        change = h + _apply(M, _apply(self.gram[rows], h))
        M -= (alphas * a)[:, :, None] * h[:, None, :]
        a -= alphas * change

    def advance_to(self, step: float) -> None:
        """Run every run until ``step`` GD steps are done, chunk by chunk (one BLAS
        thread)."""
        steps = max(int(step) - self.steps_done, 0)
        with single_blas_thread():
            for start in range(0, self.a.shape[0], self.chunk):
                rows = slice(start, start + self.chunk)
                for done in range(self.steps_done, self.steps_done + steps):
                    self._step(rows, done)
        self.steps_done += steps

    def view(self, run: int) -> IndependentRunView:
        return IndependentRunView(self, run)


class IndependentRunView(RunView):
    """Run ``run`` of an :class:`IndependentGD`, on its own statistics."""

    def build_statistics(self) -> Statistics:
        return self.batch.statistics[self.run]

    def train_logits(self) -> np.ndarray:
        logits = self.batch.logits(slice(self.run, self.run + 1))
        return logits.reshape(self.batch.scores.shape[1:])


__all__ = ["IndependentGD", "IndependentRunView"]
