"""g, g^-1 and the quadrature: symbolic proofs, round trips over [-50, 1e4] with
warnings as errors, mpmath precision, overflow-free gap trajectories and times."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.foundation.proof import residuals_vanish
from theory.quadrature import g as q

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

token_counts = st.integers(2, 1000)
gaps_in_range = st.floats(-50.0, 1e4, allow_nan=False, allow_infinity=False)


# --------------------------------------------------------------------------- symbolic


def test_derivatives_of_g():
    assert residuals_vanish(q.g_derivative_residuals())


def test_quadrature_flow_and_its_solution():
    assert q.quadrature_flow_residual() == 0
    assert q.quadrature_solution_residual() == 0


def test_symmetries_of_g():
    assert residuals_vanish(q.g_symmetry_residuals())


def test_time_to_reach_gap_scaling_limit():
    assert q.time_to_reach_gap_limit() == 1


# --------------------------------------------------------------------------- g


@settings(max_examples=60, deadline=None)
@given(gap=st.floats(-700.0, 700.0), T=token_counts)
def test_float_g_matches_mpmath(gap, T):
    value = float(q.g(gap, T))
    with mpmath.workdps(40):
        exact = q.g_mp(gap, T, dps=40)
        magnitude = 2 * abs(gap) + 2 * abs(mpmath.sinh(gap - mpmath.log(T)))
        # rounding of the terms, plus the conditioning of x -> g(x): eps |x - log T| g'(x)
        conditioning = (abs(gap) + math.log(T)) * q.g_prime_mp(gap, T, 40)
        allowed = 8 * q.FLOAT64_EPSILON * (magnitude + math.log(T) + conditioning)
        assert abs(value - exact) <= allowed
    sign, log_abs = q.signed_log_g(gap, T)
    if exact != 0:
        assert sign == float(mpmath.sign(exact))
        assert abs(log_abs - float(mpmath.log(abs(exact)))) <= float(allowed / abs(exact))


def test_g_overflows_cleanly_and_log_g_does_not():
    T = 8
    assert np.isinf(q.g(1e4, T)) and q.g(1e4, T) > 0
    assert np.isinf(q.g(-1e4, T)) and q.g(-1e4, T) < 0
    with mpmath.workdps(30):
        exact_log = mpmath.log(q.g_mp(1e4, T, dps=30))
    assert math.isclose(float(q.log_g(1e4, T)), float(exact_log), rel_tol=1e-15)
    assert np.isinf(q.g_prime(1e4, T))
    assert math.isclose(float(q.log_g_prime(1e4, T)), 1e4 - math.log(T), rel_tol=1e-15)
    with pytest.raises(ValueError, match=r"x=.* is invalid: allowed gaps above g_root"):
        q.log_g(0.0, T)


def test_g_root():
    for T in (2, 8, 100):
        root = q.g_root(T)
        assert abs(float(q.g(root, T))) <= 8 * q.FLOAT64_EPSILON * T
        assert q.g(root + 1e-9, T) > 0 > q.g(root - 1e-9, T)


# --------------------------------------------------------------------------- g inverse


@settings(max_examples=200, deadline=None)
@given(gap=gaps_in_range, T=token_counts)
def test_float_round_trip_through_log_path(gap, T):
    sign, log_abs = q.signed_log_g(gap, T)
    recovered = float(q.g_inverse_log(log_abs, T, sign=sign))
    assert math.isfinite(recovered)
    floor = float(q.g_inverse_float_floor(gap, T))
    assert abs(recovered - gap) <= 1e-12 * abs(gap) + 8 * floor
    if abs(gap) >= 0.05:  # away from 0 the floor is below 1e-12 relative
        assert abs(recovered - gap) <= 1e-12 * abs(gap)


@settings(max_examples=200, deadline=None)
@given(gap=st.floats(-50.0, 700.0), T=token_counts)
def test_float_round_trip_through_value_path(gap, T):
    value = float(q.g(gap, T))
    recovered = q.g_inverse(value, T)
    assert isinstance(recovered, float) and math.isfinite(recovered)
    floor = float(q.g_inverse_float_floor(gap, T))
    assert abs(recovered - gap) <= 1e-12 * abs(gap) + 8 * floor
    if abs(gap) >= 0.05:
        assert abs(recovered - gap) <= 1e-12 * abs(gap)


def test_float_floor_is_honest_near_zero():
    """Near x = 0 the float path is limited by the rounding of y = g(x) ~ 1/T - T: the
    documented floor is a few 1e-16 absolute, so 1e-12 relative fails below |x| ~ 1e-3."""
    T = 8
    gaps = np.geomspace(1e-12, 1e-3, 50)
    recovered = q.g_inverse(q.g(gaps, T), T)
    floors = q.g_inverse_float_floor(gaps, T)
    assert np.all(np.abs(recovered - gaps) <= 8 * floors)
    assert np.all(floors <= 2e-15)


def test_float_inverse_is_vectorised_and_handles_sign_zero():
    T = 8
    gaps = np.array([[-50.0, -1.0, 0.0], [0.5, 30.0, 1e4]])
    sign, log_abs = q.signed_log_g(gaps, T)
    recovered = q.g_inverse_log(log_abs, T, sign=sign)
    assert recovered.shape == gaps.shape
    np.testing.assert_allclose(recovered, gaps, rtol=1e-12, atol=1e-15)
    assert q.g_inverse_log(-np.inf, T, sign=0) == pytest.approx(q.g_root(T), abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(gap=gaps_in_range, T=token_counts)
def test_mpmath_round_trip_is_relative_even_near_zero(gap, T):
    """The mpmath path reaches 1e-12 relative for every x, including tiny |x|, when y is
    computed at enough digits (about 12 + log10(1/|x|) + log10(T))."""
    digits = 30 + (0 if gap == 0 else max(0, math.ceil(-math.log10(abs(gap)))))
    value = q.g_mp(gap, T, dps=digits)
    recovered = q.g_inverse(value, T, dps=digits)
    assert isinstance(recovered, mpmath.mpf)
    with mpmath.workdps(digits):
        error = abs(recovered - mpmath.mpf(gap))
        assert error <= mpmath.mpf(10) ** (-12) * abs(mpmath.mpf(gap)) + mpmath.mpf(10) ** (
            -digits + 3
        )


def test_mpmath_inverse_of_astronomical_values():
    for T in (2, 8, 1000):
        value = q.g_mp(1e4, T)  # ~ e^{10000}/T: far beyond float range
        assert math.isclose(float(q.g_inverse(value, T)), 1e4, rel_tol=1e-13)
        negative = q.g_mp(-1e4, T)
        assert math.isclose(float(q.g_inverse(negative, T)), -1e4, rel_tol=1e-13)
    googolplexish = mpmath.mpf("1e100000")
    with mpmath.workdps(30):
        expected = mpmath.log(8 * googolplexish)
    assert abs(q.g_inverse(googolplexish, 8) - expected) <= 1e-20 * expected
    # the global precision is untouched
    assert mpmath.mp.dps == 15


# --------------------------------------------------------------------------- quadrature


@st.composite
def quadrature_inputs(draw):
    T = draw(st.integers(2, 100))
    x0 = draw(st.floats(-50.0, 1e3))
    rate = draw(st.floats(1e-2, 1e2)) * draw(st.sampled_from([1.0, -1.0]))
    tau = 10.0 ** draw(st.floats(-3.0, 30.0))
    return x0, rate, tau, T


@settings(max_examples=60, deadline=None)
@given(quadrature_inputs())
def test_quadrature_gap_matches_mpmath_for_astronomical_times(inputs):
    x0, rate, tau, T = inputs
    value = float(q.quadrature_gap(x0, rate, tau, T))
    assert math.isfinite(value)
    with mpmath.workdps(60):
        exact = q.quadrature_gap_mp(x0, rate, tau, T, dps=60)
        # conditioning: the inputs' rounding moves y by ~eps (|g(x0)| + |c tau|) * |log y|
        y_scale = abs(q.g_mp(x0, T, 60)) + abs(mpmath.mpf(rate) * tau)
        slope = q.g_prime_mp(exact, T, 60)
        log_size = 1 + abs(mpmath.log(y_scale))
        allowed = 1e-12 * (1 + abs(exact)) + 16 * q.FLOAT64_EPSILON * log_size * y_scale / slope
        assert abs(value - exact) <= allowed


def test_quadrature_gap_grows_like_log_tau():
    T, rate = 8, 1.0
    taus = np.array([1e10, 1e20, 1e30, 1e100, 1e300])
    gaps = q.quadrature_gap(0.0, rate, taus, T)
    leading = np.log(T * rate * taus)  # g^-1(y) = log(T y) - 2 log(T y)/y + ...
    assert np.all(np.abs(gaps - leading) <= 3 * leading / (rate * taus) + 1e-13 * leading)


def test_quadrature_time_versions_agree():
    T, rate = 8, 0.7
    exact = q.quadrature_time(0.0, 30.0, rate, T)
    assert math.isclose(
        float(q.quadrature_time_float(0.0, 30.0, rate, T)), float(exact), rel_tol=1e-13
    )
    assert math.isclose(
        float(q.log_quadrature_time(0.0, 30.0, rate, T)), float(mpmath.log(exact)), rel_tol=1e-14
    )
    far = q.quadrature_time(0.0, 1e4, rate, T)
    assert math.isclose(
        float(q.log_quadrature_time(0.0, 1e4, rate, T)), float(mpmath.log(far)), rel_tol=1e-15
    )
    assert np.isinf(q.quadrature_time_float(0.0, 1e4, rate, T))
    assert q.quadrature_time_float(0.0, -5.0, rate, T) < 0  # behind the flow: negative
    with pytest.raises(ValueError, match=r"x1=-5 is invalid: allowed a gap reachable from x0"):
        q.log_quadrature_time(0.0, -5.0, rate, T)


@settings(max_examples=30, deadline=None)
@given(
    x0=st.floats(-5.0, 5.0),
    gap=st.floats(40.0, 5e3),
    rate=st.floats(1e-3, 1e3),
    T=st.integers(2, 1000),
)
def test_time_to_reach_gap_is_e_to_the_x_over_cT(x0, gap, rate, T):
    log_time = float(q.log_quadrature_time(x0, gap, rate, T))
    log_scaling = float(q.log_time_to_reach_gap_scaling(gap, rate, T))
    # relative correction (2x - g(x0)) T e^{-x} - T^2 e^{-2x}, tiny for x >= 40
    correction = (2 * gap + abs(float(q.g(x0, T)))) * T * math.exp(-gap) + T**2 * math.exp(-2 * gap)
    assert abs(log_time - log_scaling) <= 2 * correction + 1e-12 * abs(log_scaling)


def test_time_round_trips_with_the_gap():
    T, rate, x0 = 8, 2.5, -3.0
    for tau in (1e-2, 1.0, 1e5, 1e25):
        gap = float(q.quadrature_gap(x0, rate, tau, T))
        with mpmath.workdps(50):
            back = q.quadrature_time(x0, gap, rate, T, dps=50)
            assert abs(back - tau) <= 1e-11 * tau + 1e-12


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match=r"T=.* is invalid: allowed a finite real number > 0"):
        q.g(1.0, 0)
    with pytest.raises(ValueError, match=r"y=.* is invalid: allowed finite real numbers"):
        q.g_inverse(np.inf, 8)
    with pytest.raises(ValueError, match=r"tau=.* is invalid: allowed times >= 0"):
        q.quadrature_gap(0.0, 1.0, -1.0, 8)
    with pytest.raises(ValueError, match=r"c=.* is invalid: allowed a non-zero rate"):
        q.quadrature_time(0.0, 1.0, 0.0, 8)
