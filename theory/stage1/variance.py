r"""Closed forms of the dropped terms' variances of a stage-1 velocity.

Reconstruction (this package's own derivation; the paper's exact statement is not
available). Notation of :mod:`theory.stage1.velocity`: the velocity of the direction
:math:`D = \sum_G w_G \bar x_{j,G}` of sample j, :math:`g = g_m + g_\epsilon` with the mean
coefficients :math:`\bar c_{i,t}`, :math:`g_m = \sum\bar c_{i,t}m_{i,t}` (deterministic) and
:math:`g_\epsilon = \sum\bar c_{i,t}\epsilon_{i,t}`. With :math:`\epsilon_D = \sum_G w_G
\bar\epsilon_{j,G}`, the pair :math:`(\epsilon_D, g_\epsilon)` is exactly Gaussian with

.. math::

    \mathrm{Cov}(\epsilon_D) = \sigma^2 W_D I,\quad
    \mathrm{Cov}(g_\epsilon) = \sigma^2 C_2 I,\quad
    \mathrm{Cov}(\epsilon_D, g_\epsilon) = \sigma^2\rho_D I,\qquad
    W_D = \sum_G \frac{w_G^2}{n_G},\quad C_2 = \sum_{i,t}\bar c_{i,t}^2,\quad
    \rho_D = \sum_G w_G\bar c_{j,G}.

Exact variances of the pieces with the mean coefficients (Wick's theorem and the second
moments of :math:`\Delta`, derived symbolically by :func:`closed_form_residuals`):

.. math::

    \mathrm{Var}[\kappa_0\langle\epsilon_D, g_\epsilon\rangle]
        &= \kappa_0^2\sigma^4 d\,(W_D C_2 + \rho_D^2),\\
    \mathrm{Var}[\kappa_0(\langle m_D, g_\epsilon\rangle + \langle\epsilon_D, g_m\rangle)]
        &= \kappa_0^2\sigma^2(\|m_D\|^2C_2 + W_D\|g_m\|^2 + 2\rho_D\langle m_D, g_m\rangle),\\
    \mathrm{Var}[D^\top\Delta g] &= \frac{\kappa_0^2}{d}\,\mathbb E\Bigl[\|D\|^2\|g\|^2
        + (D^\top g)^2 + \chi\sum_k D_k^2 g_k^2\Bigr]

with the last expectation written out in :func:`fluctuation_variance_expression`. The
noise-score piece at leading order keeps the sample's own tokens and their mean norm,
:math:`\kappa_0\sigma^2 d\,(a_j\xi_D + B_j\bar\xi_j)`, :math:`\xi_D = \langle\epsilon_D,\nu\rangle`,
:math:`B_j = \sum_G w_G b_{j,G}`:

.. math::

    \mathrm{Var} \approx \kappa_0^2\sigma^4 d^2\,\sigma^2\|\nu\|^2\Bigl(a_j^2 W_D
        + \frac{2a_jB_j\sum_G w_G + B_j^2}{T}\Bigr),

with relative corrections :math:`O(nT/d)` (the other samples' noise scores) and
:math:`O(\|\mu\|^2/(\sigma^2 d))` (the scores' effect on the signal term).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy as sp

from theory.foundation.expectation import (
    FLUCTUATION,
    IDENTITY,
    Factor,
    MomentRules,
    RandomPolynomial,
    bilinear,
    expectation,
    fixed,
    gaussian,
    named_to_sympy,
)
from theory.foundation.proof import NUMERIC, RECONSTRUCTION, SYMBOLIC, Derivation
from theory.stage1.setting import Setting, token_values
from theory.stage1.velocity import CATEGORIES, Category

_NAMES = ("d", "inv_d", "variance", "kappa", "chi", "W", "C2", "rho", "m1", "m2", "h1", "h2")
#: The symbols of the closed forms (aggregates :math:`W_D, C_2, \rho_D`, coordinates of
#: :math:`m_D` and :math:`h = g_m`).
SYMBOLS = {name: sp.Symbol(name, real=True) for name in _NAMES}


def _aggregate_rules() -> MomentRules:
    r"""Moment rules of the aggregate model: Gaussian :math:`u = \epsilon_D`,
    :math:`v = g_\epsilon` with covariances :math:`\sigma^2(W_D, C_2, \rho_D)`, fixed
    :math:`m_D = (m_1, m_2)`, :math:`g_m = (h_1, h_2)`."""
    one = 1
    covariances = {("u", "u"): "W", ("v", "v"): "C2", ("u", "v"): "rho", ("v", "u"): "rho"}

    def covariance(a: Any, b: Any) -> Factor:
        return one, ("variance", covariances[(a, b)])

    def coordinates(name: Any) -> dict[int, Factor]:
        return {axis: (one, (f"{name}{axis}",)) for axis in (1, 2)}

    pair = ("inv_d", "kappa", "kappa")
    return MomentRules("d", coordinates, covariance, (one, pair), (one, ("chi", *pair)))


def _variance(polynomial: RandomPolynomial) -> sp.Expr:
    rules = _aggregate_rules()

    def convert(named: Any) -> sp.Expr:
        return named_to_sympy(named, SYMBOLS)

    mean = expectation(polynomial, rules, convert)
    square = expectation(polynomial * polynomial, rules, convert)
    return sp.expand((square - mean**2).subs(SYMBOLS["inv_d"], 1 / SYMBOLS["d"]))


def derived_variances() -> dict[str, sp.Expr]:
    r"""The three Gaussian pieces' variances derived by the moment engine on the aggregate
    model (:func:`_aggregate_rules`)."""
    one = sp.Integer(1)
    u, v = {gaussian("u"): one}, {gaussian("v"): one}
    m, h = {fixed("m"): one}, {fixed("h"): one}
    kappa = SYMBOLS["kappa"]
    return {
        "noise_cross": _variance(bilinear(IDENTITY, u, v).scale(kappa)),
        "signal_cross": _variance(
            (bilinear(IDENTITY, m, v) + bilinear(IDENTITY, u, h)).scale(kappa)
        ),
        "w0_fluctuation": _variance(bilinear(FLUCTUATION, {**m, **u}, {**h, **v})),
    }


def fluctuation_variance_expression() -> sp.Expr:
    r"""The variance of the W0 fluctuation piece,
    :math:`\frac{\kappa_0^2}{d}\bigl[E\|D\|^2\|g\|^2 + E(D^\top g)^2
    + \chi E\sum_k D_k^2g_k^2\bigr]`, written out (:math:`m = m_D`, :math:`h = g_m`):

    .. math::

        E\|D\|^2\|g\|^2 &= \|m\|^2\|h\|^2 + \sigma^2 d(C_2\|m\|^2 + W_D\|h\|^2)
            + 4\sigma^2\rho_D\, m\cdot h + \sigma^4(d^2 W_D C_2 + 2d\rho_D^2),\\
        E(D^\top g)^2 &= (m\cdot h + \sigma^2 d\rho_D)^2 + \sigma^2(C_2\|m\|^2 + W_D\|h\|^2
            + 2\rho_D\, m\cdot h) + \sigma^4 d(W_D C_2 + \rho_D^2),\\
        E\sum_k D_k^2 g_k^2 &= \textstyle\sum_c m_c^2h_c^2 + \sigma^2(C_2\|m\|^2 + W_D\|h\|^2
            + 4\rho_D\, m\cdot h) + \sigma^4 d(W_D C_2 + 2\rho_D^2)."""
    s = SYMBOLS
    var, d, W, C2, rho = s["variance"], s["d"], s["W"], s["C2"], s["rho"]
    mm, hh = s["m1"] ** 2 + s["m2"] ** 2, s["h1"] ** 2 + s["h2"] ** 2
    mh = s["m1"] * s["h1"] + s["m2"] * s["h2"]
    norms = mm * hh + var * d * (C2 * mm + W * hh) + 4 * var * rho * mh
    norms += var**2 * (d**2 * W * C2 + 2 * d * rho**2)
    inner = (mh + var * d * rho) ** 2 + var * (C2 * mm + W * hh + 2 * rho * mh)
    inner += var**2 * d * (W * C2 + rho**2)
    diagonal = s["m1"] ** 2 * s["h1"] ** 2 + s["m2"] ** 2 * s["h2"] ** 2
    diagonal += var * (C2 * mm + W * hh + 4 * rho * mh) + var**2 * d * (W * C2 + 2 * rho**2)
    return s["kappa"] ** 2 / d * (norms + inner + s["chi"] * diagonal)


def closed_form_expressions() -> dict[str, sp.Expr]:
    """The closed forms of the module docstring in :data:`SYMBOLS`."""
    s = SYMBOLS
    var, d, W, C2, rho, kappa = (s[k] for k in ("variance", "d", "W", "C2", "rho", "kappa"))
    mm, hh = s["m1"] ** 2 + s["m2"] ** 2, s["h1"] ** 2 + s["h2"] ** 2
    mh = s["m1"] * s["h1"] + s["m2"] * s["h2"]
    return {
        "noise_cross": kappa**2 * var**2 * d * (W * C2 + rho**2),
        "signal_cross": kappa**2 * var * (mm * C2 + W * hh + 2 * rho * mh),
        "w0_fluctuation": fluctuation_variance_expression(),
    }


def closed_form_residuals() -> list[sp.Expr]:
    """Engine-derived minus typed closed forms, expanded (all 0)."""
    derived, typed = derived_variances(), closed_form_expressions()
    return [sp.expand(derived[key] - typed[key]) for key in typed]


# --------------------------------------------------------------------------- numbers


def aggregates(setting: Setting, weights: Mapping[str, Any], category: Category) -> dict:
    r"""The aggregates of a target sample of ``category`` and direction ``weights`` at a
    setting: :math:`W_D, C_2, \rho_D`, the coordinates of :math:`m_D` and :math:`g_m`, and the
    noise-score coefficients :math:`a_j`, :math:`B_j = \sum_G w_G b_{j,G}`."""
    groups = {g.name: g for g in setting.table}

    def value(cat: Category, group: Any, key: str) -> Any:
        return token_values(setting, "t1", cat, group, weights)[f"{key}_t1"]

    out = {"W": sum(w**2 / groups[g].count for g, w in weights.items())}
    out["C2"] = sum(
        setting.category_size(cat) * g.count * value(cat, g, "cbar") ** 2
        for cat in CATEGORIES
        for g in setting.table
    )
    out["rho"] = sum(w * value(category, groups[g], "cbar") for g, w in weights.items())
    for axis in (1, 2):
        out[f"m{axis}"] = sum(
            w * value(category, groups[g], f"m{axis}") for g, w in weights.items()
        )
        out[f"h{axis}"] = sum(
            setting.category_size(cat) * g.count * value(cat, g, "cbar") * value(cat, g, f"m{axis}")
            for cat in CATEGORIES
            for g in setting.table
        )
    out["a"] = value(category, setting.table[0], "a")
    out["B"] = sum(w * value(category, groups[g], "b") for g, w in weights.items())
    return out


def closed_form_variances(
    setting: Setting, weights: Mapping[str, float], category: Category
) -> dict[str, float]:
    r"""The closed forms at a numeric setting: the exact variances of the ``noise_cross``,
    ``signal_cross`` and ``w0_fluctuation`` pieces and the leading-order variance of the
    ``noise_score`` piece (module docstring)."""
    values = aggregates(setting, weights, category)
    numbers = {
        SYMBOLS["d"]: setting.d,
        SYMBOLS["inv_d"]: 1 / setting.d,
        SYMBOLS["variance"]: setting.variance,
        SYMBOLS["kappa"]: setting.kappa,
        SYMBOLS["chi"]: setting.chi,
    }
    numbers.update({SYMBOLS[k]: values[k] for k in ("W", "C2", "rho", "m1", "m2", "h1", "h2")})
    out = {key: float(expr.xreplace(numbers)) for key, expr in closed_form_expressions().items()}
    head_sq = 2 * (setting.gamma0 / setting.mu) ** 2
    total_weight = sum(weights.values())
    a, B = values["a"], values["B"]
    own = a**2 * values["W"] + (2 * a * B * total_weight + B**2) / setting.T
    out["noise_score"] = float(
        setting.kappa**2 * setting.variance**3 * setting.d**2 * head_sq * own
    )
    return out


__all__ = [
    "SYMBOLS",
    "derived_variances",
    "fluctuation_variance_expression",
    "closed_form_expressions",
    "closed_form_residuals",
    "aggregates",
    "closed_form_variances",
    "derivations",
]


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    s = SYMBOLS
    names = ("noise_cross", "signal_cross", "w0_fluctuation")
    variances = [sp.Symbol(f"Var_{name}", nonnegative=True) for name in names]
    closed = closed_form_expressions()
    a, B, nu_sq, T = sp.symbols("a_j B_j ||nu||^2 T", real=True)
    w_sum = sp.Symbol("sum_G w_G", real=True)
    score = s["kappa"] ** 2 * s["variance"] ** 3 * s["d"] ** 2 * nu_sq
    score *= a**2 * s["W"] + (2 * a * B * w_sum + B**2) / T
    return [
        Derivation(
            "Stage-1 velocity, dropped terms: exact variances of the cross terms and of "
            "the W0 fluctuation",
            sp.And(*[sp.Eq(v, closed[k]) for v, k in zip(variances, names, strict=True)]),
            RECONSTRUCTION,
            closed_form_residuals,
            SYMBOLIC,
            "the moment engine (Wick with fourth Gaussian moments, second moments of "
            "W0^T W0 with the entries' excess kurtosis chi) derives the three variances on "
            "the exact Gaussian aggregates (eps_D, g_eps); residuals against the typed forms "
            "vanish. tests/theory/stage1/test_variance.py checks that the pattern sums of "
            "theory.stage1.moments equal them",
            twin="theory.stage1.variance.closed_form_variances",
            test="tests/theory/stage1/test_variance.py::test_pattern_sums_equal_the_closed_forms",
        ),
        Derivation(
            "Stage-1 velocity, dropped terms: total variance (noise scores, own sample, "
            "leading order; all pieces and covariances in theory.stage1.moments)",
            sp.Eq(sp.Symbol("Var_noise_score", nonnegative=True), score),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence="theory.stage1.moments takes the exact second moments of the "
            "linearised velocity (all pieces and their covariances); "
            "tests/theory/stage1/test_moments.py::test_predicted_sd_matches_monte_carlo "
            "compares them with the Monte Carlo of the exact initial velocity (a formula "
            "without the W0 fluctuation fails it); this leading form of the noise-score "
            "piece is compared with the exact one in tests/theory/stage1/test_variance.py",
            twin="theory.stage1.moments.velocity_error",
            simulated="verify.checks.drawn_runs.initial_velocities",
            test="tests/theory/stage1/test_moments.py::test_predicted_sd_matches_monte_carlo",
        ),
    ]
