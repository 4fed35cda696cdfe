r"""Stage-1 logit velocities from the exact gradient, with symbolic expectations.

Reconstruction (this package's own derivation; the paper's Lemmas 4.5-4.6 are not
available). At :math:`\tau = 0`, :math:`p = 0`, so every :math:`s_{i,t} = 1/T`,
:math:`f_i = \frac1T\sum_t\gamma_{i,t}`, and the exact gradient of :mod:`theory.model`
(:math:`h_{i,t} = \frac1n\ell'(y_if_i)y_i s_{i,t}(\gamma_{i,t} - f_i)`,
:math:`G = \sum_{i,t}h_{i,t}x_{i,t}`) gives the flow velocity
:math:`\dot q = -W_0^\top W_0 G` (:mod:`theory.invariants`). A direction :math:`D` of the
token space has the logit velocity

.. math::

    V = D^\top A\,g, \qquad A = W_0^\top W_0 = \kappa_0 I + \Delta, \qquad
    g = -G = \sum_{i,t} c_{i,t}\, x_{i,t}, \qquad
    c_{i,t} = \frac{\ell_i\, y_i(\gamma_{i,t} - f_i)}{nT},

:math:`\ell_i = -\ell'(y_if_i) = 1/(1 + e^{y_if_i})`. A token has :math:`D = x_{j,u}`; the
gap of group means that the checks measure has
:math:`D_j = \sum_G w_G\,\bar x_{j,G}` (:math:`\bar x_{j,G}` the mean of sample j's tokens of
group G, :math:`w = +1` on the leader and :math:`-1` on the other group).

The data model (:mod:`theory.foundation.data_model`): token
:math:`x_{i,t} = m_{i,t} + \epsilon_{i,t}`, :math:`m_{i,t} = c_t\mu_{y^*_i} + c'_t\mu_{-y^*_i}`
with the coefficients of its group (:func:`theory.foundation.data_model.token_groups`),
:math:`\mu_{+1} = \|\mu\|e_1`, :math:`\mu_{-1} = \|\mu\|e_2`, head
:math:`\nu = \gamma_0(\mu_{+1} - \mu_{-1})/\|\mu\|^2`. Then exactly
:math:`\gamma_{i,t} - f_i = y^*_i\gamma_0\delta_t + \xi_{i,t} - \bar\xi_i` with
:math:`\delta_t = (c_t - c'_t) - \bar s`, :math:`\bar s = \frac1T\sum_g n_g(c_g - c'_g)`, and the
noise scores :math:`\xi_{i,t} = \langle\epsilon_{i,t},\nu\rangle`,
:math:`\bar\xi_i = \langle\bar\epsilon_i, \nu\rangle` (:math:`\bar\epsilon_i` the mean noise
of sample i).

The one approximation (a dropped term): the loss slope is linearised about the mean output
:math:`y_if_i = \varsigma_i\bar f` (:math:`\varsigma_i = y_iy^*_i`: +1 clean, -1 noisy),
:math:`\ell_i \approx \bar\ell_i - \bar\ell_i(1-\bar\ell_i)\,y_i\bar\xi_i`,
:math:`\bar\ell = 1/(1 + e^{\varsigma\bar f})`, and products of two noise scores are dropped
(second order in :math:`\sigma_\epsilon\|\nu\|`; the slope's curvature has mean
:math:`\tfrac12\ell''\mathrm{Var}(\bar\xi)`). So

.. math::

    c_{i,t} = \underbrace{\frac{\bar\ell_i\varsigma_i\gamma_0\delta_t}{nT}}_{\bar c_{i,t}}
    + \underbrace{a_i\,\xi_{i,t} + b_{i,t}\,\bar\xi_i}_{\text{noise scores}}, \qquad
    a_i = \frac{y_i\bar\ell_i}{nT}, \quad
    b_{i,t} = -\frac{y_i\bar\ell_i + \bar\ell_i(1-\bar\ell_i)y^*_i\gamma_0\delta_t}{nT},

and :math:`V` is a polynomial in Gaussian vectors and :math:`\Delta` whose moments
:mod:`theory.foundation.expectation` takes exactly. Its pieces (:data:`PIECES`): ``signal``
:math:`\kappa_0\sum\bar c\langle m_D, m\rangle` (kept); ``noise_cross``
:math:`\kappa_0\sum\bar c\langle\epsilon_D, \epsilon\rangle` (its mean is the kept
memorisation; its fluctuation holds the cross terms :math:`\langle\epsilon,\epsilon'\rangle`
and the own-noise norm); ``signal_cross``
:math:`\kappa_0\sum\bar c(\langle m_D,\epsilon\rangle + \langle\epsilon_D, m\rangle)`;
``noise_score`` :math:`\kappa_0\sum(a\xi + b\bar\xi)\langle D, x\rangle`; ``w0_fluctuation``
:math:`\sum \bar c\,D^\top\Delta x`; ``w0_score`` :math:`\sum (a\xi + b\bar\xi)D^\top\Delta x`.

Sums over samples and tokens are taken over coincidence patterns: each summation index is
a fixed target sample or a new sample (tokens: the same token or a new one). The
expectation of a pattern is symbolic in per-block quantities (:math:`\bar c, a, b, m` of each
token block, :math:`m_D` of each target); the sum over the distinct values of the new
indices is a count (a falling factorial of a category size) times the expectation at the
category's values. Classes are balanced and the noisy labels split evenly between them
(the data model's exact flips): :math:`n(1-\eta)/2` clean and :math:`n\eta/2` noisy samples
per class.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Any

import sympy as sp

from theory.foundation.data_model import TokenGroup
from theory.foundation.expectation import (
    FLUCTUATION,
    IDENTITY,
    Factor,
    MomentRules,
    NamedPolynomial,
    RandomPolynomial,
    bilinear,
    fixed,
    gaussian,
    monomial_expectation,
)

#: Excess kurtosis of an entry of :math:`W_0`, :math:`\chi = m_4/\sigma_0^4 - 3`
#: (-6/5 uniform, 0 Gaussian).
chi0 = sp.Symbol("chi_0", real=True)

#: The two roles of the direction's groups: :math:`D = w_1\bar x_{G_1} + w_2\bar x_{G_2}`
#: (two different groups; a token is a group of one, see
#: :func:`theory.stage1.setting.split_token`).
ROLES = ("1", "2")
PIECES = ("signal", "noise_cross", "signal_cross", "noise_score", "w0_fluctuation", "w0_score")
TARGETS = ("j", "k")
TOKEN_BLOCKS = ("t1", "t2")
TOKEN_QUANTITIES = ("cbar", "a", "b", "m1", "m2")
GLOBALS = ("d", "inv_d", "variance", "kappa", "chi", "nu", "inv_T")


def generator_names() -> tuple[str, ...]:
    """Names of the block-level symbols: globals, group weights and inverse sizes, the
    targets' signal coordinates, and each token block's quantities and group indicators."""
    names = list(GLOBALS)
    names += [f"w_{r}" for r in ROLES] + [f"inv_{r}" for r in ROLES]
    names += [f"D{c}_{x}" for x in TARGETS for c in (1, 2)]
    names += [f"{q}_{t}" for t in TOKEN_BLOCKS for q in TOKEN_QUANTITIES]
    names += [f"in_{r}_{t}" for t in TOKEN_BLOCKS for r in ROLES]
    return tuple(names)


@lru_cache(maxsize=1)
def block_ring() -> tuple[Any, dict[str, Any]]:
    """The polynomial ring (over the rationals) of the block-level symbols."""
    names = generator_names()
    ring, *generators = sp.ring([sp.Symbol(name, real=True) for name in names], sp.QQ)
    return ring, dict(zip(names, generators, strict=True))


def _gen(name: str) -> Any:
    return block_ring()[1][name]


# --------------------------------------------------------------------------- the summand


_HEAD = fixed(("nu",))


def _coordinates(name: Any) -> dict[int, Factor]:
    r"""Coordinates of the fixed vectors along :math:`e_1, e_2`: the head
    :math:`\nu = (\gamma_0/\|\mu\|)(e_1 - e_2)` (symbol ``nu`` :math:`= \gamma_0/\|\mu\|`),
    a target's :math:`m_D = (D_1, D_2)` and a token's :math:`m = (m_1, m_2)`."""
    one = 1
    if name == ("nu",):
        return {1: (one, ("nu",)), 2: (-one, ("nu",))}
    kind, block = name
    prefix = "D" if kind == "D" else "m"
    return {axis: (one, (f"{prefix}{axis}_{block}",)) for axis in (1, 2)}


def _direction(target: str) -> tuple[dict, dict]:
    r"""Signal part :math:`m_D` and noise part :math:`w_1\bar\epsilon_{G_1} + w_2\bar\epsilon_{G_2}`
    of the target's direction."""
    one = _gen("d") ** 0
    noise = {gaussian(("mean", target, r)): _gen(f"w_{r}") for r in ROLES}
    return {fixed(("D", target)): one}, noise


