r"""Hypothesis strategies that BUILD configurations across the valid space of A1-A8.

:func:`valid_configs` draws a :class:`~verify.checks.space.Shape` and a predicted regime,
then solves the assumptions (:mod:`verify.checks.space`) for the signal and the dimension:

* ``not-overfitting``: :math:`n\,\mathrm{SNR}^2 \in [\theta, 30\theta]` log-uniformly,
  :math:`d` up to 1.5 decades above the floor of A1, A2 and A7;
* ``benign``: :math:`n\,\mathrm{SNR}^2 \in [\theta/30, \theta)`, :math:`d` up to 1.5 decades
  above the larger of the floor and the benign/harmful edge;
* ``harmful``: :math:`\rho \ge 0.45` (below it the predicted accuracy at A2's bound
  already exceeds 0.95), :math:`d` between the floor and the edge, :math:`n\,\mathrm{SNR}^2`
  lowered by quarters until that interval is not empty;
* ``edge-benign``, ``edge-harmful``: as ``harmful``, with :math:`d` within a factor 1.5
  of the edge on its benign or its harmful side;
* ``paper``: the nearest valid neighbours of the paper's settings
  (:func:`paper_neighbours`).

The step is :math:`\alpha = 0.99\,\alpha_{\max}\,10^{-u}`, :math:`u \in [0, 4]` (A5's bound
and four decades below it); the seed is any. :func:`single_violation` moves one parameter of
a valid configuration until exactly that assumption fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import assume
from hypothesis import strategies as st

from theory.foundation.assumptions import ASSUMPTION_CONSTANTS
from theory.stage1.predictions import stage1_predictions
from verify.checks.space import (
    DELTA,
    MARGIN,
    Shape,
    assumption_status,
    benign_edge,
    dimension_floor,
    stage1_threshold,
    stage1_z,
    step_bound,
)
from verify.sim.config import PRESETS, RunConfig

#: The drawn targets: a predicted regime, a side of the benign/harmful edge close to it,
#: or the paper's settings' valid neighbours.
TARGETS = ("benign", "harmful", "not-overfitting", "edge-benign", "edge-harmful", "paper")

#: The regime each target but ``paper`` is predicted to have.
TARGET_REGIME = {
    "benign": "benign",
    "harmful": "harmful",
    "not-overfitting": "not-overfitting",
    "edge-benign": "benign",
    "edge-harmful": "harmful",
}


@dataclass(frozen=True)
class Ranges:
    r"""Where the shape is drawn. ``n`` starts at A3's bound :math:`C_3\log(1/\delta)`; at
    most :math:`\lfloor n/4\rfloor` labels flip (A4: :math:`\eta \le 1/C_4`), at least one;
    :math:`s_\nu` spans A8's range and :math:`\kappa_0` stays below A6's :math:`C_6`."""

    n_max: int = 20
    T_max: int = 8
    rho: tuple[float, float] = (0.03, 0.97)
    harmful_rho: float = 0.45
    sigma_eps: tuple[float, float] = (0.5, 2.0)
    kappa0_min: float = 0.05
    snr_span: float = 30.0
    d_decades: float = 1.5
    alpha_decades: float = 4.0
    edge_factor: float = 1.5

    @property
    def n_min(self) -> int:
        return math.ceil(ASSUMPTION_CONSTANTS["C_3"] * math.log(1 / DELTA))


#: The default suite's ranges (N = nT <= 160 tokens keeps a flow run under a second).
DEFAULT_RANGES = Ranges()
#: A wider run (``-m slow``).
WIDE_RANGES = Ranges(n_max=40, T_max=16)


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Floats whose logarithm is uniform on [log low, log high]."""
    return st.floats(math.log(low), math.log(high)).map(math.exp)


