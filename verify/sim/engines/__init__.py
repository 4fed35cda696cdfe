"""Engines: dense (literal float64), reduced (N = nT coordinates), mp (mpmath), flow (ODE)."""

from __future__ import annotations

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import Dataset
from verify.sim.engines.base import Engine, NonFiniteError, ReducedCoordinates
from verify.sim.engines.dense import DenseEngine
from verify.sim.engines.flow import FlowEngine
from verify.sim.engines.reduced import MpEngine, ReducedEngine

ENGINE_CLASSES: dict[str, type[Engine]] = {
    "dense": DenseEngine, "reduced": ReducedEngine, "mp": MpEngine, "flow": FlowEngine,
}


def make_engine(config: RunConfig, data: Dataset, W0: np.ndarray | None = None) -> Engine:
    """The engine ``config.engine`` on ``data`` (``W0`` given, or drawn from ``config.seed``)."""
    return ENGINE_CLASSES[config.engine](config, data, W0)


__all__ = ["Engine", "NonFiniteError", "ReducedCoordinates", "DenseEngine", "ReducedEngine",
           "MpEngine", "FlowEngine", "ENGINE_CLASSES", "make_engine"]
