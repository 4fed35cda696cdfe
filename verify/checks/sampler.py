r"""Configurations drawn across the valid space of A1-A8, built rather than filtered.

:func:`draw_valid_config` draws, with a NumPy random generator, a shape
(:class:`~verify.checks.space.Shape`) and a target, then solves the assumptions
(:mod:`verify.checks.space`) for the signal and the dimension:

* ``not-overfitting``: :math:`n\,\mathrm{SNR}^2 \in [\theta, 30\theta]` log-uniformly,
  :math:`d` up to 1.5 decades above the floor of A1, A2 and A7;
* ``benign``: :math:`n\,\mathrm{SNR}^2 \in [\theta/30, \theta)`, :math:`d` up to 1.5 decades
  above the larger of the floor and the benign/harmful edge;
* ``harmful``: :math:`\rho \ge 0.45` (below it the predicted accuracy at A2's bound
  already exceeds 0.95), :math:`d` between the floor and the edge, :math:`n\,\mathrm{SNR}^2`
  lowered by quarters until that interval is not empty;
* ``edge-benign``, ``edge-harmful``: as ``harmful``, with :math:`d` within a factor 1.5
  of the edge on its benign or its harmful side;
* ``paper``: the nearest valid neighbours of the paper's settings (:func:`paper_neighbour`).

The step is :math:`\alpha = 0.99\,\alpha_{\max}\,10^{-u}`, :math:`u \in [0, 4]` (A5's bound
and four decades below it); the seed is any. :func:`violate_one` moves one parameter of a
valid configuration until exactly that assumption fails; :func:`draw_violation` draws
such a configuration.

The construction reads its random numbers through the small :class:`Draws` interface, so
that the property tests drive the same construction from Hypothesis (which then shrinks
and replays it) while the package needs no Hypothesis at run time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn, Protocol, TypeVar

import numpy as np

from theory.foundation.assumptions import ASSUMPTION_CONSTANTS
from theory.foundation.validation import require
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

Option = TypeVar("Option")


class Rejected(ValueError):
    """A draw that cannot be completed (a shape without a harmful side, a violation that
    breaks a second assumption): draw again."""


class Draws(Protocol):
    """Where a construction takes its random numbers from (a NumPy generator here, a
    Hypothesis ``draw`` in the property tests)."""

    def integer(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included."""
        ...

    def real(self, low: float, high: float) -> float:
        """A float in [low, high]."""
        ...

    def choice(self, options: Sequence[Option]) -> Option:
        """One of ``options``."""
        ...

    def reject(self, reason: str) -> NoReturn:
        """Give up this draw."""
        ...


@dataclass(frozen=True)
class NumpyDraws:
    """:class:`Draws` from a NumPy random generator (uniform integers and floats)."""

    rng: np.random.Generator

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high, endpoint=True))

    def real(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high))

    def choice(self, options: Sequence[Option]) -> Option:
        return options[int(self.rng.integers(len(options)))]

    def reject(self, reason: str) -> NoReturn:
        raise Rejected(reason)


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


#: The default ranges (N = nT <= 160 tokens keeps a flow run under a second).
DEFAULT_RANGES = Ranges()
#: A wider population (n up to 40, T up to 16).
WIDE_RANGES = Ranges(n_max=40, T_max=16)


def log_uniform(draws: Draws, low: float, high: float) -> float:
    """A float whose logarithm is uniform on [log low, log high]."""
    return math.exp(draws.real(math.log(low), math.log(high)))


