r"""GD runs of one :math:`(n, T)`, each on its own statistics, advanced by one compiled loop.

Run :math:`r` holds :math:`K_r`, :math:`\mathrm{Gram}_r` (stacked, :math:`R \times N \times N`)
and its state :math:`(a_r, M_r)`, and takes the reduced engine's GD step

.. math::

    \text{logits}_r = K_r a_r + \mathrm{Gram}_r M_r^\top K_r a_r, \qquad
    a_r \leftarrow a_r - \alpha_r (h_r + M_r \mathrm{Gram}_r h_r), \qquad
    M_r \leftarrow M_r - \alpha_r\, a_r h_r^\top,

in :func:`verify.sim.engines.compiled.advance_runs`: a run takes all its steps with its
matrices in the processor's cache, without a Python call per step. Seeds of the d-free
engine, or seeds of the reduced engine (from each seed's
:class:`~verify.sim.statistics.ReducedSetup`) run this way. Runs that share their draws
(:func:`verify.sim.batch.simulate_group`: one :math:`W_0` and noise, many
:math:`\|\mu\|`) also give their matrices' common part (:class:`SharedMatrices`), and
step two at a time on it (:func:`verify.sim.engines.compiled.advance_shared_runs`). Each
run is recorded
through :class:`IndependentRunView`, which answers what :func:`verify.sim.simulate.record`
asks (the query through its moments, no finite test set).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from theory.variants.kernels import noisy_gradient_ratio
from verify.sim.engines.base import non_finite_message
from verify.sim.kernels import logit_gradient, score_differences
from verify.sim.statistics import Statistics


@dataclass(frozen=True)
class SharedMatrices:
    r"""The runs' matrices as a common part and low-rank terms:
    :math:`K_r = K_0 + U_r C_r U_r^\top`, :math:`\mathrm{Gram}_r = G_0 + V_r D_r V_r^\top`."""

    K0: np.ndarray  # (N, N)
    gram0: np.ndarray  # (N, N)
    K_factors: np.ndarray  # U_r^T, (R, k, N)
    K_cores: np.ndarray  # C_r, (R, k, k)
    gram_factors: np.ndarray  # V_r^T, (R, k, N)
    gram_cores: np.ndarray  # D_r, (R, k, k)


class IndependentGD:
    """GD for runs with ``statistics`` (one per run), scores (R, n, T), labels (R, n) and
    step sizes (R,); ``shared``: the same matrices as a common part and low-rank terms (the
    runs then step two at a time)."""

    name = "independent"

    def __init__(
        self,
        statistics: Sequence[Statistics],
        scores: np.ndarray,
        labels: np.ndarray,
        alphas: np.ndarray,
        shared: SharedMatrices | None = None,
    ):
        self.statistics = list(statistics)
        self.shared = shared
        self.K = np.stack([s.K for s in self.statistics])
        self.gram = np.stack([s.gram for s in self.statistics])
        self.scores = np.ascontiguousarray(scores, dtype=np.float64)
        self.differences = np.ascontiguousarray(score_differences(self.scores))
        self.labels = np.ascontiguousarray(labels, dtype=np.float64)
        self.alphas = np.ascontiguousarray(alphas, dtype=np.float64)
        runs, N = self.K.shape[:2]
        self.a = np.zeros((runs, N))
        self.M = np.zeros((runs, N, N))
        #: Per run: 0 while it runs; else one more than the step whose logits were not finite.
        self.stopped = np.zeros(runs, dtype=np.int64)
        self.steps_done = 0

    def logits(self, rows: slice = slice(None)) -> np.ndarray:
        """The training logits of the runs ``rows`` (all by default), flat (r, N)."""
        Ka = np.matmul(self.K[rows], self.a[rows, :, None])
        u = np.matmul(np.swapaxes(self.M[rows], 1, 2), Ka)
        return (Ka + np.matmul(self.gram[rows], u))[..., 0]

    def advance_to(self, step: float) -> dict[int, str]:
        """Run every run until ``step`` GD steps are done; the runs that stopped in these
        steps (training logits not finite) and why."""
        from verify.sim.engines.compiled import advance_runs, advance_shared_runs

        steps = max(int(step) - self.steps_done, 0)
        running = self.stopped == 0
        state = (self.a, self.M, self.scores, self.differences, self.labels, self.alphas)
        shared = self.shared
        if shared is None:
            advance_runs(self.K, self.gram, *state, self.steps_done, steps, self.stopped)
        else:
            advance_shared_runs(
                shared.K0,
                shared.gram0,
                shared.K_factors,
                shared.K_cores,
                shared.gram_factors,
                shared.gram_cores,
                *state,
                self.steps_done,
                steps,
                self.stopped,
            )
        self.steps_done += steps
        return {
            int(run): non_finite_message("training logits", self.stopped[run] - 1)
            for run in np.flatnonzero(running & (self.stopped > 0))
        }

    def view(self, run: int, noisy: np.ndarray | None = None) -> IndependentRunView:
        """Run ``run`` as an observable; ``noisy`` its flipped samples (for the noisy-gradient
        ratio, NaN without)."""
        return IndependentRunView(self, run, noisy)


class IndependentRunView:
    """Run ``run`` of an :class:`IndependentGD`, as :func:`verify.sim.simulate.record` reads
    an engine: the query is seen through its moments on the run's own statistics, and there
    is no finite test set, so a snapshot is evaluated at once."""

    def __init__(self, batch: IndependentGD, run: int, noisy: np.ndarray | None = None):
        self.batch, self.run, self.noisy = batch, run, noisy
        self.statistics = batch.statistics[run]
        #: The training logits and the step they belong to (a log point reads them twice).
        self._logits: tuple[int, np.ndarray] | None = None

    @property
    def steps_done(self) -> float:
        return float(self.batch.steps_done)

    @property
    def invariant_scale(self) -> float:
        return self.statistics.invariant_scale

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """The run's :math:`(a, M)`."""
        return self.batch.a[self.run], self.batch.M[self.run]

    def train_logits(self) -> np.ndarray:
        """The run's training logits (n, T) at the batch's current step (read-only)."""
        step = self.batch.steps_done
        if self._logits is None or self._logits[0] != step:
            logits = self.batch.logits(slice(self.run, self.run + 1))
            logits = logits.reshape(self.batch.scores.shape[1:])
            logits.setflags(write=False)
            self._logits = (step, logits)
        return self._logits[1]

    def query_moments(self) -> tuple[float, np.ndarray]:
        return self.statistics.query_moments(*self.state())

    def token_scores(self) -> np.ndarray:
        return self.batch.scores[self.run]

    def head(self) -> None:
        """The head does not move in a batch."""
        return None

    def noisy_gradient_ratio(self) -> float:
        r""":math:`\|G_N\|_F/\|G_C\|_F` in reduced coordinates
        (:func:`theory.variants.kernels.noisy_gradient_ratio`), the noisy samples being the
        flipped ones of the run's data (given to :meth:`IndependentGD.view`)."""
        if self.noisy is None:
            return float("nan")
        b = self.batch
        logits = self.train_logits()
        h = logit_gradient(logits, b.scores[self.run], b.differences[self.run], b.labels[self.run])
        a, M = self.state()
        K, gram = self.statistics.K, self.statistics.gram
        return float(noisy_gradient_ratio(K, gram, a, M, h.logit_gradient, self.noisy))

    def test_logits(self) -> np.ndarray:
        return np.zeros((0, self.batch.scores.shape[-1]))

    def snapshot(self) -> tuple[np.ndarray, dict[str, float]]:
        return self.test_logits(), self.parameter_norms()

    def evaluate(self, snapshots: list[Any]) -> list[tuple[np.ndarray, dict[str, float]]]:
        return list(snapshots)

    def parameter_norms(self) -> dict[str, float]:
        return self.statistics.parameter_norms(*self.state())


__all__ = ["IndependentGD", "IndependentRunView", "SharedMatrices"]
