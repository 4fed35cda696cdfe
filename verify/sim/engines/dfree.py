r"""d-free engines: reduced GD (``dfree``) and gradient flow (``dfree-flow``) on statistics
sampled in law.

For Gaussian :math:`W_0` (entries :math:`N(0, s^2)`) and Gaussian token noise, the reduced
dynamics :math:`a \leftarrow a - \alpha (h + M\,\mathrm{Gram}\,h)`,
:math:`M \leftarrow M - \alpha\, a h^\top` (logits :math:`K a + \mathrm{Gram}\, M^\top K a`)
and the recorded observables depend on the draws only through
:math:`(K, \mathrm{Gram}, Q, E^\top A B, E^\top B)` and the scores
:math:`\gamma = B^\top \nu`. :mod:`verify.sim.dfree_law` samples their joint law exactly
in :math:`O(N^3)` time and :math:`O(N^2)` memory for any d; the runs are then the
reduced engine's and the flow engine's on those statistics, so a d-free run has the law
of a d-dimensional run with the Gaussian init (not its numbers: the draws differ). There
is no query vector and no finite test set; test metrics come from the population
(:math:`\|q\|^2` and :math:`E^\top q` are exact).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from theory.foundation.validation import require
from verify.runtime.threads import single_blas_thread
from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.dfree_data import ReducedData, draw_reduced_data
from verify.sim.engines.flow import FlowEngine
from verify.sim.engines.reduced import ReducedEngine
from verify.sim.engines.registry import engine_traits, engines_where, spoken
from verify.sim.statistics import Statistics


def dfree_statistics(config: RunConfig, data: object, W0: np.ndarray | None) -> Statistics:
    """The statistics of ``data``, which must be a d-free draw (no ``W0``, no tokens)."""
    engine = config.solver.engine
    require(
        isinstance(data, ReducedData),
        "engine",
        engine,
        f"{spoken(engines_where(tokens=True))} for data with tokens (engine {engine} runs "
        "on the data it samples in law itself)",
    )
    require(W0 is None, "engine", engine, f"an engine other than {engine} for a given W0")
    return cast(ReducedData, data).statistics


class DfreeEngine(ReducedEngine):
    r"""Reduced GD on statistics sampled in law (see the module docstring). There is no
    finite test set, and a log point is evaluated when it is captured (no test set's
    reading for many points to share), so a run keeps :math:`O(N^2)` memory rather than
    one :math:`N \times N` state per pending log point."""

    traits = engine_traits("dfree")

    def __init__(self, config: RunConfig, data: ReducedData, W0: np.ndarray | None = None):
        statistics = dfree_statistics(config, data, W0)
        # The reduced engines read of their data only n, T, y_train and train_scores (and
        # X_test, empty here), which ReducedData has.
        super().__init__(config, cast(Dataset, data), statistics=statistics)

    @classmethod
    def draw_data(cls, config: RunConfig) -> ReducedData:
        """The statistics sampled in law from ``config``'s seed (no tokens)."""
        return draw_reduced_data(config)

    def test_logits(self) -> np.ndarray:
        return np.zeros((0, self.data.T))

    def snapshot(self) -> Any:
        """The log point's evaluation itself: (test logits, parameter norms)."""
        with single_blas_thread():  # N x N products
            return self.test_logits(), self.parameter_norms()

    def evaluate(self, snapshots: list[Any]) -> list[tuple[np.ndarray, dict[str, float]]]:
        return list(snapshots)


class DfreeFlowEngine(DfreeEngine, FlowEngine):
    """Gradient flow on statistics sampled in law: the flow engine's solver, the d-free
    engine's data and evaluation."""

    traits = engine_traits("dfree-flow")


__all__ = ["DfreeEngine", "DfreeFlowEngine", "dfree_statistics"]
