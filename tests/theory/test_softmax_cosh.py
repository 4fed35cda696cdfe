"""The softmax/cosh identity, the paper-form factor, unequal gaps and their brackets."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import softmax_cosh as sc
from theory.foundation.proof import residuals_vanish

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

gaps_value = st.floats(-800.0, 800.0, allow_nan=False)
token_counts = st.integers(2, 64)
SUBNORMAL_SPACING = 4 * 2.0**-1074  # absolute resolution of float64 below 2.2e-308


def _conditioned_tolerance(size: float) -> float:
    """Relative tolerance for a quantity whose relative condition number is ~``size``."""
    return 8 * np.finfo(float).eps * (4.0 + size)


def test_symbolic_identity_for_symbolic_T():
    assert sc.saturation_identity_residual() == 0


def test_cosh_shift_inequality_identity():
    assert residuals_vanish(sc.cosh_shift_identity_residuals())


def test_ratio_limits_are_the_sharp_factor():
    import sympy as sp

    from theory.foundation.symbols import T

    upper, lower = sc.paper_form_ratio_limits()
    assert sp.simplify(upper - T / (T - 1)) == 0
    assert sp.simplify(lower - (T - 1) / T) == 0


def test_unimodality_derivative():
    assert sc.saturation_slope_residual() == 0


@pytest.mark.parametrize("T", range(2, 9))
def test_unequal_gaps_identities(T):
    assert residuals_vanish(sc.unequal_gaps_residuals(T))


@settings(max_examples=60, deadline=None)
@given(gap=gaps_value, T=token_counts)
def test_exact_identity_numerically(gap, T):
    # s(1-s) has relative condition number ~|x| in x: the float answer is good to a few
    # eps * (|x| + log T), which is what the tolerance allows.
    tolerance = _conditioned_tolerance(abs(gap) + math.log(T))
    with mpmath.workdps(40):
        s = mpmath.exp(gap) / (mpmath.exp(gap) + T - 1)
        exact = s * (T - 1) / (mpmath.exp(gap) + T - 1)  # s (1 - s) without cancellation
        value = sc.saturation_equal_gaps(gap, T)
        assert abs(mpmath.mpf(float(value)) - exact) <= tolerance * exact + SUBNORMAL_SPACING
        leader = sc.leader_probability(np.full(T - 1, gap))
        assert abs(mpmath.mpf(float(leader)) - s) <= tolerance * s + SUBNORMAL_SPACING


@settings(max_examples=60, deadline=None)
@given(gap=gaps_value, T=token_counts)
def test_paper_form_within_factor_T_over_T_minus_1(gap, T):
    lower, upper = sc.paper_form_ratio_bound(T)
    ratio = float(sc.paper_form_ratio(gap, T))
    assert lower * (1 - 1e-14) <= ratio <= upper * (1 + 1e-14)
    exact, paper = sc.saturation_equal_gaps(gap, T), sc.saturation_paper_form(gap, T)
    if exact > 1e-290:  # away from float underflow the ratio is the direct quotient
        assert math.isclose(paper / exact, ratio, rel_tol=1e-12)


def test_paper_form_factor_is_attained_asymptotically():
    for T in (2, 8, 64):
        lower, upper = sc.paper_form_ratio_bound(T)
        assert math.isclose(float(sc.paper_form_ratio(60.0, T)), upper, rel_tol=1e-12)
        assert math.isclose(float(sc.paper_form_ratio(-60.0, T)), lower, rel_tol=1e-12)


@st.composite
def gap_vectors(draw):
    T = draw(token_counts)
    center = draw(st.floats(-300.0, 300.0))
    spread = draw(st.floats(0.0, 50.0))
    offsets = draw(st.lists(st.floats(0.0, 1.0), min_size=T - 1, max_size=T - 1))
    return np.array([center + spread * o for o in offsets])


@settings(max_examples=80, deadline=None)
@given(gap_vectors())
def test_unequal_gaps_saturation_is_exact_and_bracketed(gaps):
    T = gaps.size + 1
    saturation = float(sc.selected_saturation(gaps))
    with mpmath.workdps(40):
        competitors = mpmath.fsum(mpmath.exp(-mpmath.mpf(g)) for g in gaps)
        exact = competitors / (1 + competitors) ** 2
        tolerance = _conditioned_tolerance(float(np.max(np.abs(gaps))) + math.log(T))
        assert abs(mpmath.mpf(saturation) - exact) <= tolerance * exact + SUBNORMAL_SPACING
    x_eff = float(sc.effective_gap(gaps))
    assert math.isclose(float(sc.saturation_equal_gaps(x_eff, T)), saturation, rel_tol=1e-12)
    # The bracket on x_eff, from the gaps themselves (not from effective_gap_bounds).
    slack = 1e-12 * (1 + abs(x_eff))
    low, high = float(gaps.min()), min(float(gaps.max()), float(gaps.min()) + math.log(T - 1))
    assert low - slack <= x_eff <= high + slack
    assert sc.effective_gap_bounds(gaps) == pytest.approx((low, high), rel=1e-12, abs=1e-12)
    lower, upper = sc.saturation_bounds(gaps.min(), gaps.max(), T)
    assert lower * (1 - 1e-12) <= saturation <= upper * (1 + 1e-12)
    assert upper <= 0.25


def test_bracket_is_tight_for_equal_gaps():
    for T in (2, 5, 8):
        for gap in (-3.0, 0.0, 1.7, 20.0):
            lower, upper = sc.saturation_bounds(gap, gap, T)
            value = sc.selected_saturation(np.full(T - 1, gap))
            assert math.isclose(lower, value, rel_tol=1e-12)
            assert math.isclose(upper, value, rel_tol=1e-12)


def test_no_overflow_at_extreme_gaps():
    huge = np.array([[1e4, 2e4, 5e4], [-1e4, 0.0, 1e4]])
    values = sc.selected_saturation(huge)
    assert np.all(np.isfinite(values)) and values[0] >= 0.0
    assert np.all(np.isfinite(sc.effective_gap(huge)))


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match=r"T=.* is invalid: allowed an integer >= 2"):
        sc.paper_form_ratio_bound(1)
    with pytest.raises(ValueError, match=r"x_min=.* is invalid: allowed a value <= x_max"):
        sc.saturation_bounds(2.0, 1.0, 4)
    with pytest.raises(ValueError, match=r"gaps=.* is invalid: allowed an array whose last axis"):
        sc.selected_saturation(np.zeros((3, 0)))


# --------------------------------------------------------------------------- the simulator


@pytest.mark.parametrize("T", [2, 3, 8, 32])
def test_simulator_saturation_is_the_closed_form(T):
    """The simulator's saturation (verify.sim.observables.relevant_saturation: s_R (1 - s_R)
    of the softmax, Figure 2's quantity) on logits whose relevant token leads every other by
    x equals 1/(2 + 2 cosh(x - log(T-1))) for x from -30 to 30, and with unequal gaps the
    theory's S/(1+S)^2; the paper's form (log T) misses it."""
    from verify.sim.data import IRRELEVANT, RELEVANT
    from verify.sim.kernels import softmax
    from verify.sim.observables import relevant_saturation

    groups = np.array([RELEVANT] + [IRRELEVANT] * (T - 1))
    gaps = np.linspace(-30.0, 30.0, 121)
    logits = np.zeros((gaps.size, T))
    logits[:, 0] = gaps
    simulated = relevant_saturation(softmax(logits), groups)
    np.testing.assert_allclose(simulated, sc.saturation_equal_gaps(gaps, T), rtol=1e-12)
    assert not np.allclose(simulated, sc.saturation_paper_form(gaps, T), rtol=1e-3)
    competitors = np.random.default_rng(T).uniform(-10.0, 10.0, (50, T - 1))
    logits = np.concatenate([np.zeros((50, 1)), -competitors], axis=1)
    simulated = relevant_saturation(softmax(logits), groups)
    np.testing.assert_allclose(simulated, sc.selected_saturation(competitors), rtol=1e-12)
