"""Discrete (GD) quadrature: the recursion stays within the derived bound of the flow
quadrature, the bound is not vacuous, and the per-step enclosure holds exactly."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.foundation.proof import residuals_vanish
from theory.quadrature import g as q
from theory.quadrature import gd as gq

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

EPS = q.FLOAT64_EPSILON


def test_symbolic_steps_of_the_derivation():
    assert residuals_vanish(gq.gd_taylor_remainder_residuals())
    assert gq.saturation_peak_residual() == 0


def _rounding_allowance(result: gq.GDQuadratureComparison) -> np.ndarray:
    """Float rounding of the recursion (about one ulp of x per step) and of the quadrature
    value: the bounds hold in exact arithmetic, the measured errors carry this on top."""
    largest = np.max(np.abs(result.gap_gd), axis=0)
    return 4 * EPS * result.step.reshape((-1,) + (1,) * largest.ndim) * largest + 1e-13 * (
        1 + np.abs(result.gap_flow)
    )


@st.composite
def recursion_parameters(draw):
    T = draw(st.integers(2, 64))
    rate = draw(st.floats(0.1, 10.0)) * draw(st.sampled_from([1.0, 1.0, -1.0]))
    alpha = 10.0 ** draw(st.floats(-3.0, -1.0))
    offset = draw(st.floats(-5.0, 5.0))  # x0 - log T
    steps = draw(st.sampled_from([1_000, 10_000, 30_000]))
    return math.log(T) + offset, rate, alpha, steps, T


@settings(max_examples=20, deadline=None)
@given(recursion_parameters())
def test_recursion_error_is_within_the_derived_bounds(parameters):
    x0, rate, alpha, steps, T = parameters
    result = gq.gd_recursion_bound(x0, rate, alpha, steps, T)
    allowance = _rounding_allowance(result)
    # rigorous: measured <= enclosure bound <= the brief's sum-of-|.| bound <= uniform
    assert np.all(result.gap_error <= result.gap_error_bound_enclosure + allowance)
    assert np.all(result.gap_error_bound_enclosure <= result.gap_error_bound * (1 + 1e-12))
    assert np.all(result.defect_bound <= result.uniform_defect_bound * (1 + 1e-12))
    assert np.all(result.defect_low <= result.defect_high)
    # not vacuous at the end of the run (when truncation dominates rounding)
    final_error = result.gap_error[-1]
    if final_error > 100 * allowance[-1]:
        assert result.gap_error_bound_enclosure[-1] <= 100 * final_error
        crossed = np.sign(x0 - math.log(T)) != np.sign(result.gap_gd[-1] - math.log(T))
        if not crossed:
            assert result.gap_error_bound[-1] <= 100 * final_error


def test_recursion_error_bound_over_1e5_steps():
    T, rate, alpha = 8, 2.0, 0.01
    result = gq.gd_recursion_bound(
        np.array([math.log(T) - 3, math.log(T), 6.0]), rate, alpha, 100_000, T
    )
    allowance = _rounding_allowance(result)
    assert np.all(result.gap_error <= result.gap_error_bound_enclosure + allowance)
    final = result.gap_error[-1]
    assert np.all(final > 100 * allowance[-1])
    assert np.all(result.gap_error_bound_enclosure[-1] <= 2 * final)
    assert np.all(result.gap_error_bound[-1] <= 10 * final)


@settings(max_examples=10, deadline=None)
@given(recursion_parameters())
def test_defect_enclosure_against_mpmath(parameters):
    """g(x_k) - g(x0) - k alpha c, evaluated in mpmath on the float iterates, lies in the
    enclosure (up to the iterates' own rounding, propagated through g')."""
    x0, rate, alpha, steps, T = parameters
    steps = min(steps, 5_000)
    result = gq.gd_recursion_bound(x0, rate, alpha, steps, T)
    with mpmath.workdps(40):
        start = q.g_mp(x0, T, 40)
        for k in (steps // 10, steps // 2, steps):
            defect = q.g_mp(result.gap_gd[k], T, 40) - start - k * mpmath.mpf(alpha) * rate
            rounding = 4 * EPS * k * np.max(np.abs(result.gap_gd[: k + 1])) * float(
                q.g_prime_mp(result.gap_gd[k], T, 40)
            ) + 1e-12 * float(abs(start) + k * alpha * abs(rate))
            assert result.defect_low[k] - rounding <= defect <= result.defect_high[k] + rounding


def test_sum_of_absolute_defects_is_loose_when_the_trajectory_straddles_log_T():
    """Plainly stated limitation of the brief's bound E_k/m: negative defects (x < log T)
    and positive ones (x > log T) cancel, so at the symmetric point it overestimates the
    error by orders of magnitude; the signed enclosure does not."""
    T, rate, alpha = 8, 1.0, 0.05
    result = gq.gd_recursion_bound(math.log(T) - 3, rate, alpha, 2_000, T)
    symmetric = int(np.argmin(np.abs(result.gap_gd[1:] - (math.log(T) + 3)))) + 1
    error = result.gap_error[symmetric]
    assert result.gap_error_bound[symmetric] > 1000 * error
    assert result.gap_error_bound_enclosure[symmetric] < 100 * error


@settings(max_examples=40, deadline=None)
@given(
    gap=st.floats(-800.0, 800.0),
    rate=st.floats(-10.0, 10.0),
    alpha=st.floats(1e-4, 1.0),
    T=st.integers(2, 64),
)
def test_per_step_bounds(gap, rate, alpha, T):
    bound = float(gq.gd_step_defect_bound(gap, rate, alpha, T))
    uniform = float(gq.gd_step_defect_uniform_bound(rate, alpha))
    low, high = gq.gd_step_defect_enclosure(gap, rate, alpha, T)
    assert math.isfinite(bound) and bound <= uniform * (1 + 1e-12)
    assert max(abs(float(low)), abs(float(high))) <= bound * (1 + 1e-12) + 1e-300
    # one exact step in mpmath: the defect lies in the enclosure
    next_gap = float(gq.gd_recursion(gap, rate, alpha, 1, T)[1])
    step_size = abs(next_gap - gap)
    if abs(gap - math.log(T)) < 40 and step_size > 0:
        # the defect is O(step^2): resolve it next to alpha c ~ step with enough digits, and
        # use g(x + s) - g(x) = 2s + 4 cosh(u + s/2) sinh(s/2) (no cancellation)
        digits = 50 + math.ceil(-math.log10(step_size))
        with mpmath.workdps(digits):
            step = mpmath.mpf(next_gap) - gap
            shifted = gap - mpmath.log(T)
            increment = 2 * step + 4 * mpmath.cosh(shifted + step / 2) * mpmath.sinh(step / 2)
            defect = increment - mpmath.mpf(alpha) * rate
            # the float step carries a few roundings (alpha c / g'(x), then x + step):
            # |dstep| <= eps |x| + 8 eps |step|, and at least the subnormal spacing 2^-1074
            slack = (EPS * abs(gap) + 8 * EPS * abs(float(step)) + 4 * 2.0**-1074) * float(
                q.g_prime_mp(next_gap, T, 30)
            )
            assert float(low) - slack <= defect <= float(high) + slack


def test_recursion_is_vectorised_and_matches_the_scalar_loop():
    T = 5
    x0 = np.array([-1.0, 0.5, 4.0])
    rate = np.array([1.0, -2.0, 0.3])
    trajectory = gq.gd_recursion(x0, rate, 0.05, 200, T)
    assert trajectory.shape == (201, 3)
    for j in range(3):
        x = x0[j]
        for _ in range(200):
            x = x + 0.05 * rate[j] / (2 + 2 * math.cosh(x - math.log(T)))
        assert trajectory[-1, j] == pytest.approx(x, rel=1e-13, abs=1e-13)


def test_recursion_has_no_overflow_far_from_log_T():
    trajectory = gq.gd_recursion(np.array([-1e4, 1e4]), 1.0, 0.1, 10, 8)
    np.testing.assert_array_equal(trajectory[-1], [-1e4, 1e4])
