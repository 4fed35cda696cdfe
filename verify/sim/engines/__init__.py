"""Engines: dense (literal float64), reduced (N = nT coordinates), mp (mpmath), flow (ODE),
mp-flow (the ODE in mpmath), dfree and dfree-flow (reduced GD and flow on statistics sampled
in law, any d).

Each engine class lives in its own module and is imported when first asked for, so that a
run imports only the engine it uses (the flow engine brings SciPy's ODE solvers, the mp
engines mpmath).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import numpy as np

from verify.sim.config import DFREE_ENGINES, RunConfig
from verify.sim.data import Dataset, generate
from verify.sim.engines.base import Engine, NonFiniteError

if TYPE_CHECKING:
    from verify.sim.dfree_data import ReducedData

#: Engine name -> (module, class).
ENGINE_CLASSES: dict[str, tuple[str, str]] = {
    "dense": ("verify.sim.engines.dense", "DenseEngine"),
    "reduced": ("verify.sim.engines.reduced", "ReducedEngine"),
    "mp": ("verify.sim.engines.mp", "MpEngine"),
    "flow": ("verify.sim.engines.flow", "FlowEngine"),
    "mp-flow": ("verify.sim.engines.mp_flow", "MpFlowEngine"),
    "dfree": ("verify.sim.engines.dfree", "DfreeEngine"),
    "dfree-flow": ("verify.sim.engines.dfree", "DfreeFlowEngine"),
}


def engine_class(name: str) -> Any:
    """The engine class called ``name`` (its module imported on first use)."""
    module, cls = ENGINE_CLASSES[name]
    return getattr(importlib.import_module(module), cls)


def make_engine(
    config: RunConfig, data: Dataset | ReducedData, W0: np.ndarray | None = None
) -> Engine:
    """The engine ``config.solver.engine`` on ``data`` (``W0`` given, or drawn from the seed)."""
    return engine_class(config.solver.engine)(config, data, W0)


def draw_data(config: RunConfig) -> Dataset | ReducedData:
    """The run's data drawn from the seed: tokens (:func:`verify.sim.data.generate`), or for
    the d-free engines the statistics sampled in law
    (:func:`verify.sim.dfree_data.draw_reduced_data`)."""
    if config.solver.engine in DFREE_ENGINES:
        from verify.sim.dfree_data import draw_reduced_data

        return draw_reduced_data(config)
    return generate(config)


def __getattr__(name: str) -> Any:
    for engine, (_, cls) in ENGINE_CLASSES.items():
        if cls == name:
            return engine_class(engine)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Engine",
    "NonFiniteError",
    "ENGINE_CLASSES",
    "engine_class",
    "make_engine",
    "draw_data",
]