def _sizes(draw, ranges: Ranges, balanced: bool) -> tuple[int, int]:
    r"""``(n, flips)``: :math:`n \ge` A3's bound, :math:`1 \le k \le \lfloor n/C_4\rfloor`;
    ``balanced``: both even, so that each class holds as many samples and flips."""
    most = ASSUMPTION_CONSTANTS["C_4"]
    if not balanced:
        n = draw(st.integers(ranges.n_min, ranges.n_max))
        return n, draw(st.integers(1, max(1, int(n / most))))
    low = max(ranges.n_min, math.ceil(2 * most))
    n = 2 * draw(st.integers(math.ceil(low / 2), ranges.n_max // 2))
    return n, 2 * draw(st.integers(1, int(n / most) // 2))


@st.composite
def shapes(
    draw, ranges: Ranges = DEFAULT_RANGES, rho_min: float | None = None, balanced: bool = False
) -> Shape:
    """A :class:`~verify.checks.space.Shape` inside A3, A4, A6, A7 (:math:`\\rho < 1/C_7`)
    and A8 (``balanced``: see :func:`_sizes`)."""
    c = ASSUMPTION_CONSTANTS
    n, flips = _sizes(draw, ranges, balanced)
    rho_high = min(ranges.rho[1], 1 / (MARGIN * c["C_7"]))
    return Shape(
        n=n,
        T=draw(st.integers(3, ranges.T_max)),
        flips=flips,
        rho=draw(log_uniform(rho_min or ranges.rho[0], rho_high)),
        nu_scale=draw(log_uniform(MARGIN / c["C_8"], c["C_8"] / MARGIN)),
        sigma_eps=draw(log_uniform(*ranges.sigma_eps)),
        kappa0=draw(log_uniform(ranges.kappa0_min, c["C_6"] / MARGIN)),
    )


def _above(draw, low: float, decades: float) -> float:
    return low * 10 ** draw(st.floats(0.0, decades))


@st.composite
def _benign_side(draw, shape: Shape, ranges: Ranges) -> tuple[float, float]:
    theta = stage1_threshold(shape)
    snr_sq = theta * draw(log_uniform(1 / ranges.snr_span, 1 / MARGIN))
    floor = dimension_floor(shape, snr_sq)
    edge = benign_edge(shape, snr_sq, floor)
    return snr_sq, _above(draw, max(floor, MARGIN * (edge or 0.0)), ranges.d_decades)


@st.composite
def _harmful_side(draw, shape: Shape, ranges: Ranges, side: str) -> tuple[float, float]:
    r"""A harmful :math:`(n\,\mathrm{SNR}^2, d)` (``side`` ``harmful``), or one within
    :data:`Ranges.edge_factor` of the edge on its benign or harmful side (``edge-benign``,
    ``edge-harmful``): the edge exists once :math:`n\,\mathrm{SNR}^2` is low enough
    (:math:`z` at A7's floor grows like :math:`\sqrt{n\,\mathrm{SNR}^2}`)."""
    snr_sq = stage1_threshold(shape) * draw(log_uniform(1 / ranges.snr_span, 1 / MARGIN))
    for _ in range(12):
        floor = dimension_floor(shape, snr_sq)
        edge = benign_edge(shape, snr_sq, floor)
        if edge is not None and edge > MARGIN**2 * floor:
            break
        snr_sq /= 4
    else:
        assume(False)  # rho too close to 0.45 for this shape: no harmful side
    if side == "edge-benign":
        return snr_sq, edge * draw(log_uniform(MARGIN, ranges.edge_factor))
    if side == "edge-harmful":
        return snr_sq, edge / draw(log_uniform(MARGIN, min(ranges.edge_factor, edge / floor)))
    return snr_sq, math.exp(draw(st.floats(math.log(floor), math.log(edge / MARGIN))))


@st.composite
def with_step(draw, config: RunConfig, ranges: Ranges = DEFAULT_RANGES) -> RunConfig:
    r"""``config`` with :math:`\alpha = \alpha_{\max}10^{-u}/` :data:`MARGIN` and a seed."""
    alpha = step_bound(config) / MARGIN * 10 ** -draw(st.floats(0.0, ranges.alpha_decades))
    return config.replace(alpha=alpha, seed=draw(st.integers(0, 2**32 - 1)))


@st.composite
def drawn_config(
    draw, target: str, ranges: Ranges = DEFAULT_RANGES, balanced: bool = False
) -> RunConfig:
    """A valid configuration whose predicted regime is ``target`` (not ``paper``)."""
    harmful = target in ("harmful", "edge-benign", "edge-harmful")
    shape = draw(shapes(ranges, ranges.harmful_rho if harmful else None, balanced))
    if harmful:
        snr_sq, d = draw(_harmful_side(shape, ranges, target))
    elif target == "benign":
        snr_sq, d = draw(_benign_side(shape, ranges))
    else:
        theta = stage1_threshold(shape)
        snr_sq = theta * draw(log_uniform(MARGIN, ranges.snr_span))
        d = _above(draw, dimension_floor(shape, snr_sq), ranges.d_decades)
    return draw(with_step(shape.config(snr_sq, d), ranges))


#: The paper's settings (n = 20, T = 8, rho = 0.1, eta = 0.2, alpha = 5e-3; its uniform
#: initialisation has kappa_0 = 1/3, kept with Gaussian entries of variance 1/(3d)).
PAPER_SHAPE = Shape(n=20, T=8, flips=4, rho=0.1)
PAPER_ALPHA = 5e-3


def paper_neighbour(name: str, factor: float, seed: int = 0) -> RunConfig:
    r"""The valid neighbour of the paper's setting ``name``, ``factor`` (> :data:`MARGIN`)
    past the bound it fails. ``benign`` (d = 2000, :math:`\|\mu\| = 20`) fails A7 only:
    :math:`\|\mu\|` rises to A7's bound times ``factor`` at the paper's
    :math:`n\,\mathrm{SNR}^2 = 4` (so d rises to :math:`n\|\mu\|^2/4`).
    ``not-overfitting`` (d = 1000, :math:`\|\mu\| = 100`) fails A1 only: d rises to A1's
    bound times ``factor`` at the paper's :math:`\|\mu\|`. ``harmful`` fails A2 (its
    mechanism: it is harmful because A2 fails) and A7, and no valid configuration of its
    shape is predicted harmful, so it has no neighbour. The step stays the paper's 5e-3
    (below A5's bound in both)."""
    paper = PRESETS[name] if name in ("benign", "not-overfitting") else None
    if paper is None:
        raise ValueError(f"name={name!r} is invalid: allowed 'benign', 'not-overfitting'")
    n, T = PAPER_SHAPE.n, PAPER_SHAPE.T
    if name == "benign":
        snr_sq = n * paper["mu_norm"] ** 2 / paper["d"]
        mu = factor * math.sqrt(2.0) * math.sqrt(2 * math.log(n * T / DELTA)) / PAPER_SHAPE.rho
        config = PAPER_SHAPE.config(snr_sq, n * mu**2 / snr_sq)
    else:
        d = factor * ASSUMPTION_CONSTANTS["C_1"] * n * math.log((n * T) ** 2 / DELTA)
        config = PAPER_SHAPE.config(n * paper["mu_norm"] ** 2 / d, d)
    return config.replace(alpha=PAPER_ALPHA, seed=seed)


@st.composite
def paper_neighbours(draw, name: str | None = None) -> RunConfig:
    """:func:`paper_neighbour` of ``name`` (drawn when None) at a factor in [1.02, 1.5]."""
    name = name or draw(st.sampled_from(("benign", "not-overfitting")))
    factor = draw(st.floats(MARGIN, 1.5))
    return paper_neighbour(name, factor, draw(st.integers(0, 2**32 - 1)))


@st.composite
def valid_configs(
    draw, regime: str | None = None, ranges: Ranges = DEFAULT_RANGES, balanced: bool = False
) -> RunConfig:
    """A configuration satisfying A1-A8 and predicted to have the target's regime (both
    checked: a construction that misses is an error), of the target ``regime`` (one of
    :data:`TARGETS`; any when None); ``balanced``: each class holds as many samples and
    flipped labels (the paper's settings are)."""
    target = regime or draw(st.sampled_from(TARGETS))
    if target not in TARGETS:
        raise ValueError(f"regime={target!r} is invalid: allowed one of {', '.join(TARGETS)}")
    if target == "paper":
        expected = draw(st.sampled_from(("benign", "not-overfitting")))
        config = draw(paper_neighbours(expected))
    else:
        expected = TARGET_REGIME[target]
        config = draw(drawn_config(target, ranges, balanced))
    failing = [key for key, holds in assumption_status(config).items() if not holds]
    if failing:
        raise AssertionError(f"constructed configuration fails {failing}: {config.flat()}")
    regime = stage1_predictions(config.model, config.training).regime
    if regime != expected:
        raise AssertionError(f"constructed for {expected}, predicted {regime}: {config.flat()}")
    return config


def _violate_a2(config: RunConfig) -> RunConfig:
    """Test z below C2 (z ~ sqrt(d) at fixed n SNR^2, ~ ||mu||^2 / sqrt(d) at fixed
    ||mu||): raise d at fixed ||mu|| until z = C2 / 1.5."""
    factor = (1.5 * stage1_z(config) / ASSUMPTION_CONSTANTS["C_2"]) ** 2
    d = int(config.model.d * factor)
    scale = config.init_scale * math.sqrt(config.model.d / d)
    return _keep_stable(config.replace(d=d, init_scale=scale))


def _keep_stable(config: RunConfig) -> RunConfig:
    """``config`` with its step lowered to A5's bound if it exceeds it."""
    return config.replace(alpha=min(config.training.alpha, step_bound(config) / MARGIN))


def _violate_a1(config: RunConfig) -> RunConfig:
    """d halved until A1 fails, at fixed ||mu|| and kappa_0 (A7 and A2 only gain)."""
    bound = (
        ASSUMPTION_CONSTANTS["C_1"]
        * config.model.n
        * math.log((config.model.n * config.model.T) ** 2 / DELTA)
    )
    d = max(int(bound / 1.5), 2)
    scale = config.init_scale * math.sqrt(config.model.d / d)
    return _keep_stable(config.replace(d=d, init_scale=scale))


#: How each assumption is broken while the others keep holding.
VIOLATIONS = {
    "A1": _violate_a1,
    "A2": _violate_a2,
    "A3": lambda c: c.replace(n=4, eta=0.2),
    "A4": lambda c: c.replace(eta=0.3, n=max(c.model.n, 10)),
    "A5": lambda c: c.replace(alpha=4 * step_bound(c)),
    "A6": lambda c: _keep_stable(c.replace(init_scale=math.sqrt(3.0 / c.model.d))),
    "A7": lambda c: c.replace(rho=_a7_rho(c) / 1.5),
    "A8": lambda c: _keep_stable(c.replace(nu_scale=2.5 * ASSUMPTION_CONSTANTS["C_8"] / 2)),
}


def _a7_rho(config: RunConfig) -> float:
    r"""The least :math:`\rho` A7 allows: :math:`\sqrt2 C_7\sigma_\epsilon
    \sqrt{2\log(nT/\delta)}/\|\mu\|`."""
    m = config.model
    return (
        ASSUMPTION_CONSTANTS["C_7"]
        * math.sqrt(2.0)
        * m.sigma_eps
        * math.sqrt(2 * math.log(m.n * m.T / DELTA))
        / m.mu_norm
    )


ASSUMPTION_KEYS = tuple(VIOLATIONS)


@st.composite
def single_violation(draw, key: str, base: st.SearchStrategy[RunConfig] | None = None):
    """A valid configuration (from ``base``, default :func:`valid_configs`) changed so that
    exactly assumption ``key`` fails; draws where another assumption breaks too are
    rejected (their share is what the tests report)."""
    config = VIOLATIONS[key](draw(base or valid_configs()))
    status = assumption_status(config)
    assume(not status[key] and all(v for k, v in status.items() if k != key))
    return config


__all__ = [
    "ASSUMPTION_KEYS",
    "DEFAULT_RANGES",
    "PAPER_ALPHA",
    "PAPER_SHAPE",
    "Ranges",
    "TARGETS",
    "TARGET_REGIME",
    "VIOLATIONS",
    "WIDE_RANGES",
    "assumption_status",
    "drawn_config",
    "log_uniform",
    "paper_neighbour",
    "paper_neighbours",
    "shapes",
    "single_violation",
    "valid_configs",
    "with_step",
]
