"""Simulations the checks measure, run once and cached, and the measurements they take."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verify.checks.regimes import RegimeThresholds, regimes_of
from verify.sim.config import RunConfig, preset
from verify.sim.data import GROUP_NAMES, Dataset, generate
from verify.sim.engines import ReducedEngine
from verify.sim.simulate import RunResult, simulate


def initial_velocities(config: RunConfig, data: Dataset) -> np.ndarray:
    r"""Exact initial logit velocities :math:`\dot a(0)`, shape (n, T). Since :math:`p(0) = 0`
    the first GD step leaves W unchanged and gives :math:`q_1 = -\alpha W_0^\top W_0 G`,
    which is exactly :math:`\alpha\,\dot q(0)` of the flow."""
    engine = ReducedEngine(config, data)
    engine.advance_to(1)
    return engine.train_logits() / config.training.alpha


def group_gap_velocities(
    velocities: np.ndarray, data: Dataset, leader: str, samples: np.ndarray
) -> dict[str, np.ndarray]:
    """Per sample, the leader group's mean velocity minus each other group's mean velocity."""
    code = {name: i for i, name in enumerate(GROUP_NAMES)}
    lead = velocities[samples][:, data.groups == code[leader]].mean(axis=1)
    out = {}
    for name in GROUP_NAMES:
        mask = data.groups == code[name]
        if name != leader and mask.any():
            out[name] = lead - velocities[samples][:, mask].mean(axis=1)
    return out


def selected_groups(logits: np.ndarray, data: Dataset) -> np.ndarray:
    """Group name of the argmax token of each sequence."""
    return np.array([GROUP_NAMES[g] for g in data.groups[np.argmax(logits, axis=1)]])


def measured_regime(result: RunResult, thresholds: RegimeThresholds | None = None) -> str:
    """The regime of a finished run by the paper's mechanism
    (:func:`verify.checks.regimes.classify_regime` on its final row)."""
    return regimes_of(result.final, thresholds)["regime"]


@dataclass
class Evidence:
    """Runs of the paper's presets, cached by (preset, seed, kind)."""

    seeds: tuple[int, ...] = (0, 1, 2)
    velocity_seeds: tuple[int, ...] = tuple(range(8))
    flow_steps: float = 1e12
    test_size: int = 1000
    _cache: dict = field(default_factory=dict)

    def config(self, name: str, seed: int, **changes) -> RunConfig:
        return preset(name, seed=seed, test_size=self.test_size, **changes)

    def data(self, name: str, seed: int) -> Dataset:
        key = ("data", name, seed)
        if key not in self._cache:
            self._cache[key] = generate(self.config(name, seed))
        return self._cache[key]

    def gd(self, name: str, seed: int) -> RunResult:
        """The paper's protocol: 1000 GD steps (reduced engine), logged every 10 steps."""
        key = ("gd", name, seed)
        if key not in self._cache:
            config = self.config(name, seed, log_every=10, log_geometric=0)
            self._cache[key] = simulate(config, self.data(name, seed))
        return self._cache[key]

    def flow(self, name: str, seed: int) -> RunResult:
        """Gradient flow to ``flow_steps`` GD-equivalent steps, geometric logging."""
        key = ("flow", name, seed)
        if key not in self._cache:
            steps = int(self.flow_steps)
            config = self.config(
                name, seed, engine="flow", steps=steps, log_every=steps, log_geometric=49
            )
            self._cache[key] = simulate(config, self.data(name, seed))
        return self._cache[key]

    def velocities(self, name: str, seed: int) -> tuple[np.ndarray, Dataset]:
        """Initial velocities on a training set of ``seed`` (no test set is drawn)."""
        key = ("velocity", name, seed)
        if key not in self._cache:
            config = preset(name, seed=seed, test_size=0)
            data = generate(config)
            self._cache[key] = (initial_velocities(config, data), data)
        return self._cache[key]
