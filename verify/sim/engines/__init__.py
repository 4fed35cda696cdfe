"""Engines: the ways a run advances (literal GD, reduced coordinates, gradient flow, in
float64 or mpmath, on drawn tokens or on statistics sampled in law).

Which engines exist and what each is (its traits, memory and cost) is declared in
:mod:`verify.sim.engines.registry`. Each engine class lives in its own module and is
imported when first asked for, so that a run imports only the engine it uses (the flow
engine brings SciPy's ODE solvers, the mp engines mpmath); reading the registry imports
none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from verify.sim.engines.registry import (
    class_names,
    engine_class,
    engine_names,
    engine_traits,
    engines_where,
)
from verify.sim.engines.traits import EngineTraits

if TYPE_CHECKING:
    import numpy as np

    from verify.sim.config import RunConfig
    from verify.sim.data import Dataset
    from verify.sim.dfree_data import ReducedData
    from verify.sim.engines.base import Engine


def make_engine(
    config: RunConfig, data: Dataset | ReducedData, W0: np.ndarray | None = None
) -> Engine:
    """The engine ``config.solver.engine`` on ``data`` (``W0`` given, or drawn from the seed)."""
    return engine_class(config.solver.engine)(config, data, W0)


def draw_data(config: RunConfig) -> Dataset | ReducedData:
    """The run's data drawn from the seed, as its engine reads it: tokens
    (:func:`verify.sim.data.generate`), or for the d-free engines the statistics sampled in
    law (:func:`verify.sim.dfree_data.draw_reduced_data`)."""
    return engine_class(config.solver.engine).draw_data(config)


def __getattr__(name: str) -> Any:
    """``Engine``, ``NonFiniteError`` and the engine classes, imported on first use."""
    if name in ("Engine", "NonFiniteError"):
        return getattr(importlib.import_module("verify.sim.engines.base"), name)
    engine = class_names().get(name)
    if engine is not None:
        return engine_class(engine)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Engine",
    "EngineTraits",
    "NonFiniteError",
    "engine_class",
    "engine_names",
    "engine_traits",
    "engines_where",
    "make_engine",
    "draw_data",
]
