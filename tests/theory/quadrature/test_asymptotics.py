"""Large-argument asymptotics of g^-1: SymPy series, and the stated error constants checked
against high-precision mpmath inverses from y = 1e3 to 1e300 and far beyond."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.quadrature import asymptotics as qa
from theory.quadrature import g as q

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

L = sp.Symbol("L", real=True)


def test_series_coefficients():
    a1, a2, a3 = qa.g_inverse_series_coefficients(3)
    assert sp.expand(a1 + 2 * L) == 0
    assert sp.expand(a2 - (-2 * L**2 + 4 * L + 1)) == 0
    assert sp.expand(a3 - (-sp.Rational(8, 3) * L**3 + 12 * L**2 - 4 * L - 2)) == 0


def test_series_solves_the_equation_to_the_stated_order():
    assert qa.g_inverse_series_residual(3) == 0


def _errors(y: mpmath.mpf, T: float) -> tuple[mpmath.mpf, ...]:
    """Order-1 and order-2 errors, the rigorous bound and the two stated bounds."""
    digits = int(3 * float(mpmath.log10(abs(y)))) + 30
    with mpmath.workdps(digits):
        exact = q.g_inverse(y, T, dps=digits)
        order1 = abs(exact - qa.g_inverse_asymptotic(y, T, order=1))
        order2 = abs(exact - qa.g_inverse_asymptotic(y, T, order=2))
        return (
            order1,
            order2,
            qa.g_inverse_asymptotic_error_bound(y, T),
            qa.g_inverse_asymptotic_simple_bound(y, T, order=1),
            qa.g_inverse_asymptotic_simple_bound(y, T, order=2),
        )


@settings(max_examples=40, deadline=None)
@given(
    exponent=st.floats(3.0, 300.0),
    T=st.sampled_from([2, 3, 8, 64, 1000]),
    negative=st.booleans(),
)
def test_error_constants_hold_from_1e3_to_1e300(exponent, T, negative):
    size = mpmath.mpf(10) ** mpmath.mpf(exponent)
    # negative branch: the series is in L = log(|y|/T); the constants need |y| >= 1000 T
    y = -size * T if negative else size
    order1, order2, rigorous, stated1, stated2 = _errors(y, T)
    assert order1 <= rigorous <= stated1
    assert order2 <= stated2


@pytest.mark.parametrize("T", [2, 8, 1000])
@pytest.mark.parametrize("sign", [1, -1])
def test_error_constants_hold_far_beyond_float_range(T, sign):
    for power in (400, 1000):
        y = sign * mpmath.mpf(10) ** power * (T if sign < 0 else 1)
        order1, order2, rigorous, stated1, stated2 = _errors(y, T)
        assert order1 <= rigorous <= stated1
        assert order2 <= stated2


def test_error_constants_hold_at_ten_to_the_3000():
    order1, order2, rigorous, stated1, stated2 = _errors(mpmath.mpf(10) ** 3000, 8)
    assert order1 <= rigorous <= stated1
    assert order2 <= stated2


def test_order1_constant_is_sharp():
    """|R_1| y^2 / L^2 -> 2 (the leading coefficient of a_2 = -2L^2 + ...)."""
    y = mpmath.mpf(10) ** 200
    order1, *_ = _errors(y, 8)
    with mpmath.workdps(30):
        ratio = order1 * y**2 / mpmath.log(8 * y) ** 2
    assert 1.95 <= float(ratio) <= 2.0


def test_float_log_domain_asymptotic_matches_inverse():
    T = 8
    log_y = np.array([10.0, 50.0, 300.0, 1e3, 1e5])
    approximation = qa.g_inverse_asymptotic_log(log_y, T, order=2)
    exact = q.g_inverse_log(log_y, T)
    bound = 3 * (log_y + math.log(T)) ** 3 * np.exp(-3 * log_y)
    assert np.all(np.abs(approximation - exact) <= bound + 4 * q.FLOAT64_EPSILON * exact)
    negative = qa.g_inverse_asymptotic_log(log_y, T, order=2, sign=-1)
    exact_negative = q.g_inverse_log(log_y, T, sign=-1)
    tail = slice(1, None)
    assert np.all(
        np.abs(negative[tail] - exact_negative[tail])
        <= 4 * q.FLOAT64_EPSILON * np.abs(exact_negative[tail])
    )


def test_leading_order_is_log_Ty():
    assert qa.g_inverse_asymptotic(1e6, 8, order=0) == pytest.approx(math.log(8e6), rel=1e-15)
    assert qa.g_inverse_asymptotic(-1e6, 8, order=0) == pytest.approx(-math.log(1e6 / 8), rel=1e-15)


def test_bound_refuses_outside_its_domain():
    with pytest.raises(ValueError, match=r"y=.* is invalid: allowed .*order-1 bound needs"):
        qa.g_inverse_asymptotic_error_bound(1.5, 0.5)
    with pytest.raises(ValueError, match=r"y=0.* is invalid: allowed a non-zero value"):
        qa.g_inverse_asymptotic(0.0, 8)