def _coefficients(sample: str, token: str) -> tuple[RandomPolynomial, RandomPolynomial]:
    r"""Mean part :math:`\bar c` and noise-score part :math:`a\xi + b\bar\xi` of
    :math:`c_{i,t}`."""
    one = _gen("d") ** 0
    score = bilinear(IDENTITY, {gaussian(("token", sample, token)): one}, {_HEAD: one})
    score_mean = bilinear(IDENTITY, {gaussian(("mean", sample, "all")): one}, {_HEAD: one})
    scores = score.scale(_gen(f"a_{token}")) + score_mean.scale(_gen(f"b_{token}"))
    return RandomPolynomial.constant(_gen(f"cbar_{token}")), scores


def summand(sample: str, token: str, target: str) -> dict[str, RandomPolynomial]:
    r"""One term :math:`c_{i,t}\,D^\top A x_{i,t}` of :math:`V` by piece (:data:`PIECES`), for
    sample block ``sample``, token block ``token`` and the direction of ``target``."""
    one = _gen("d") ** 0
    signal = {fixed(("m", token)): one}
    noise = {gaussian(("token", sample, token)): one}
    signal_D, noise_D = _direction(target)
    kappa = _gen("kappa")
    kept = bilinear(IDENTITY, signal_D, signal).scale(kappa)
    signal_cross = bilinear(IDENTITY, signal_D, noise) + bilinear(IDENTITY, noise_D, signal)
    noise_cross = bilinear(IDENTITY, noise_D, noise).scale(kappa)
    fluctuation = bilinear(FLUCTUATION, {**signal_D, **noise_D}, {**signal, **noise})
    mean, scores = _coefficients(sample, token)
    return {
        "signal": mean * kept,
        "noise_cross": mean * noise_cross,
        "signal_cross": mean * signal_cross.scale(kappa),
        "noise_score": scores * (kept + signal_cross.scale(kappa) + noise_cross),
        "w0_fluctuation": mean * fluctuation,
        "w0_score": scores * fluctuation,
    }


