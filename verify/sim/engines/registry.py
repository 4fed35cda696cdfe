r"""Every engine, declared once: its traits, its memory and its cost, in one list.

The traits live here rather than in the engines' modules so that they can be read
without importing those modules (the flow engines bring SciPy's ODE solvers, the mp
engines mpmath): the configuration's choices and validation, the command line, the
memory check, the sweeps' choice of engines and the README's table read this list, and
an engine's class binds its own entry (``traits = engine_traits("dense")``) when its
module is imported. Adding an engine: its module, and one entry here.

Memory (the engine's own arrays, float64 unless stated; :math:`N = nT`):

* ``dense``: :math:`W`, :math:`W_0` and the step's :math:`d \times d` temporaries,
  :math:`4d^2`;
* on tokens in reduced coordinates (``reduced``, ``flow``, ``mp``, ``mp-flow``), at the
  set-up's peak: :math:`Z`, :math:`C_0` and a :math:`d \times N` temporary
  (:math:`3dN`), a block of :math:`W_0` with its squares and fourth powers
  (:math:`3 \cdot 512\,d`), :math:`K`, Gram and :math:`M` (:math:`3N^2`); ``mp`` adds
  the whole :math:`W_0` in float64 and in mpmath (:math:`d^2` each) and :math:`B`,
  :math:`V`, :math:`K`, Gram and :math:`M` in mpmath (:math:`2dN + 3N^2` numbers);
  ``mp-flow`` adds its extrapolation's tableau (about :math:`20 N^2` numbers);
* ``dfree`` and ``dfree-flow``: beyond the statistics they sample (counted as the run's
  data, :mod:`verify.sim.resources`), the state :math:`M` (:math:`N^2`); no
  d-dimensional array;
* a flow solver keeps about 36 copies of its :math:`N^2` state (DOP853's 16 extended
  stages, the 7 rows of its dense output, the state, its derivative and their
  temporaries).

Cost (multiply-adds; see :mod:`verify.sim.engines.traits` for the rates): the set-up
over :math:`W_0` is :math:`d^2 N + 2dN^2` (:math:`V = W_0 Z`, then :math:`K` and
Gram), a reduced GD step :math:`6N^2`, its mpmath form about :math:`12N^2 + 4NT`, a
DOP853 step 12 evaluations of :math:`7N^2`, an extrapolation step :math:`1 + k^2`
evaluations of :math:`5N^2` integer products and :math:`4NT` mpmath operations; a d-free
draw is :math:`O(N^3)` whatever d. The flow solver's steps are estimated from the log
time :math:`s = \log(1 + \alpha k)` the run reaches: about :math:`20 + 4s` for DOP853 at
``flow_rtol = 1e-10`` (scaled by :math:`(10^{-10}/\mathrm{rtol})^{1/8}`, its order), and
one per log point plus :math:`6s` for the extrapolation. Recording is not counted (it
matters for ``dense`` up to d = 1000, whose exact invariant drift costs :math:`O(d^3)` a
log point). The estimates are rough: within a factor of a few of what a run takes.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from verify.sim.engines.traits import (
    FLOAT,
    MP_NUMBER,
    VARIANT_NAMES,
    Configuration,
    Cost,
    EngineTraits,
    Operations,
    Refusal,
    spoken,
)

INITS = ("uniform", "gaussian")
#: Above this dimension the O(d^3) invariant drift is not computed by the dense engine (a
#: recorded quantity: its cost is the recording's, :mod:`verify.sim.resources`).
DENSE_DRIFT_MAX_D = 1000
#: Rows of :math:`W_0` drawn at a time by the reduced set-up.
W0_BLOCK = 512


def estimated_log_points(config: Configuration) -> int:
    """About how many points a run records: the linear ones (at most about 100), the
    geometric ones, the first and the last."""
    return min(config.training.steps, 100) + config.recording.log_geometric + 2


def log_time(config: Configuration) -> float:
    r"""The log time :math:`s = \log(1 + \alpha k)` a flow run reaches."""
    return math.log1p(config.training.alpha * config.training.steps)


# -- memory (bytes of the engine's own arrays) ---------------------------------------------
def dense_bytes(config: Configuration) -> int:
    return FLOAT * 4 * config.model.d**2


def reduced_bytes(config: Configuration) -> int:
    """At the set-up's peak: :math:`Z`, :math:`C_0` and a product's :math:`d \times N`
    temporary; a block of :math:`W_0` with its squares and fourth powers; :math:`K`,
    Gram, :math:`Q`."""
    d, N = config.model.d, config.model.n_tokens
    return FLOAT * (3 * d * N + 3 * W0_BLOCK * d + 3 * N * N)


def mp_bytes(config: Configuration) -> int:
    """The float64 set-up, the whole :math:`W_0` in float64 and in mpmath, the tokens
    :math:`B` and :math:`V = W_0 B` in mpmath, and :math:`K`, Gram, :math:`M`."""
    d, N = config.model.d, config.model.n_tokens
    return reduced_bytes(config) + FLOAT * d * d + MP_NUMBER * (d * d + 2 * d * N + 3 * N * N)


def flow_solver_bytes(config: Configuration) -> int:
    return FLOAT * 36 * config.model.n_tokens**2


def flow_bytes(config: Configuration) -> int:
    return reduced_bytes(config) + flow_solver_bytes(config)


def mp_flow_bytes(config: Configuration) -> int:
    """The mp engine's set-up, and the extrapolation's tableau: about 20 states of
    :math:`N^2` fixed-point numbers (each about the size of an mpmath number)."""
    return mp_bytes(config) + MP_NUMBER * 20 * config.model.n_tokens**2


def dfree_bytes(config: Configuration) -> int:
    """Beyond the sampled statistics (the run's data): the state :math:`M`."""
    return FLOAT * config.model.n_tokens**2


def dfree_flow_bytes(config: Configuration) -> int:
    return dfree_bytes(config) + flow_solver_bytes(config)


# -- cost --------------------------------------------------------------------------------
def token_setup(config: Configuration) -> Operations:
    r""":math:`V = W_0 Z`, :math:`K`, Gram: :math:`d^2 N + 2dN^2`."""
    d, N = config.model.d, config.model.n_tokens
    return Operations(float64=d * d * N + 2 * d * N * N)


def reduced_step(config: Configuration) -> Operations:
    return Operations(float64=6 * config.model.n_tokens**2)


def dopri_steps(config: Configuration) -> float:
    """Estimated DOP853 steps (see the module docstring)."""
    return (20 + 4 * log_time(config)) * (1e-10 / config.solver.flow_rtol) ** 0.125


def dopri_step(config: Configuration) -> Operations:
    return Operations(float64=12 * 7 * config.model.n_tokens**2)


def dfree_setup(config: Configuration) -> Operations:
    return Operations(float64=10 * config.model.n_tokens**3)


def dense_cost(config: Configuration) -> Cost:
    d, N = config.model.d, config.model.n_tokens
    return Cost(
        Operations(float64=2 * d * d),
        Operations(float64=3 * d * d + 2 * N * d),
        config.training.steps,
    )


def reduced_cost(config: Configuration) -> Cost:
    return Cost(token_setup(config), reduced_step(config), config.training.steps)


def mp_setup(config: Configuration) -> Operations:
    """The float64 set-up, then the same products again in mpmath."""
    setup = token_setup(config)
    return setup + Operations(mpmath=setup.float64)


def mp_cost(config: Configuration) -> Cost:
    m = config.model
    step = Operations(mpmath=12 * m.n_tokens**2 + 4 * m.n_tokens * m.T)
    return Cost(mp_setup(config), step, config.training.steps)


def flow_cost(config: Configuration) -> Cost:
    return Cost(token_setup(config), dopri_step(config), dopri_steps(config))


def mp_flow_cost(config: Configuration) -> Cost:
    from verify.sim.extrapolation import columns_for  # mpmath

    m = config.model
    evaluations = 1 + columns_for(config.solver.mp_flow_tol) ** 2
    evaluation = Operations(mpmath=4 * m.n_tokens * m.T, integer=5 * m.n_tokens**2)
    steps = estimated_log_points(config) + 6 * log_time(config)
    return Cost(mp_setup(config), evaluation.times(evaluations), steps)


def dfree_cost(config: Configuration) -> Cost:
    return Cost(dfree_setup(config), reduced_step(config), config.training.steps)


def dfree_flow_cost(config: Configuration) -> Cost:
    return Cost(dfree_setup(config), dopri_step(config), dopri_steps(config))


# -- the engines ---------------------------------------------------------------------------
DFREE_NOTE = "its law needs a rotation-invariant W0; engines reduced and flow take the uniform init"
DFREE_VARIANT_NOTE = "its law is sampled for the fixed head, one rho and the linear readout"

#: What every engine on the drawn tokens shares, and every engine on statistics in law.
ON_TOKENS = partial(
    EngineTraits, exact="per draw", inits=INITS, tokens=True, test_set=True, query=True
)
IN_LAW = partial(
    EngineTraits,
    exact="in law",
    inits=("gaussian",),
    tokens=False,
    test_set=False,
    query=False,
    init_note=DFREE_NOTE,
    variants=("loss",),
    variant_note=DFREE_VARIANT_NOTE,
)

#: Every engine, in the order the command line lists them.
REGISTRY: tuple[EngineTraits, ...] = (
    ON_TOKENS(
        name="dense",
        location="verify.sim.engines.dense:DenseEngine",
        integrates="gd",
        precision="float64",
        description="literal float64 GD on W (d x d) and p",
        scaling="O(d^2) a step",
        state_bytes=dense_bytes,
        cost=dense_cost,
    ),
    ON_TOKENS(
        name="reduced",
        location="verify.sim.engines.reduced:ReducedEngine",
        integrates="gd",
        precision="float64",
        description="the same GD in N = nT coordinates (p = V a, W = W0 + V M B^T)",
        scaling="O(d^2 N) once, O(N^2) a step",
        state_bytes=reduced_bytes,
        cost=reduced_cost,
    ),
    ON_TOKENS(
        name="mp",
        location="verify.sim.engines.mp:MpEngine",
        integrates="gd",
        precision="mpmath",
        description="the reduced engine on mpmath numbers at mp_dps digits (small problems; "
        "the ground truth for rounding)",
        scaling="O(d^2 N) once and O(N^2) a step, in mpmath numbers",
        state_bytes=mp_bytes,
        cost=mp_cost,
    ),
    ON_TOKENS(
        name="flow",
        location="verify.sim.engines.flow:FlowEngine",
        integrates="flow",
        precision="float64",
        description="gradient flow in reduced coordinates, DOP853 in s = log(1 + t)",
        scaling="O(d^2 N) once, O(N^2) a solver step",
        state_bytes=flow_bytes,
        cost=flow_cost,
    ),
    ON_TOKENS(
        name="mp-flow",
        location="verify.sim.engines.mp_flow:MpFlowEngine",
        integrates="flow",
        precision="mpmath",
        description="the same flow in mpmath: Gragg-Bulirsch-Stoer extrapolation at "
        "mp_flow_tol, mp_dps digits (small problems; the ground truth for flow)",
        scaling="O(d^2 N) mpmath once, 1 + k^2 evaluations of O(N^2) integer products a "
        "solver step (k from the tolerance)",
        state_bytes=mp_flow_bytes,
        cost=mp_flow_cost,
        variants=tuple(name for name in VARIANT_NAMES if name != "trained head"),
        variant_note="its fixed-point state holds no head coordinates",
    ),
    IN_LAW(
        name="dfree",
        location="verify.sim.engines.dfree:DfreeEngine",
        integrates="gd",
        precision="float64",
        description="reduced GD on statistics sampled in law for Gaussian W0 and noise "
        "(K, Gram, B^T A^2 B from Wishart/Bartlett factors), never a d-vector",
        scaling="O(N^3) once whatever d, O(N^2) a step",
        state_bytes=dfree_bytes,
        cost=dfree_cost,
    ),
    IN_LAW(
        name="dfree-flow",
        location="verify.sim.engines.dfree:DfreeFlowEngine",
        integrates="flow",
        precision="float64",
        description="the flow engine on the same sampled statistics",
        scaling="O(N^3) once whatever d, O(N^2) a solver step",
        state_bytes=dfree_flow_bytes,
        cost=dfree_flow_cost,
    ),
)
TRAITS: dict[str, EngineTraits] = {traits.name: traits for traits in REGISTRY}


def engine_names() -> tuple[str, ...]:
    """The registered engines' names, in order."""
    return tuple(TRAITS)


def engine_traits(name: str) -> EngineTraits:
    """The traits of engine ``name`` (its module is not imported)."""
    return TRAITS[name]


def engines_where(**traits: Any) -> tuple[str, ...]:
    """Names of the engines whose traits have the given values
    (``engines_where(integrates="flow")``)."""
    return tuple(
        entry.name
        for entry in REGISTRY
        if all(getattr(entry, key) == value for key, value in traits.items())
    )


def engine_class(name: str) -> Any:
    """The engine class called ``name`` (its module imported on first use)."""
    module, cls = TRAITS[name].location.split(":")
    return getattr(importlib.import_module(module), cls)


def class_names() -> dict[str, str]:
    """Engine class name -> engine name."""
    return {entry.location.split(":")[1]: entry.name for entry in REGISTRY}


def engine_help(names: Sequence[str] | None = None) -> str:
    """An ``engine`` option's help: one clause an engine (every engine, or ``names``)."""
    return "; ".join(
        f"{entry.name}: {entry.description}"
        for entry in REGISTRY
        if names is None or entry.name in names
    )


def cannot_run(config: Configuration) -> Refusal | None:
    """``None`` when ``config``'s engine runs it; else why not (a refused variant names the
    engines that take it)."""
    return engine_traits(config.solver.engine).cannot_run(config, REGISTRY)


__all__ = [
    "REGISTRY",
    "TRAITS",
    "engine_names",
    "engine_traits",
    "engines_where",
    "engine_class",
    "class_names",
    "engine_help",
    "spoken",
    "cannot_run",
    "estimated_log_points",
    "log_time",
    "DENSE_DRIFT_MAX_D",
]
