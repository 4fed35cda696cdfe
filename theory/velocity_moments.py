r"""Moments of the stage-1 velocities: the kept (leading) velocity, symbolically, and the
variance of the dropped terms.

Reconstruction (this package's own derivation; the paper's exact statement is not
available). :mod:`theory.stage1_velocity` takes the expectations of each coincidence
pattern symbolically in block-level quantities; here those quantities get their values
(:class:`Setting`: SymPy symbols, or the numbers of a :class:`~theory.data_model.DataModel`)
and the patterns are summed with their counts:

.. math::

    \mathbb E\Big[\sum_{\text{indices}} F\Big] = \sum_{\text{patterns}}
    \sum_{\text{categories, groups}} \text{count} \times \mathbb E[F \mid \text{pattern}].

The kept velocity is the mean of the ``signal`` and ``noise_cross`` pieces; with symbols it
equals :func:`theory.rates.token_velocity` identically (:func:`token_velocity_residuals`).
The dropped terms are everything else: their mean (a bias, relative size :math:`O(1/d)`) and
their variance, from :math:`\mathrm{Var}(V) = \mathbb E[V^2] - (\mathbb E V)^2`, which splits
into the pieces' variances and covariances.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from theory import rates
from theory.data_model import GROUP_NAMES, DataModel, TokenGroup, Training
from theory.proof import RECONSTRUCTION, SYMBOLIC, Derivation
from theory.stage1_velocity import (
    PIECES,
    ROLES,
    Category,
    assignments,
    block_ring,
    chi0,
    first_moment_patterns,
    generator_names,
    pattern_moment,
    second_moment_patterns,
)
from theory.symbols import d, eta, mu_norm, n, rho, sigma_eps
from theory.validation import InvalidParameter

#: The loss slopes at the mean output, :math:`\ell_{c,n} = 1/(1 + e^{\pm\bar f})`.
ell_clean, ell_noisy = sp.symbols("ell_c ell_n", positive=True)
#: Excess kurtosis of :math:`W_0`'s entries: uniform on (-s, s) and Gaussian.
ENTRY_EXCESS_KURTOSIS = {"uniform": -1.2, "gaussian": 0.0}


@dataclass(frozen=True)
class Setting:
    r"""Values of the model quantities (SymPy expressions or floats): dimension, noise
    variance :math:`\sigma_\epsilon^2`, :math:`\kappa_0`, :math:`\chi`, signal score
    :math:`\gamma_0`, :math:`\|\mu\|`, samples n, noise rate :math:`\eta`, tokens T, the group
    table, and the loss slopes :math:`\ell_c, \ell_n` at the mean output."""

    d: Any
    variance: Any
    kappa: Any
    chi: Any
    gamma0: Any
    mu: Any
    n: Any
    eta: Any
    T: Any
    table: tuple[TokenGroup, ...]
    ell_clean: Any
    ell_noisy: Any

    def category_size(self, category: Category) -> Any:
        r"""Samples per category: :math:`n(1-\eta)/2` clean, :math:`n\eta/2` noisy."""
        return self.n * ((1 - self.eta) if category.vs == 1 else self.eta) / 2

    @property
    def mean_score(self) -> Any:
        r""":math:`\bar s = \frac1T\sum_g n_g (c_g - c'_g)`."""
        return sum(g.count * g.score for g in self.table) / self.T


def split_token(table: Sequence[TokenGroup], group: str) -> tuple[TokenGroup, ...]:
    """The table with one token of ``group`` split off as the group "U" (same signal)."""
    out = []
    for g in table:
        out.append(TokenGroup(g.name, g.count - 1, g.own, g.opposite) if g.name == group else g)
        if g.name == group:
            split = TokenGroup("U", 1, g.own, g.opposite)
    return (*out, split)


def symbolic_setting() -> Setting:
    """Every quantity a symbol (those of :mod:`theory.rates`), slopes as ``ell_c, ell_n``."""
    return Setting(
        d, sigma_eps**2, rates.kappa0, chi0, rates.gamma0, mu_norm, n, eta, rates.T_tokens,
        rates.paper_groups(), ell_clean, ell_noisy,
    )  # fmt: skip


def check_balanced(model: DataModel) -> None:
    """The counting assumes balanced classes and a fixed number of flipped labels split
    evenly between them (exact flips, n and the flip count even)."""
    if model.flip != "exact":
        raise InvalidParameter("flip", model.flip, "'exact' (a fixed number of flips)")
    if model.n % 2 or model.noisy_count % 2:
        raise InvalidParameter(
            "n", model.n, f"an even n with an even number of flips (here {model.noisy_count})"
        )


def numeric_setting(model: DataModel, training: Training) -> Setting:
    r"""The numbers of a data model and training set-up (uniform or Gaussian init). The
    noise rate is the realised fraction of flipped labels, ``noisy_count / n`` (equal to
    :math:`\eta` when :math:`n\eta` is an integer, as at the paper's settings)."""
    check_balanced(model)
    mean_output = model.gamma0 * sum(g.count * g.score for g in model.groups) / model.T
    return Setting(
        float(model.d), model.sigma_eps**2, training.kappa0(model.d),
        ENTRY_EXCESS_KURTOSIS[training.init], model.gamma0, model.mu_norm, float(model.n),
        model.noisy_count / model.n, float(model.T), model.groups,
        1 / (1 + math.exp(mean_output)), 1 / (1 + math.exp(-mean_output)),
    )  # fmt: skip


# --------------------------------------------------------------------------- block values


def _signal_coordinates(setting: Setting, category: Category, group: TokenGroup) -> tuple:
    r""":math:`c\mu_{y^*} + c'\mu_{-y^*}` in the coordinates :math:`e_1, e_2`."""
    own, opposite = setting.mu * group.own, setting.mu * group.opposite
    return (own, opposite) if category.ystar == 1 else (opposite, own)


def roles(weights: Mapping[str, Any]) -> dict[str, str | None]:
    """The groups of the direction in the roles 1 and 2 (role 2 empty for one group)."""
    if not 1 <= len(weights) <= 2:
        raise InvalidParameter("weights", dict(weights), "one or two groups")
    names = list(weights) + [None]
    return dict(zip(ROLES, names[:2], strict=True))


def token_values(
    setting: Setting, token: str, category: Category, group: TokenGroup, weights: Mapping
) -> dict:
    r"""The block quantities of a token of ``group`` in a sample of ``category``:
    :math:`\bar c = \bar\ell\varsigma\gamma_0\delta/(nT)`, :math:`a = y\bar\ell/(nT)`,
    :math:`b = -(y\bar\ell + \bar\ell(1-\bar\ell)y^*\gamma_0\delta)/(nT)`, the signal
    coordinates and the group indicators (:math:`y = \varsigma y^*`)."""
    ell = setting.ell_clean if category.vs == 1 else setting.ell_noisy
    total = setting.n * setting.T
    deviation = setting.gamma0 * (group.score - setting.mean_score)
    label = category.vs * category.ystar
    m1, m2 = _signal_coordinates(setting, category, group)
    values = {
        f"cbar_{token}": ell * category.vs * deviation / total,
        f"a_{token}": label * ell / total,
        f"b_{token}": -(label * ell + ell * (1 - ell) * category.ystar * deviation) / total,
        f"m1_{token}": m1,
        f"m2_{token}": m2,
    }
    values.update({f"in_{r}_{token}": int(g == group.name) for r, g in roles(weights).items()})
    return values


def global_values(
    setting: Setting, weights: Mapping[str, Any], targets: Mapping[str, Category]
) -> dict:
    r"""Globals (:math:`d, 1/d, \sigma^2, \kappa_0, \chi, \gamma_0/\|\mu\|, 1/T`), the weights
    :math:`w_G` and :math:`1/n_G` of the direction's groups (:func:`roles`), and each target's
    :math:`m_D = \sum_G w_G(c_G\mu_{y^*} + c'_G\mu_{-y^*})`."""
    values = {
        "d": setting.d,
        "inv_d": 1 / setting.d,
        "variance": setting.variance,
        "kappa": setting.kappa,
        "chi": setting.chi,
        "nu": setting.gamma0 / setting.mu,
        "inv_T": 1 / setting.T,
    }
    groups = {g.name: g for g in setting.table}
    for role, name in roles(weights).items():
        values[f"w_{role}"] = 0 if name is None else weights[name]
        values[f"inv_{role}"] = 0 if name is None else 1 / groups[name].count
    for target, category in targets.items():
        for axis in (0, 1):
            values[f"D{axis + 1}_{target}"] = sum(
                w * _signal_coordinates(setting, category, groups[g])[axis]
                for g, w in weights.items()
            )
    return values


def evaluate(polynomial: Any, values: Mapping[str, Any]) -> Any:
    """A block-ring polynomial at the given values (symbols absent from ``values`` must not
    occur); works for SymPy expressions, floats and NumPy arrays alike."""
    names = [str(s) for s in block_ring()[0].symbols]
    total: Any = 0
    for exponents, coefficient in polynomial.terms():
        term: Any = sp.Rational(coefficient.numerator, coefficient.denominator)
        if all(isinstance(v, float | int) for v in values.values()):
            term = float(term)
        for name, power in zip(names, exponents, strict=True):
            if power:
                term = term * values[name] ** power
        total = total + term
    return total


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
    order = tuple(targets)
    base = global_values(setting, weights, targets)
    total: dict[tuple[str, ...], Any] = {}
    for pattern in patterns:
        factor_targets = order if len(pattern) == len(order) else order * len(pattern)
        moments = {
            key: value
            for key, value in pattern_moment(pattern, factor_targets).items()
            if all(p in pieces for p in key)
        }
        for count, categories, token_groups in assignments(
            pattern, targets, setting.table, setting.category_size
        ):
            values = dict(base)
            for token, group in token_groups.items():
                values.update(token_values(setting, token, categories[token], group, weights))
            for key, moment in moments.items():
                total[key] = total.get(key, 0) + count * evaluate(moment, values)
    return total


def _assignment_values(
    setting: Setting, pattern: Any, targets: Mapping[str, Category], weights: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Counts and the matrix of block-symbol values (one row per assignment, one column per
    symbol of :func:`theory.stage1_velocity.generator_names`; unused symbols 0)."""
    names = generator_names()
    column = {name: index for index, name in enumerate(names)}
    base = global_values(setting, weights, targets)
    counts, rows = [], []
    for count, categories, token_groups in assignments(
        pattern, targets, setting.table, setting.category_size
    ):
        values = dict(base)
        for token, group in token_groups.items():
            values.update(token_values(setting, token, categories[token], group, weights))
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
    order = tuple(targets)
    total: dict[tuple[str, ...], float] = {}
    for pattern in patterns:
        factor_targets = order if len(pattern) == len(order) else order * len(pattern)
        counts, rows = _assignment_values(setting, pattern, targets, weights)
        for pieces, moment in pattern_moment(pattern, factor_targets).items():
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


def loss_slopes() -> dict[sp.Symbol, sp.Expr]:
    r""":math:`\ell_c, \ell_n` as :func:`theory.rates.loss_weights` defines them."""
    ell_c, ell_n = rates.loss_weights(rates.paper_groups())
    return {ell_clean: ell_c, ell_noisy: ell_n}


def token_velocity_residuals(
    expected_velocity: Callable[[str, bool], sp.Expr] = rates.token_velocity,
) -> list[sp.Expr]:
    r"""Residuals :func:`kept_velocity` minus ``expected_velocity(group, noisy)`` (default
    :func:`theory.rates.token_velocity`), for a token of every group in a clean or noisy
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
_SYMBOLS += (rates.gamma0,)


# --------------------------------------------------------------------------- dropped terms


@dataclass(frozen=True)
class VelocityError:
    r"""The dropped terms of a stage-1 velocity, from the exact moments of the linearised
    velocity:

    * ``kept``: the kept velocity (:func:`theory.rates.token_velocity` /
      :func:`theory.rates.gap_velocity` at this setting);
    * ``bias``: the mean of the dropped terms (the noise scores; relative size
      :math:`O(1/d)`);
    * ``sample_sd``: standard deviation of one sample's velocity;
    * ``mean_sd``: standard deviation of the mean over the :math:`N_S` clean (or noisy)
      samples of one draw (data and :math:`W_0`),
      :math:`\sqrt{(\mathrm{Var} + (N_S/2-1)C_{\rm same} + (N_S/2)C_{\rm other})/N_S}` with
      the covariances of two samples of the same / the other class;
    * ``pieces``: the standard deviation of each dropped piece of one sample's velocity
      (:data:`theory.stage1_velocity.PIECES`; their covariances make up the rest of
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


def direction_error(
    setting: Setting, weights: Mapping[str, float], noisy: bool, pieces: Sequence[str] = PIECES
) -> VelocityError:
    r""":class:`VelocityError` of the direction :math:`D = \sum_G w_G\bar x_G` in clean (or
    noisy) samples of a numeric ``setting``. ``pieces`` lists the pieces the velocity is
    made of (all by default; leaving one out gives the error of a formula that drops it)."""
    vs = -1 if noisy else 1
    j, other = Category(1, vs), Category(-1, vs)
    first = numeric_moment(setting, first_moment_patterns("j"), {"j": j}, weights)
    first_other = numeric_moment(setting, first_moment_patterns("j"), {"j": other}, weights)
    mean, mean_other = _total(first, pieces), _total(first_other, pieces)
    second = numeric_moment(setting, second_moment_patterns("j", "j"), {"j": j}, weights)
    variance = _total(second, pieces) - mean**2
    pair = second_moment_patterns("j", "k")
    same = numeric_moment(setting, pair, {"j": j, "k": j}, weights)
    cross = numeric_moment(setting, pair, {"j": j, "k": other}, weights)
    covariances = (_total(same, pieces) - mean**2, _total(cross, pieces) - mean * mean_other)
    size = 2 * setting.category_size(j)
    mean_variance = (variance + (size / 2 - 1) * covariances[0] + size / 2 * covariances[1]) / size
    moments = _first(first)
    spread = {
        p: math.sqrt(max(second.get((p, p), 0.0) - moments.get(p, 0.0) ** 2, 0.0))
        for p in PIECES[1:]
        if p in pieces
    }
    kept = float(sum(moments.get(p, 0.0) for p in ("signal", "noise_cross") if p in pieces))
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
            sp.Eq(v, varsigma * M * (gamma_g - fbar) / rates.gamma0 + (c_g + c_opp) * S),
            RECONSTRUCTION,
            token_velocity_residuals,
            SYMBOLIC,
            "E[x_u^T kappa0 (-G)] by the moment rules of theory.moments, summed over the "
            "coincidence patterns, minus theory.rates.token_velocity: residuals vanish for "
            "every group, clean and noisy samples of either class, with the group counts, "
            "T, rho, eta, n, d, ||mu||, sigma, kappa0, gamma0 symbolic. Dropped (see "
            "theory.velocity_variance): noise scores in gamma - f and in the loss slope "
            "(linearised about the mean output), W0^T W0 - kappa0 I, the cross terms",
        ),
    ]
