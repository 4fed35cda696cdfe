"""Hand-written overflow-free kernels equal the lambdified SymPy forms they implement."""

from __future__ import annotations

import math
from functools import cache

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import invariants, model
from theory import softmax_cosh as sc
from theory.foundation.codegen import generated_source, lambdify_mpmath, lambdify_numpy
from theory.foundation.symbols import T as T_symbol
from theory.foundation.symbols import alpha as alpha_symbol
from theory.foundation.symbols import c as c_symbol
from theory.foundation.symbols import gap_symbols, real_matrix, real_vector
from theory.foundation.symbols import x as x_symbol
from theory.quadrature import g as q
from theory.quadrature import gd as gq

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

moderate_gaps = st.floats(-30.0, 30.0)
token_counts = st.integers(2, 64)


def _close(value: float, exact: mpmath.mpf, size: float) -> bool:
    """Agreement up to a few eps times the conditioning ``size``."""
    return (
        abs(mpmath.mpf(float(value)) - exact)
        <= 16 * q.FLOAT64_EPSILON * (1 + size) * abs(exact) + 1e-300
    )


@cache
def _generated(name: str):
    """Lambdified (mpmath) SymPy forms, built once per test session."""
    arguments = [x_symbol, T_symbol]
    forms = {
        "g": q.g_expression(),
        "g_prime": q.g_prime_expression(),
        "exact_saturation": sc.exact_saturation_expression(),
        "paper_saturation": sc.paper_saturation_expression(),
        "paper_ratio": sc.paper_form_ratio_expression(),
    }
    return lambdify_mpmath(arguments, forms[name])


@settings(max_examples=40, deadline=None)
@given(gap=moderate_gaps, T=token_counts)
def test_g_kernels_equal_sympy(gap, T):
    with mpmath.workdps(40):
        argument = mpmath.mpf(gap)
        exact = _generated("g")(argument, T)
        slope = _generated("g_prime")(argument, T)
        # rounding of the terms plus the conditioning eps |x - log T| g'(x) of x -> g(x)
        terms = 2 * abs(gap) + abs(exact - 2 * argument) + math.log(T)
        allowed = 16 * q.FLOAT64_EPSILON * (terms + (abs(gap) + math.log(T)) * slope)
        assert abs(float(q.g(gap, T)) - exact) <= allowed
        assert _close(q.g_mp(gap, T, dps=40), exact, 0.0)
        assert _close(q.g_prime(gap, T), slope, abs(gap) + 2)


@settings(max_examples=40, deadline=None)
@given(gap=moderate_gaps, T=token_counts)
def test_saturation_kernels_equal_sympy(gap, T):
    exact_form, paper_form = _generated("exact_saturation"), _generated("paper_saturation")
    ratio_form = _generated("paper_ratio")
    with mpmath.workdps(40):
        argument = mpmath.mpf(gap)
        size = abs(gap) + math.log(T)
        assert _close(sc.saturation_equal_gaps(gap, T), exact_form(argument, T), size)
        assert _close(sc.saturation_paper_form(gap, T), paper_form(argument, T), size)
        assert _close(sc.paper_form_ratio(gap, T), ratio_form(argument, T), size)


@settings(max_examples=30, deadline=None)
@given(gaps=st.lists(moderate_gaps, min_size=3, max_size=3))
def test_unequal_gap_kernels_equal_sympy(gaps):
    symbols = gap_symbols(3)
    total = sp.Add(*[sp.exp(-g) for g in symbols])
    saturation = lambdify_mpmath([symbols], total / (1 + total) ** 2)
    soft_min = lambdify_mpmath([symbols], sc.effective_gap_expression(symbols))
    with mpmath.workdps(40):
        values = [mpmath.mpf(g) for g in gaps]
        size = max(abs(g) for g in gaps)
        assert _close(sc.selected_saturation(np.array(gaps)), saturation(values), size)
        assert abs(float(sc.effective_gap(np.array(gaps))) - soft_min(values)) <= 1e-13 * (1 + size)


@settings(max_examples=30, deadline=None)
@given(gap=moderate_gaps, rate=st.floats(-10.0, 10.0), alpha=st.floats(1e-4, 1.0), T=token_counts)
def test_gd_step_bound_equals_sympy(gap, rate, alpha, T):
    shifted = x_symbol - sp.log(T_symbol)
    step = alpha_symbol * c_symbol / q.g_prime_expression()
    bound = (
        (alpha_symbol * c_symbol) ** 2
        * sp.exp(sp.Abs(step))
        * sp.cosh(shifted)
        / (4 * (1 + sp.cosh(shifted)) ** 2)
    )
    exact = lambdify_mpmath([x_symbol, c_symbol, alpha_symbol, T_symbol], bound)
    with mpmath.workdps(40):
        value = exact(mpmath.mpf(gap), mpmath.mpf(rate), mpmath.mpf(alpha), T)
        assert _close(gq.gd_step_defect_bound(gap, rate, alpha, T), value, abs(gap) + 2)


def test_gd_drift_kernel_equals_lambdified_sympy():
    d = 3
    W, p, G = real_matrix("W", d, d), real_vector("p", d), real_vector("G", d)
    drift = lambdify_numpy(
        [list(W), list(p), list(G), alpha_symbol], invariants.gd_invariant_drift_expression(d)
    )
    rng = np.random.default_rng(3)
    for _ in range(5):
        W_value, p_value, G_value = rng.normal(size=(d, d)), rng.normal(size=d), rng.normal(size=d)
        generated = np.array(
            drift(list(W_value.ravel()), list(p_value), list(G_value), 0.3), dtype=float
        )
        np.testing.assert_allclose(
            invariants.gd_invariant_drift(W_value, p_value, G_value, 0.3),
            generated,
            rtol=1e-12,
            atol=1e-12,
        )


def test_generated_source_is_inspectable():
    logits = sp.symbols("a_1:3", real=True)
    source = generated_source([logits], model.stable_softmax(logits)[0])
    assert "def _lambdifygenerated" in source and "exp" in source
