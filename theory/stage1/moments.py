r"""Moments of the stage-1 velocities: the kept (leading) velocity, symbolically, and the
variance of the dropped terms.

Reconstruction (this package's own derivation; the paper's exact statement is not
available). :mod:`theory.stage1.velocity` takes the expectations of each coincidence
pattern symbolically in block-level quantities; :mod:`theory.stage1.setting` gives them
their values (SymPy symbols, or the numbers of a :class:`~theory.foundation.data_model.DataModel`),
and here the patterns are summed with their counts:

.. math::

    \mathbb E\Big[\sum_{\text{indices}} F\Big] = \sum_{\text{patterns}}
    \sum_{\text{categories, groups}} \text{count} \times \mathbb E[F \mid \text{pattern}].

The kept velocity is the mean of the ``signal`` and ``noise_cross`` pieces; with symbols it
equals :func:`theory.stage1.rates.token_velocity` identically (:func:`token_velocity_residuals`).
The dropped terms are everything else: their mean (a bias, relative size :math:`O(1/d)`) and
their variance, from :math:`\mathrm{Var}(V) = \mathbb E[V^2] - (\mathbb E V)^2`, which splits
into the pieces' variances and covariances (:class:`VelocityError`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from theory.foundation.data_model import GROUP_NAMES, DataModel, Training
from theory.foundation.proof import RECONSTRUCTION, SYMBOLIC, Derivation
from theory.foundation.symbols import d, eta, gamma0, mu_norm, n, rho, sigma_eps
from theory.foundation.validation import InvalidParameter
from theory.stage1 import rates
from theory.stage1.setting import (
    Setting,
    assignment_values,
    ell_clean,
    ell_noisy,
    evaluate,
    loss_slopes,
    numeric_setting,
    split_token,
    symbolic_setting,
)
from theory.stage1.velocity import (
    PIECES,
    Category,
    Pattern,
    chi0,
    first_moment_patterns,
    generator_names,
    pattern_moment,
    second_moment_patterns,
)

# --------------------------------------------------------------------------- moments


def summed_moment(
    setting: Setting,
    patterns: Sequence,
    targets: Mapping[str, Category],
    weights: Mapping[str, Any],
    pieces: Sequence[str] = PIECES,
) -> dict[tuple[str, ...], Any]:
    r"""Sum over ``patterns`` and their index values of the pattern moments, by piece tuple
    (one factor per target in ``targets`` order; only tuples of ``pieces``), evaluated with
    :func:`evaluate` (any number type, e.g. SymPy symbols)."""
    total: dict[tuple[str, ...], Any] = {}
    for pattern in patterns:
        moments = {
            key: value
            for key, value in pattern_moment(pattern, _factor_targets(pattern, targets)).items()
            if all(p in pieces for p in key)
        }
        for count, values in assignment_values(setting, pattern, targets, weights):
            for key, moment in moments.items():
                total[key] = total.get(key, 0) + count * evaluate(moment, values)
    return total


def _factor_targets(pattern: Pattern, targets: Mapping[str, Category]) -> tuple[str, ...]:
    """The target of each factor: one per target, or the single target for every factor."""
    order = tuple(targets)
    return order if len(pattern) == len(order) else order * len(pattern)


def _assignment_values(
    setting: Setting, pattern: Pattern, targets: Mapping[str, Category], weights: Mapping
) -> tuple[np.ndarray, np.ndarray]:
    """Counts and the matrix of block-symbol values (one row per assignment, one column per
    symbol of :func:`theory.stage1.velocity.generator_names`; unused symbols 0)."""
    names = generator_names()
    column = {name: index for index, name in enumerate(names)}
    counts, rows = [], []
    for count, values in assignment_values(setting, pattern, targets, weights):
        row = np.zeros(len(names))
        for name, value in values.items():
            row[column[name]] = float(value)
        counts.append(float(count))
        rows.append(row)
    return np.array(counts), np.array(rows)


def _polynomial_arrays(polynomial: Any) -> tuple[np.ndarray, np.ndarray]:
    terms = polynomial.terms()
    exponents = np.array([monomial for monomial, _ in terms], dtype=np.int64)
    coefficients = np.array([float(c.numerator) / float(c.denominator) for _, c in terms])
    return exponents, coefficients


def _evaluate_rows(polynomial: Any, rows: np.ndarray) -> np.ndarray:
    """A block-ring polynomial at every row of values (vectorised over rows and terms)."""
    exponents, coefficients = _polynomial_arrays(polynomial)
    products = np.ones((rows.shape[0], exponents.shape[0]))
    for column in np.flatnonzero(exponents.any(axis=0)):
        products *= rows[:, column : column + 1] ** exponents[:, column]
    return products @ coefficients


def numeric_moment(
    setting: Setting,
    patterns: Sequence,
    targets: Mapping[str, Category],
    weights: Mapping[str, Any],
) -> dict[tuple[str, ...], float]:
    r""":func:`summed_moment` for a numeric setting, evaluated on arrays (fast)."""
    total: dict[tuple[str, ...], float] = {}
    for pattern in patterns:
        counts, rows = _assignment_values(setting, pattern, targets, weights)
        for pieces, moment in pattern_moment(pattern, _factor_targets(pattern, targets)).items():
            value = float(counts @ _evaluate_rows(moment, rows))
            total[pieces] = total.get(pieces, 0.0) + value
    return total


def kept_velocity(setting: Setting, weights: Mapping[str, Any], category: Category) -> Any:
    r"""The kept velocity of :math:`D = \sum_G w_G\bar x_G` in a sample of ``category``: the
    mean of the ``signal`` and ``noise_cross`` pieces (the signal term and the own-noise
    memorisation, at :math:`A = \kappa_0 I`, without the noise scores)."""
    kept = ("signal", "noise_cross")
    moments = summed_moment(setting, first_moment_patterns("j"), {"j": category}, weights, kept)
    return sum(moments.values())


def token_velocity_residuals(
    expected_velocity: Callable[[str, bool], sp.Expr] = rates.token_velocity,
) -> list[sp.Expr]:
    r"""Residuals :func:`kept_velocity` minus ``expected_velocity(group, noisy)`` (default
    :func:`theory.stage1.rates.token_velocity`), for a token of every group in a clean or noisy
    sample of either class, all symbols (group counts :math:`n_R, n_{W+}, n_{W-}`, T,
    :math:`\rho`, ...) left free, the slopes :math:`\ell_{c,n}` as symbols. Each residual
    is computed in the field of rational functions of the symbols (exact cancellation; 0
    when the derivation holds)."""
    return list(_token_velocity_residuals(expected_velocity))


@lru_cache(maxsize=4)
def _token_velocity_residuals(
    expected_velocity: Callable[[str, bool], sp.Expr],
) -> tuple[sp.Expr, ...]:
    setting = symbolic_setting()
    as_symbols = {value: key for key, value in loss_slopes().items()}
    field = sp.field(_SYMBOLS, sp.QQ)[0]
    out = []
    for group in GROUP_NAMES:
        for noisy in (False, True):
            expected = field.from_expr(expected_velocity(group, noisy).xreplace(as_symbols))
            for ystar in (1, -1):
                category = Category(ystar, -1 if noisy else 1)
                derived = kept_velocity(setting, {group: sp.Integer(1)}, category)
                out.append((field.from_expr(derived) - expected).as_expr())
    return tuple(out)


#: The symbols of the kept velocity: rational functions of these are compared in their
#: field (exact cancellation).
_SYMBOLS: tuple[sp.Symbol, ...] = (d, n, eta, rho, mu_norm, sigma_eps, chi0, ell_clean)
_SYMBOLS += (ell_noisy, rates.n_R, rates.n_A, rates.n_O, rates.T_tokens, rates.kappa0)
_SYMBOLS += (gamma0,)


# --------------------------------------------------------------------------- dropped terms


@dataclass(frozen=True)
class VelocityError:
    r"""The dropped terms of a stage-1 velocity, from the exact moments of the linearised
    velocity:

    * ``kept``: the kept velocity (:func:`theory.stage1.rates.token_velocity` /
      :func:`theory.stage1.rates.gap_velocity` at this setting);
    * ``bias``: the mean of the dropped terms (the noise scores; relative size
      :math:`O(1/d)`);
    * ``sample_sd``: standard deviation of one sample's velocity;
    * ``mean_sd``: standard deviation of the mean over the :math:`N_S` clean (or noisy)
      samples of one draw (data and :math:`W_0`),
      :math:`\sqrt{(\mathrm{Var} + (N_S/2-1)C_{\rm same} + (N_S/2)C_{\rm other})/N_S}` with
      the covariances of two samples of the same / the other class;
    * ``pieces``: the standard deviation of each dropped piece of one sample's velocity
      (:data:`theory.stage1.velocity.PIECES`; their covariances make up the rest of
      ``sample_sd``).
    """

    kept: float
    bias: float
    sample_sd: float
    mean_sd: float
    pieces: dict[str, float]


def _first(moments: Mapping[tuple[str, ...], Any]) -> dict[str, Any]:
    return {pieces[0]: value for pieces, value in moments.items()}


def _total(moments: Mapping[tuple[str, ...], float], pieces: Sequence[str]) -> float:
    return float(sum(v for key, v in moments.items() if all(p in pieces for p in key)))


@lru_cache(maxsize=64)
def _direction_moments(
    setting: Setting, weights: tuple[tuple[str, float], ...], noisy: bool
) -> tuple[dict, ...]:
    """The numeric first moments (target of class +1 and of class -1) and second moments
    (the target with itself, with another sample of its class and of the other class)."""
    vs = -1 if noisy else 1
    j, other, named = Category(1, vs), Category(-1, vs), dict(weights)
    single, pair = second_moment_patterns("j", "j"), second_moment_patterns("j", "k")
    return (
        numeric_moment(setting, first_moment_patterns("j"), {"j": j}, named),
        numeric_moment(setting, first_moment_patterns("j"), {"j": other}, named),
        numeric_moment(setting, single, {"j": j}, named),
        numeric_moment(setting, pair, {"j": j, "k": j}, named),
        numeric_moment(setting, pair, {"j": j, "k": other}, named),
    )


def direction_error(
    setting: Setting, weights: Mapping[str, float], noisy: bool, pieces: Sequence[str] = PIECES
) -> VelocityError:
    r""":class:`VelocityError` of the direction :math:`D = \sum_G w_G\bar x_G` in clean (or
    noisy) samples of a numeric ``setting``. ``pieces`` lists the pieces the velocity is
    made of (all by default; leaving one out gives the error of a formula that drops it)."""
    moments = _direction_moments(setting, tuple(weights.items()), noisy)
    first, first_other, second, same, cross = moments
    mean, mean_other = _total(first, pieces), _total(first_other, pieces)
    variance = _total(second, pieces) - mean**2
    covariances = (_total(same, pieces) - mean**2, _total(cross, pieces) - mean * mean_other)
    size = 2 * setting.category_size(Category(1, -1 if noisy else 1))
    mean_variance = (variance + (size / 2 - 1) * covariances[0] + size / 2 * covariances[1]) / size
    means = _first(first)
    spread = {
        p: math.sqrt(max(second.get((p, p), 0.0) - means.get(p, 0.0) ** 2, 0.0))
        for p in PIECES[1:]
        if p in pieces
    }
    kept = float(sum(means.get(p, 0.0) for p in ("signal", "noise_cross") if p in pieces))
    sds = (math.sqrt(max(variance, 0.0)), math.sqrt(max(mean_variance, 0.0)))
    return VelocityError(kept, mean - kept, *sds, spread)


def velocity_error(
    model: DataModel,
    training: Training,
    other: str,
    noisy: bool,
    pieces: Sequence[str] = PIECES,
) -> VelocityError:
    r"""The kept initial gap velocity and the size of its dropped terms (see
    :class:`VelocityError`) for the gap of group means that the checks measure: the mean of
    the leader's tokens (R for clean samples, W- for noisy ones) minus the mean of the
    ``other`` group's tokens, :math:`w = (+1, -1)`."""
    leader = "W-" if noisy else "R"
    counts = model.group_counts
    if other == leader or counts.get(other, 0) == 0 or counts[leader] == 0:
        raise InvalidParameter("other", other, f"a group present in the model other than {leader}")
    setting = numeric_setting(model, training)
    return direction_error(setting, {leader: 1.0, other: -1.0}, noisy, pieces)


