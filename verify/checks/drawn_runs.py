r"""Simulations of one drawn configuration, run once and cached, and what they measure.

For a configuration (d-free engines: Gaussian :math:`W_0`, statistics sampled in law, any
d), on one draw of the data, :func:`initial_noisy_gap` measures the exact initial logit
velocities :math:`\dot a(0)` (since :math:`p(0) = 0` the first GD step leaves :math:`W`
unchanged and gives :math:`a(1) = \alpha\,\dot a(0)`), and :func:`drawn_run` records:

* gradient flow from :math:`\tau = \tau_1/100` to :math:`10^9\tau_1` on log-spaced points,
  where :math:`\tau_1 = (g(\log T) - g(0))/c` is the time the theory's clean-gap law
  :math:`g^{-1}(g(0) + c\tau)` takes to reach :math:`\log T` (the clean samples' end of
  stage 1); flow time is independent of :math:`\alpha`, so the flow runs in units of
  :math:`\tau_1/100`;
* one event located at full resolution on the solver's dense output: the flow time at
  which half of the noisy samples are fitted (the :math:`\lceil m/2\rceil`-th largest
  noisy margin :math:`y_i f_i` turns positive).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from theory.quadrature.g import quadrature_time_float
from theory.stage1.predictions import Stage1Predictions, stage1_predictions
from verify.sim.config import RunConfig
from verify.sim.data import GROUP_NAMES
from verify.sim.engines import draw_data, engine_traits, make_engine
from verify.sim.history import History
from verify.sim.kernels import softmax
from verify.sim.simulate import simulate

#: Flow horizon and first log point, in units of the clean stage-1 end tau_1.
HORIZON = 1e9
FIRST_POINT = 1e-2


def initial_velocities(config: RunConfig, data: Any) -> np.ndarray:
    r"""Exact :math:`\dot a(0)`, shape (n, T): one GD step from :math:`p(0) = 0` gives
    :math:`q_1 = -\alpha W_0^\top W_0 G`, which is :math:`\alpha\,\dot q(0)` of the flow."""
    engine = make_engine(config.replace(engine=_gd_engine(config)), data)
    engine.advance_to(1)
    return engine.train_logits() / config.training.alpha


def gap_velocities(
    velocities: np.ndarray, groups: np.ndarray, rows: np.ndarray, leader: str, other: str
) -> np.ndarray:
    """Per selected row, the mean velocity of the ``leader`` group's tokens minus the mean
    of the ``other`` group's."""
    code = {name: i for i, name in enumerate(GROUP_NAMES)}
    chosen = velocities[rows]
    lead = chosen[:, groups == code[leader]].mean(axis=1)
    return lead - chosen[:, groups == code[other]].mean(axis=1)


def initial_noisy_gap(config: RunConfig) -> float:
    r"""The mean over the noisy samples of one draw of the initial gap velocity
    :math:`\dot a_{W_-} - \dot a_R` (group means; positive: the noisy samples start to
    fit their flipped labels)."""
    data = draw_data(config)
    groups, noisy = np.asarray(data.groups), np.asarray(data.noisy)
    return float(gap_velocities(initial_velocities(config, data), groups, noisy, "W-", "R").mean())


def _gd_engine(config: RunConfig) -> str:
    return "dfree" if engine_traits(config.solver.engine).exact == "in law" else "reduced"


def clean_stage1_end(prediction: Stage1Predictions) -> float:
    r""":math:`\tau_1 = (g(\log T) - g(0))/c` of the theory's clean-gap law."""
    law = prediction.clean_gap_law
    return float(quadrature_time_float(law.x0, math.log(law.T), law.rate, law.T))


def half_noisy_margin_event(data: Any) -> Any:
    r"""The :math:`\lceil m/2\rceil`-th largest margin :math:`y_i f_i` over the :math:`m`
    noisy samples (positive once at least half of them are fitted)."""
    noisy = np.asarray(data.noisy)
    rank = max(1, math.ceil(int(noisy.sum()) / 2))

    def half_fitted(logits: np.ndarray) -> float:
        outputs = (softmax(logits) * data.train_scores).sum(axis=-1)
        margins = np.sort((data.y_train * outputs)[noisy])[::-1]
        return float(margins[rank - 1]) if margins.size else -1.0

    return half_fitted


@dataclass(frozen=True)
class DrawnRun:
    """What the property tests read of one configuration (times are flow times)."""

    config: RunConfig
    prediction: Stage1Predictions
    times: np.ndarray
    history: History
    stage1_end: float
    half_fitted_at: float
    status: str
    message: str = ""
    final: dict[str, float] = field(default_factory=dict)


def flow_config(config: RunConfig, stage1_end: float, points: int = 40) -> RunConfig:
    r"""Gradient flow of ``config`` in time units of :math:`\tau_1/100` to
    :data:`HORIZON` :math:`\tau_1`, ``points`` log-spaced points, population metrics at the
    end."""
    unit = FIRST_POINT * stage1_end
    steps = int(round(HORIZON / FIRST_POINT))
    return config.replace(
        engine="dfree-flow",
        alpha=unit,
        steps=steps,
        log_every=steps,
        log_geometric=points,
        population="final",
    )


def _event_time(at: float | None, unit: float) -> float:
    return math.inf if at is None else at * unit


@lru_cache(maxsize=512)
def drawn_run(config: RunConfig) -> DrawnRun:
    """The flow run of ``config`` on one draw (cached)."""
    prediction = stage1_predictions(config.model, config.training)
    data = draw_data(config)
    stage1_end = clean_stage1_end(prediction)
    flow = flow_config(config, stage1_end)
    engine = make_engine(flow, data)
    half = engine.watch("half of the noisy samples fitted", half_noisy_margin_event(data))
    result = simulate(flow, data=data, engine=engine)
    unit = flow.training.alpha
    return DrawnRun(
        config=config,
        prediction=prediction,
        times=np.asarray(result.steps) * unit,
        history=result.history,
        stage1_end=stage1_end,
        half_fitted_at=_event_time(half.at, unit),
        status=result.status.value,
        message=result.message,
        final=dict(result.final),
    )


__all__ = [
    "DrawnRun",
    "FIRST_POINT",
    "HORIZON",
    "clean_stage1_end",
    "drawn_run",
    "flow_config",
    "half_noisy_margin_event",
    "gap_velocities",
    "initial_noisy_gap",
    "initial_velocities",
]