# --------------------------------------------------------------------------- moment rules


def _inverse_size(group: str) -> str:
    return "inv_T" if group == "all" else f"inv_{group}"


def _covariance(a: Any, b: Any) -> Factor | None:
    r""":math:`\mathbb E[\epsilon_a\epsilon_b^\top] = C_{ab}I`. Labels: a token's noise
    ``("token", sample, token)`` or the mean noise ``("mean", sample, G)`` of a sample's group
    G (:math:`n_G` tokens; ``"all"``: the T tokens). Samples are independent, tokens too;
    :math:`C(\epsilon_t, \bar\epsilon_G) = \sigma^2[t \in G]/n_G`,
    :math:`C(\bar\epsilon_G, \bar\epsilon_{G'}) = \sigma^2|G\cap G'|/(n_G n_{G'})`."""
    kind_a, sample_a, which_a = a
    kind_b, sample_b, which_b = b
    one = 1
    if sample_a != sample_b:
        return None
    if kind_a == kind_b == "token":
        return (one, ("variance",)) if which_a == which_b else None
    if kind_a == "token" or kind_b == "token":
        token, group = (which_a, which_b) if kind_a == "token" else (which_b, which_a)
        inside = () if group == "all" else (f"in_{group}_{token}",)
        return one, ("variance", _inverse_size(group), *inside)
    if which_a == which_b:
        return one, ("variance", _inverse_size(which_a))
    if "all" in (which_a, which_b):
        return one, ("variance", "inv_T")
    return None


@lru_cache(maxsize=1)
def moment_rules() -> MomentRules:
    r"""The data model's moment rules: Gaussian covariances :func:`_covariance`,
    :math:`\kappa_0^2/d` and :math:`\chi\kappa_0^2/d` for :math:`\Delta`."""
    pair = ("inv_d", "kappa", "kappa")
    one = 1
    return MomentRules("d", _coordinates, _covariance, (one, pair), (one, ("chi", *pair)))


def _to_ring(polynomial: NamedPolynomial) -> Any:
    """A named polynomial as an element of :func:`block_ring`."""
    ring = block_ring()[0]
    position = _positions()
    terms: dict[tuple[int, ...], Any] = {}
    for names, coefficient in polynomial.items():
        exponents = [0] * ring.ngens
        for name in names:
            exponents[position[name]] += 1
        key = tuple(exponents)
        value = ring.domain(coefficient.numerator, coefficient.denominator)
        terms[key] = terms.get(key, ring.domain.zero) + value
    return ring.from_dict(terms)


@lru_cache(maxsize=1)
def _positions() -> dict[str, int]:
    return {name: index for index, name in enumerate(generator_names())}