def _sizes(draws: Draws, ranges: Ranges, balanced: bool) -> tuple[int, int]:
    r"""``(n, flips)``: :math:`n \ge` A3's bound, :math:`1 \le k \le \lfloor n/C_4\rfloor`;
    ``balanced``: both even, so that each class holds as many samples and flips."""
    most = ASSUMPTION_CONSTANTS["C_4"]
    if not balanced:
        n = draws.integer(ranges.n_min, ranges.n_max)
        return n, draws.integer(1, max(1, int(n / most)))
    low = max(ranges.n_min, math.ceil(2 * most))
    n = 2 * draws.integer(math.ceil(low / 2), ranges.n_max // 2)
    return n, 2 * draws.integer(1, int(n / most) // 2)


def draw_shape(
    draws: Draws,
    ranges: Ranges = DEFAULT_RANGES,
    rho_min: float | None = None,
    balanced: bool = False,
) -> Shape:
    r"""A :class:`Shape` inside A3, A4, A6, A7 (:math:`\rho < 1/C_7`) and A8 (``balanced``:
    see :func:`_sizes`)."""
    c = ASSUMPTION_CONSTANTS
    n, flips = _sizes(draws, ranges, balanced)
    T = draws.integer(3, ranges.T_max)
    rho = log_uniform(draws, rho_min or ranges.rho[0], min(ranges.rho[1], 1 / (MARGIN * c["C_7"])))
    nu_scale = log_uniform(draws, MARGIN / c["C_8"], c["C_8"] / MARGIN)
    sigma_eps = log_uniform(draws, *ranges.sigma_eps)
    kappa0 = log_uniform(draws, ranges.kappa0_min, c["C_6"] / MARGIN)
    return Shape(n, T, flips, rho, nu_scale, sigma_eps, kappa0)


def _above(draws: Draws, low: float, decades: float) -> float:
    return low * 10 ** draws.real(0.0, decades)


def _benign_side(draws: Draws, shape: Shape, ranges: Ranges) -> tuple[float, float]:
    theta = stage1_threshold(shape)
    snr_sq = theta * log_uniform(draws, 1 / ranges.snr_span, 1 / MARGIN)
    floor = dimension_floor(shape, snr_sq)
    edge = benign_edge(shape, snr_sq, floor)
    return snr_sq, _above(draws, max(floor, MARGIN * (edge or 0.0)), ranges.d_decades)


def _harmful_side(draws: Draws, shape: Shape, ranges: Ranges, side: str) -> tuple[float, float]:
    r"""A harmful :math:`(n\,\mathrm{SNR}^2, d)` (``side`` ``harmful``), or one within
    :data:`Ranges.edge_factor` of the edge on its benign or harmful side (``edge-benign``,
    ``edge-harmful``): the edge exists once :math:`n\,\mathrm{SNR}^2` is low enough
    (:math:`z` at A7's floor grows like :math:`\sqrt{n\,\mathrm{SNR}^2}`)."""
    snr_sq = stage1_threshold(shape) * log_uniform(draws, 1 / ranges.snr_span, 1 / MARGIN)
    for _ in range(12):
        floor = dimension_floor(shape, snr_sq)
        edge = benign_edge(shape, snr_sq, floor)
        if edge is not None and edge > MARGIN**2 * floor:
            break
        snr_sq /= 4
    else:
        draws.reject(f"rho={shape.rho:.3g} is too close to 0.45 for this shape: no harmful side")
    if side == "edge-benign":
        return snr_sq, edge * log_uniform(draws, MARGIN, ranges.edge_factor)
    if side == "edge-harmful":
        return snr_sq, edge / log_uniform(draws, MARGIN, min(ranges.edge_factor, edge / floor))
    return snr_sq, math.exp(draws.real(math.log(floor), math.log(edge / MARGIN)))


def with_step(draws: Draws, config: RunConfig, ranges: Ranges = DEFAULT_RANGES) -> RunConfig:
    r"""``config`` with :math:`\alpha = \alpha_{\max}10^{-u}/` :data:`MARGIN` and a seed."""
    alpha = step_bound(config) / MARGIN * 10 ** -draws.real(0.0, ranges.alpha_decades)
    return config.replace(alpha=alpha, seed=draws.integer(0, 2**32 - 1))


def drawn_config(
    draws: Draws, target: str, ranges: Ranges = DEFAULT_RANGES, balanced: bool = False
) -> RunConfig:
    """A configuration whose predicted regime is ``target`` (not ``paper``), unchecked."""
    harmful = target in ("harmful", "edge-benign", "edge-harmful")
    shape = draw_shape(draws, ranges, ranges.harmful_rho if harmful else None, balanced)
    if harmful:
        snr_sq, d = _harmful_side(draws, shape, ranges, target)
    elif target == "benign":
        snr_sq, d = _benign_side(draws, shape, ranges)
    else:
        theta = stage1_threshold(shape)
        snr_sq = theta * log_uniform(draws, MARGIN, ranges.snr_span)
        d = _above(draws, dimension_floor(shape, snr_sq), ranges.d_decades)
    return with_step(draws, shape.config(snr_sq, d), ranges)


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


def drawn_paper_neighbour(draws: Draws, name: str | None = None) -> RunConfig:
    """:func:`paper_neighbour` of ``name`` (drawn when None) at a factor in [1.02, 1.5]."""
    name = name or draws.choice(("benign", "not-overfitting"))
    factor = draws.real(MARGIN, 1.5)
    return paper_neighbour(name, factor, draws.integer(0, 2**32 - 1))


def construct_valid_config(
    draws: Draws,
    target: str | None = None,
    ranges: Ranges = DEFAULT_RANGES,
    balanced: bool = False,
) -> RunConfig:
    """A configuration satisfying A1-A8 and predicted to have the target's regime (both
    checked: a construction that misses is an error), of ``target`` (one of
    :data:`TARGETS`; drawn when None); ``balanced``: each class holds as many samples and
    flipped labels (the paper's settings are)."""
    _require_target(target)
    target = target or draws.choice(TARGETS)
    if target == "paper":
        expected = draws.choice(("benign", "not-overfitting"))
        config = drawn_paper_neighbour(draws, expected)
    else:
        expected = TARGET_REGIME[target]
        config = drawn_config(draws, target, ranges, balanced)
    failing = [key for key, holds in assumption_status(config).items() if not holds]
    if failing:
        raise AssertionError(f"constructed configuration fails {failing}: {config.flat()}")
    regime = stage1_predictions(config.model, config.training).regime
    if regime != expected:
        raise AssertionError(f"constructed for {expected}, predicted {regime}: {config.flat()}")
    return config


def draw_valid_config(
    rng: np.random.Generator,
    target: str | None = None,
    ranges: Ranges = DEFAULT_RANGES,
    balanced: bool = False,
    attempts: int = 100,
) -> RunConfig:
    """A configuration satisfying A1-A8 with the predicted regime of ``target`` (see
    :func:`construct_valid_config`), drawn with ``rng``; a draw that has to be given up
    (:class:`Rejected`) is drawn again, up to ``attempts`` times."""
    return _first_completed(
        lambda: construct_valid_config(NumpyDraws(rng), target, ranges, balanced), attempts
    )


def _require_target(target: str | None) -> None:
    allowed = f"None or one of {', '.join(TARGETS)}"
    require(target is None or target in TARGETS, "target", target, allowed)


def _first_completed(attempt: Callable[[], RunConfig], attempts: int) -> RunConfig:
    """The first of up to ``attempts`` calls of ``attempt`` not :class:`Rejected`."""
    require(isinstance(attempts, int) and attempts >= 1, "attempts", attempts, "an integer >= 1")
    reasons = []
    for _ in range(attempts):
        try:
            return attempt()
        except Rejected as rejected:
            reasons.append(str(rejected))
    raise Rejected(f"no draw completed in {attempts} attempts; the last: {reasons[-1]}")


# One assumption broken at a time.


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


def _violate_a2(config: RunConfig) -> RunConfig:
    """Test z below C2 (z ~ sqrt(d) at fixed n SNR^2, ~ ||mu||^2 / sqrt(d) at fixed
    ||mu||): raise d at fixed ||mu|| until z = C2 / 1.5."""
    factor = (1.5 * stage1_z(config) / ASSUMPTION_CONSTANTS["C_2"]) ** 2
    d = int(config.model.d * factor)
    scale = config.init_scale * math.sqrt(config.model.d / d)
    return _keep_stable(config.replace(d=d, init_scale=scale))


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


#: How each assumption is broken while the others keep holding.
VIOLATIONS: dict[str, Callable[[RunConfig], RunConfig]] = {
    "A1": _violate_a1,
    "A2": _violate_a2,
    "A3": lambda c: c.replace(n=4, eta=0.2),
    "A4": lambda c: c.replace(eta=0.3, n=max(c.model.n, 10)),
    "A5": lambda c: c.replace(alpha=4 * step_bound(c)),
    "A6": lambda c: _keep_stable(c.replace(init_scale=math.sqrt(3.0 / c.model.d))),
    "A7": lambda c: c.replace(rho=_a7_rho(c) / 1.5),
    "A8": lambda c: _keep_stable(c.replace(nu_scale=2.5 * ASSUMPTION_CONSTANTS["C_8"] / 2)),
}

#: The assumptions, in order.
ASSUMPTION_KEYS = tuple(VIOLATIONS)


def violate_one(config: RunConfig, key: str) -> RunConfig:
    """``config`` moved so that exactly assumption ``key`` fails; :class:`Rejected` when the
    move breaks another assumption too (draw another ``config``)."""
    require(key in VIOLATIONS, "key", key, f"one of {', '.join(ASSUMPTION_KEYS)}")
    moved = VIOLATIONS[key](config)
    status = assumption_status(moved)
    broken = [k for k, holds in status.items() if not holds]
    if broken != [key]:
        raise Rejected(f"breaking {key} leaves {broken or 'nothing'} failing")
    return moved


def draw_violation(
    rng: np.random.Generator,
    key: str,
    target: str | None = None,
    ranges: Ranges = DEFAULT_RANGES,
    attempts: int = 100,
) -> RunConfig:
    """A configuration of which exactly assumption ``key`` fails: :func:`violate_one` of a
    :func:`draw_valid_config` draw (of ``target``, drawn when None), drawn again when the
    move breaks a second assumption, up to ``attempts`` times."""
    return _first_completed(
        lambda: violate_one(construct_valid_config(NumpyDraws(rng), target, ranges), key),
        attempts,
    )


__all__ = [
    "ASSUMPTION_KEYS",
    "DEFAULT_RANGES",
    "Draws",
    "NumpyDraws",
    "PAPER_ALPHA",
    "PAPER_SHAPE",
    "Ranges",
    "Rejected",
    "TARGETS",
    "TARGET_REGIME",
    "VIOLATIONS",
    "WIDE_RANGES",
    "construct_valid_config",
    "draw_shape",
    "draw_valid_config",
    "draw_violation",
    "drawn_config",
    "drawn_paper_neighbour",
    "log_uniform",
    "paper_neighbour",
    "violate_one",
    "with_step",
]
