"""One run of a batch of GD runs, read as :func:`verify.sim.simulate.record` reads an engine."""

from __future__ import annotations

from typing import Any

import numpy as np

from verify.sim.statistics import Statistics


class RunView:
    """Run ``run`` of ``batch`` (an engine holding every run's state ``a`` (R, N) and
    ``M`` (R, N, N) and its ``scores``): the query is seen through its moments and there
    is no finite test set, so a snapshot is evaluated at once. Subclasses say where the
    run's :class:`~verify.sim.statistics.Statistics` come from."""

    def __init__(self, batch: Any, run: int):
        self.batch, self.run = batch, run
        self._statistics: Statistics | None = None

    def build_statistics(self) -> Statistics:
        raise NotImplementedError

    @property
    def statistics(self) -> Statistics:
        if self._statistics is None:
            self._statistics = self.build_statistics()
        return self._statistics

    @property
    def steps_done(self) -> float:
        return float(self.batch.steps_done)

    @property
    def invariant_scale(self) -> float:
        return self.statistics.invariant_scale

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """The run's :math:`(a, M)`."""
        return self.batch.a[self.run], self.batch.M[self.run]

    def query_moments(self) -> tuple[float, np.ndarray]:
        return self.statistics.query_moments(*self.state())

    def test_logits(self) -> np.ndarray:
        return np.zeros((0, self.batch.scores.shape[-1]))

    def snapshot(self) -> tuple[np.ndarray, dict[str, float]]:
        return self.test_logits(), self.parameter_norms()

    def evaluate(self, snapshots: list[Any]) -> list[tuple[np.ndarray, dict[str, float]]]:
        return list(snapshots)

    def parameter_norms(self) -> dict[str, float]:
        return self.statistics.parameter_norms(*self.state())


__all__ = ["RunView"]