_EXPECTATIONS: dict = {}


def _expect(polynomial: RandomPolynomial) -> Any:
    """Expectation, caching monomial expectations (labels name their blocks)."""
    total = block_ring()[0].zero
    for monomial, coefficient in polynomial.terms.items():
        if monomial not in _EXPECTATIONS:
            _EXPECTATIONS[monomial] = _to_ring(monomial_expectation(monomial, moment_rules()))
        value = _EXPECTATIONS[monomial]
        if value and coefficient:
            total += coefficient * value
    return total


# --------------------------------------------------------------------------- patterns

#: A coincidence pattern: the (sample block, token block) of each summation index.
Pattern = tuple[tuple[str, str], ...]


def first_moment_patterns(target: str) -> list[Pattern]:
    """The summation index is the target sample itself or another sample."""
    return [((target, "t1"),), (("b1", "t1"),)]


def second_moment_patterns(first: str, second: str) -> list[Pattern]:
    """Each index is a fixed target or a new sample (the second index may be the first's new
    sample); within one sample the two tokens coincide or not."""
    fixed = sorted({first, second})
    patterns: list[Pattern] = []
    for sample1 in [*fixed, "b1"]:
        new = "b2" if sample1 == "b1" else "b1"
        for sample2 in [*fixed, *(["b1"] if sample1 == "b1" else []), new]:
            tokens = ["t1", "t2"] if sample2 == sample1 else ["t2"]
            patterns += [((sample1, "t1"), (sample2, token)) for token in tokens]
    return patterns


@lru_cache(maxsize=256)
def pattern_moment(pattern: Pattern, targets: tuple[str, ...]) -> dict[tuple[str, ...], Any]:
    r""":math:`\mathbb E` of the product of one summand per index of ``pattern`` (directions
    of ``targets``), by the pieces multiplied: a polynomial in the block-level symbols for
    each tuple of pieces."""
    factors = [summand(s, t, target) for (s, t), target in zip(pattern, targets, strict=True)]
    out = {}
    for pieces in product(PIECES, repeat=len(factors)):
        polynomial = factors[0][pieces[0]]
        for factor, piece in zip(factors[1:], pieces[1:], strict=True):
            polynomial = polynomial * factor[piece]
        value = _expect(polynomial)
        if value:
            out[pieces] = value
    return out


# --------------------------------------------------------------------------- categories


@dataclass(frozen=True)
class Category:
    r"""A sample category: class :math:`y^*` and :math:`\varsigma` (+1 clean, -1 noisy)."""

    ystar: int
    vs: int


CATEGORIES = tuple(Category(y, s) for y in (1, -1) for s in (1, -1))


def falling(size: Any, count: int) -> Any:
    """The falling factorial size (size - 1) ... (size - count + 1)."""
    out = size**0
    for r in range(count):
        out = out * (size - r)
    return out


def assignments(
    pattern: Pattern, fixed: Mapping[str, Category], table: Sequence[TokenGroup], sizes: Any
) -> Iterator[tuple[Any, dict[str, Category], dict[str, TokenGroup]]]:
    """Every category of the pattern's new samples and group of its tokens, with the number
    of distinct index values it stands for (``sizes(category)``: samples per category)."""
    samples = sorted({s for s, _ in pattern if s not in fixed})
    tokens = sorted(set(pattern))
    for categories in product(CATEGORIES, repeat=len(samples)):
        count = sizes(CATEGORIES[0]) ** 0
        for category in set(categories):
            taken = sum(1 for c in fixed.values() if c == category)
            count = count * falling(sizes(category) - taken, categories.count(category))
        chosen_samples = {**fixed, **dict(zip(samples, categories, strict=True))}
        for groups in product(table, repeat=len(tokens)):
            token_count = count
            for owner in {s for s, _ in tokens}:
                names = [g.name for (s, _), g in zip(tokens, groups, strict=True) if s == owner]
                for group in table:
                    token_count = token_count * falling(group.count, names.count(group.name))
            chosen_tokens = {t: g for (_, t), g in zip(tokens, groups, strict=True)}
            owners = {t: s for s, t in tokens}
            yield token_count, {t: chosen_samples[owners[t]] for t in owners}, chosen_tokens


__all__ = [
    "chi0",
    "PIECES",
    "TARGETS",
    "Category",
    "CATEGORIES",
    "generator_names",
    "block_ring",
    "summand",
    "moment_rules",
    "first_moment_patterns",
    "second_moment_patterns",
    "pattern_moment",
    "falling",
    "assignments",
]