def token_velocity_error(
    model: DataModel, training: Training, group: str, noisy: bool, pieces: Sequence[str] = PIECES
) -> VelocityError:
    r"""The kept initial velocity of one token of ``group`` (:math:`D = x_{j,u}`) and the size
    of its dropped terms (:class:`VelocityError`)."""
    if model.group_counts.get(group, 0) == 0:
        raise InvalidParameter("group", group, "a token group present in the model")
    setting = numeric_setting(model, training)
    split = replace(setting, table=split_token(setting.table, group))
    return direction_error(split, {"U": 1.0}, noisy, pieces)


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    v, M, S, fbar = sp.symbols("v_g M S fbar", real=True)
    varsigma, gamma_g, c_g, c_opp = sp.symbols("varsigma gamma_g c_g c'_g", real=True)
    return [
        Derivation(
            "Stage-1 token velocity from the exact gradient at p = 0 (kept terms)",
            sp.Eq(v, varsigma * M * (gamma_g - fbar) / gamma0 + (c_g + c_opp) * S),
            RECONSTRUCTION,
            token_velocity_residuals,
            SYMBOLIC,
            "E[x_u^T kappa0 (-G)] by the moment rules of theory.foundation.expectation, summed "
            "over the coincidence patterns, minus theory.stage1.rates.token_velocity: residuals "
            "vanish for every group, clean and noisy samples of either class, with the group "
            "counts, T, rho, eta, n, d, ||mu||, sigma, kappa0, gamma0 symbolic. Dropped (see "
            "theory.stage1.variance): noise scores in gamma - f and in the loss slope "
            "(linearised about the mean output), W0^T W0 - kappa0 I, the cross terms",
            twin="theory.stage1.moments.kept_velocity",
            simulated="verify.checks.drawn_runs.initial_velocities",
            test="tests/theory/stage1/test_moments.py::test_kept_velocity_equals_the_predictions_at_the_paper_settings",
        ),
    ]


__all__ = [
    "summed_moment",
    "numeric_moment",
    "kept_velocity",
    "token_velocity_residuals",
    "VelocityError",
    "direction_error",
    "velocity_error",
    "token_velocity_error",
    "derivations",
]
