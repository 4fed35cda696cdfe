"""The symbolic expectation operator: Wick's rules for Gaussian vectors and the second
moments of W0^T W0 - kappa0 I, each against a closed form or a Monte Carlo of the matrix."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from theory.foundation.expectation import (
    FLUCTUATION,
    IDENTITY,
    MomentRules,
    bilinear,
    expectation,
    fixed,
    gaussian,
    named_to_sympy,
)

s2, d, kappa, chi, inv_d = sp.symbols("s2 d kappa chi inv_d")
a1, a2, b1, b2 = sp.symbols("a1 a2 b1 b2")
NAMES = {str(x): x for x in (s2, d, kappa, chi, inv_d, a1, a2, b1, b2)}
ONE = sp.Integer(1)


def rules(correlation: Fraction = Fraction(0), diagonal: bool = True) -> MomentRules:
    """Two Gaussian vectors e, f with variance s2 and correlation ``correlation``; fixed
    vectors a = (a1, a2), b = (b1, b2)."""

    def covariance(x, y):
        if x == y:
            return Fraction(1), ("s2",)
        return (correlation, ("s2",)) if correlation else None

    def coordinates(name):
        return {axis: (Fraction(1), (f"{name}{axis}",)) for axis in (1, 2)}

    pair = (Fraction(1), ("inv_d", "kappa", "kappa"))
    diag = (Fraction(1 if diagonal else 0), ("chi", "inv_d", "kappa", "kappa"))
    return MomentRules("d", coordinates, covariance, pair, diag)


def E(polynomial, moment_rules=None):
    value = expectation(polynomial, moment_rules or rules(), lambda p: named_to_sympy(p, NAMES))
    return sp.expand(sp.sympify(value).subs(inv_d, 1 / d))


e, f = {gaussian("e"): ONE}, {gaussian("f"): ONE}
a, b = {fixed("a"): ONE}, {fixed("b"): ONE}


def test_first_moments():
    assert E(bilinear(IDENTITY, e, e)) == s2 * d
    assert E(bilinear(IDENTITY, e, f)) == 0
    assert E(bilinear(IDENTITY, a, e)) == 0
    assert E(bilinear(IDENTITY, a, b)) == sp.expand(a1 * b1 + a2 * b2)
    assert E(bilinear(FLUCTUATION, a, b)) == 0  # E[A] = kappa0 I


def test_gaussian_second_and_fourth_moments():
    ee = bilinear(IDENTITY, e, e)
    assert E(ee * ee) == sp.expand(s2**2 * (d**2 + 2 * d))
    ef = bilinear(IDENTITY, e, f)
    assert E(ef * ef) == s2**2 * d
    ae, be = bilinear(IDENTITY, a, e), bilinear(IDENTITY, b, e)
    assert E(ae * be) == sp.expand(s2 * (a1 * b1 + a2 * b2))
    assert E(ee * ae) == 0  # odd
    # correlated vectors: E<e,f> = rho s2 d, E<e,f>^2 = s2^2 (d^2 rho^2 + d + d rho^2)
    half = rules(Fraction(1, 2))
    assert E(ef, half) == s2 * d / 2
    assert E(ef * ef, half) == sp.expand(s2**2 * (d**2 / 4 + d + d / 4))


def test_matrix_second_moments():
    aDa = bilinear(FLUCTUATION, a, a)
    expected = kappa**2 / d * (2 * (a1**2 + a2**2) ** 2 + chi * (a1**4 + a2**4))
    assert E(aDa * aDa) == sp.expand(expected)
    eDf = bilinear(FLUCTUATION, e, f)
    assert E(eDf * eDf) == sp.expand(kappa**2 * s2**2 * (d + 1 + chi))
    eDe = bilinear(FLUCTUATION, e, e)
    assert E(eDe * eDe) == sp.expand(kappa**2 * s2**2 * (2 * d + 4 + 3 * chi))
    assert E(eDe * bilinear(IDENTITY, e, e)) == 0  # one Delta


def test_more_than_two_matrices_are_refused():
    aDa = bilinear(FLUCTUATION, a, a)
    with pytest.raises(NotImplementedError):
        E(aDa * aDa * aDa)


def _uniform_A_moments(size: int, draws: int, seed: int) -> tuple[float, float]:
    """Monte Carlo of Var(e1^T A e1) and Var(e1^T A e2), W uniform on (-1/sqrt d, 1/sqrt d)."""
    rng = np.random.default_rng(seed)
    scale = 1 / np.sqrt(size)
    W = rng.uniform(-scale, scale, (draws, size, size))
    A = np.einsum("nrk,nrl->nkl", W, W)
    return float(A[:, 0, 0].var()), float(A[:, 0, 1].var())


def test_matrix_rule_matches_uniform_entries_and_a_wrong_rule_does_not():
    """Uniform entries on (-s, s): sigma0^2 = s^2/3, m4 = s^4/5, chi = 9/5 - 3 = -6/5. The
    rule gives Var(e1^T A e1) = kappa^2 (2 + chi)/d and Var(e1^T A e2) = kappa^2/d. Tolerance
    fixed before the run: 5 standard errors of a variance from 20000 draws (relative
    sqrt((kurtosis - 1)/N) <= sqrt(4/N))."""
    size, draws = 6, 20_000
    measured_diag, measured_off = _uniform_A_moments(size, draws, seed=3)
    k = (1 / 3) ** 2 / size  # kappa0 = 1/3
    x, y = {fixed("x"): ONE}, {fixed("y"): ONE}

    def coordinates(name):
        return {1 if name == "x" else 2: (Fraction(1), ())}

    def predicted(excess: float) -> tuple[float, float]:
        moment_rules = MomentRules(
            "d", coordinates, lambda p, q: None, (Fraction(1), ("k",)), (Fraction(1), ("k", "c"))
        )
        values = {"k": k, "c": excess}
        diag = expectation(
            bilinear(FLUCTUATION, x, x) * bilinear(FLUCTUATION, x, x),
            moment_rules,
            lambda p: sum(float(c) * np.prod([values[n] for n in key]) for key, c in p.items()),
        )
        off = expectation(
            bilinear(FLUCTUATION, x, y) * bilinear(FLUCTUATION, x, y),
            moment_rules,
            lambda p: sum(float(c) * np.prod([values[n] for n in key]) for key, c in p.items()),
        )
        return diag, off

    tolerance = 5 * np.sqrt(4 / draws)
    right_diag, right_off = predicted(-6 / 5)
    assert abs(measured_diag / right_diag - 1) < tolerance
    assert abs(measured_off / right_off - 1) < tolerance
    wrong_diag, _ = predicted(0.0)  # the Gaussian-entry rule
    assert abs(measured_diag / wrong_diag - 1) > tolerance
