"""Conservation laws: symbolic proofs and the exact GD drift formula against direct GD."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import invariants

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.mark.parametrize("d", [2, 3, 4])
def test_gradient_flow_conserves_WWT_minus_ppT(d):
    assert invariants.gradient_flow_invariant_residual(d).is_zero_matrix


@pytest.mark.parametrize("d", [2, 3, 4])
def test_query_velocity_formula(d):
    assert invariants.query_velocity_residual(d).is_zero_matrix


@pytest.mark.parametrize("d", [2, 3, 4])
def test_gd_drift_formula_symbolic(d):
    assert invariants.gd_invariant_drift_residual(d).is_zero_matrix


@st.composite
def states(draw):
    d = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    alpha = draw(st.floats(1e-4, 1.0))
    scale = draw(st.floats(0.01, 10.0))
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(d, d)), rng.normal(size=d), scale * rng.normal(size=d), alpha)


@settings(max_examples=50, deadline=None)
@given(states())
def test_gd_drift_equals_direct_gd_step(state):
    W, p, G, alpha = state
    W_next = W - alpha * np.outer(p, G)
    p_next = p - alpha * W @ G
    direct = invariants.conserved_matrix(W_next, p_next) - invariants.conserved_matrix(W, p)
    predicted = invariants.gd_invariant_drift(W, p, G, alpha)
    # The direct difference cancels O(|W|^2 + |p|^2) terms: its rounding is ~eps times those.
    rounding = (
        64
        * np.finfo(float).eps
        * (
            np.abs(W_next) @ np.abs(W_next).T
            + np.abs(W) @ np.abs(W).T
            + np.outer(np.abs(p_next), np.abs(p_next))
            + np.outer(np.abs(p), np.abs(p))
        )
    )
    assert np.all(np.abs(direct - predicted) <= rounding)


@settings(max_examples=30, deadline=None)
@given(states())
def test_query_velocity_is_the_flow_derivative_of_WTp(state):
    W, p, G, _ = state
    W_dot, p_dot = -np.outer(p, G), -W @ G
    direct = W_dot.T @ p + W.T @ p_dot
    np.testing.assert_allclose(
        invariants.query_velocity(W, p, G),
        direct,
        rtol=1e-12,
        atol=1e-12 * (np.linalg.norm(W) ** 2 + p @ p) * np.linalg.norm(G),
    )


def test_drift_is_second_order_in_alpha():
    """The invariant's change over an actual GD step (not the formula) has no first-order
    term in alpha: doubling the step multiplies it by 4 (a first-order term would make
    the ratio 2 at small alpha)."""
    rng = np.random.default_rng(1)
    W, p, G = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)

    def direct(alpha):
        W_next, p_next = W - alpha * np.outer(p, G), p - alpha * W @ G
        return invariants.conserved_matrix(W_next, p_next) - invariants.conserved_matrix(W, p)

    np.testing.assert_allclose(direct(2e-3) / direct(1e-3), 4.0, rtol=1e-6)
