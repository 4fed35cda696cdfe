"""The token-selection SVM: KKT conditions of the solver's answer, wrong answers rejected,
an independent solver agrees, and the reduced-coordinate formulas equal explicit ones."""

import math

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, minimize

from theory.foundation.validation import InvalidParameter
from theory.max_margin import (
    KKT_TOLERANCE,
    constraint_matrix,
    derivations,
    direction_cosine,
    duality_gap_residual,
    kkt_residuals,
    misalignment_constant,
    out_of_span_constant,
    selected_tokens,
    solve_token_svm,
    span_fraction,
)


def random_problem(seed, n=None, T=None, extra=None):
    """Tokens B (d x nT, d >= nT), Gram, a random selection."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(2, 9))
    T = T or int(rng.integers(2, 7))
    d = n * T + (int(rng.integers(0, 25)) if extra is None else extra)
    B = rng.normal(size=(d, n * T)) * rng.uniform(0.5, 3.0)
    selected = rng.integers(0, T, size=n)
    return B, B.T @ B, selected, T


def residuals(gram, selected, T, svm):
    return kkt_residuals(gram, selected, T, svm.coefficients, svm.multipliers)


@pytest.mark.parametrize("seed", range(25))
def test_solution_meets_every_kkt_condition_on_random_problems(seed):
    B, gram, selected, T = random_problem(seed)
    svm = solve_token_svm(gram, selected, T)
    worst = residuals(gram, selected, T, svm)
    assert max(worst.values()) <= KKT_TOLERANCE, worst
    assert svm.active.any()
    # margins of the support constraints are 1, the others at least 1
    np.testing.assert_allclose(svm.margins[svm.active], 1.0, atol=KKT_TOLERANCE)
    assert svm.margins.min() >= 1 - KKT_TOLERANCE
    assert svm.condition < 1e5  # the range for which KKT_TOLERANCE was stated


@pytest.mark.parametrize("seed", range(6))
def test_independent_solver_finds_the_same_query(seed):
    """SLSQP on the primal in d dimensions (its own stopping rule, ftol 1e-14): the queries
    agree to 1e-6 relative (the QP is strictly convex, so the optimum is unique)."""
    B, gram, selected, T = random_problem(seed, n=4, T=4)
    svm = solve_token_svm(gram, selected, T)
    C, _ = constraint_matrix(selected, T)
    reference = minimize(
        lambda q: 0.5 * q @ q,
        B @ svm.coefficients * 1.1,  # a feasible start away from the optimum
        jac=lambda q: q,
        constraints=[LinearConstraint(C @ B.T, 1.0, np.inf)],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert reference.success
    q_star = B @ svm.coefficients
    assert np.linalg.norm(reference.x - q_star) <= 1e-6 * np.linalg.norm(q_star)


def test_wrong_solutions_fail_the_kkt_check():
    B, gram, selected, T = random_problem(3, n=5, T=4)
    svm = solve_token_svm(gram, selected, T)
    beta, lam = svm.coefficients, svm.multipliers
    rng = np.random.default_rng(0)

    def worst(b, m):
        return kkt_residuals(gram, selected, T, b, m)

    perturbed = beta + 1e-4 * np.linalg.norm(beta) * rng.normal(size=beta.size)
    assert worst(perturbed, lam)["stationarity"] > 100 * KKT_TOLERANCE
    assert worst(0.99 * beta, lam)["primal"] > 100 * KKT_TOLERANCE
    dropped = lam.copy()
    dropped[np.argmax(lam)] = 0.0
    assert worst(beta, dropped)["stationarity"] > 100 * KKT_TOLERANCE
    assert worst(beta, -lam)["dual"] > 0.5
    # a multiplier on a slack constraint: stationarity rebuilt, complementarity broken
    C, _ = constraint_matrix(selected, T)
    slack = int(np.argmax(svm.margins))
    assert svm.margins[slack] > 1 + 1e-3
    loose = lam.copy()
    loose[slack] = 0.1 * lam.max()
    assert worst(C.T @ loose, loose)["complementarity"] > 100 * KKT_TOLERANCE


def test_svm_in_another_metric_is_the_explicit_minimiser():
    r"""Kernel :math:`B^\top P B` gives :math:`q = PBc` minimising :math:`q^\top P^{-1} q`:
    compared with SLSQP on the explicit d-dimensional problem."""
    B, gram, selected, T = random_problem(11, n=3, T=4, extra=6)
    rng = np.random.default_rng(1)
    W0 = rng.uniform(-1, 1, size=(B.shape[0], B.shape[0])) / math.sqrt(B.shape[0])
    A = W0.T @ W0
    svm = solve_token_svm(B.T @ A @ B, selected, T)
    assert max(residuals(B.T @ A @ B, selected, T, svm).values()) <= KKT_TOLERANCE
    q_A = A @ B @ svm.coefficients
    C, _ = constraint_matrix(selected, T)
    A_inv = np.linalg.inv(A)
    reference = minimize(
        lambda q: 0.5 * q @ A_inv @ q,
        1.1 * q_A,
        jac=lambda q: A_inv @ q,
        constraints=[LinearConstraint(C @ B.T, 1.0, np.inf)],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    assert np.linalg.norm(reference.x - q_A) <= 1e-5 * np.linalg.norm(q_A)
    l2 = B @ solve_token_svm(gram, selected, T).coefficients
    assert np.linalg.norm(l2 / np.linalg.norm(l2) - q_A / np.linalg.norm(q_A)) > 1e-2


def test_linearly_dependent_tokens_and_bad_selections_are_refused():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(5, 12))  # d = 5 < n(T-1) = 9
    with pytest.raises(InvalidParameter, match="kernel"):
        solve_token_svm(B.T @ B, np.array([0, 1, 2]), 4)
    with pytest.raises(InvalidParameter, match="selected"):
        constraint_matrix(np.array([0, 4]), 4)
    with pytest.raises(InvalidParameter, match="kernel"):
        solve_token_svm(np.eye(3), np.array([0, 1]), 4)


def test_constraint_rows_are_selected_minus_other_token():
    C, pairs = constraint_matrix(np.array([2, 0]), 3)
    assert pairs.tolist() == [[0, 0], [0, 1], [1, 1], [1, 2]]
    expected = np.array(
        [[-1, 0, 1, 0, 0, 0], [0, -1, 1, 0, 0, 0], [0, 0, 0, 1, -1, 0], [0, 0, 0, 1, 0, -1]]
    )
    np.testing.assert_array_equal(C, expected)
    assert selected_tokens(np.array([[0.1, 3.0, -1.0], [2.0, 1.0, 0.0]])).tolist() == [1, 0]


def test_duality_gap_identity_is_proved():
    assert duality_gap_residual() == 0
    assert all(record.verified() for record in derivations())


def test_reduced_cosines_and_constants_equal_explicit_d_dimensional_ones():
    B, gram, selected, T = random_problem(5, n=4, T=3, extra=30)
    d = B.shape[0]
    rng = np.random.default_rng(2)
    W0 = rng.uniform(-1, 1, size=(d, d)) / math.sqrt(d)
    A = W0.T @ W0
    K, Q = B.T @ A @ B, B.T @ A @ A @ B
    beta = solve_token_svm(gram, selected, T).coefficients
    v = B @ beta
    q = A @ B @ rng.normal(size=B.shape[1]) + B @ rng.normal(size=B.shape[1])
    q += 0.3 * rng.normal(size=d)  # a part outside the tokens' span
    explicit = q @ v / (np.linalg.norm(q) * np.linalg.norm(v))
    assert direction_cosine(B.T @ q, q @ q, beta, gram) == pytest.approx(explicit, abs=1e-12)
    projector = B @ np.linalg.solve(gram, B.T)
    inside = np.linalg.norm(projector @ q) / np.linalg.norm(q)
    assert span_fraction(B.T @ q, q @ q, gram) == pytest.approx(inside, abs=1e-12)
    v_hat = v / np.linalg.norm(v)
    Av = A @ v
    c_init = np.sum((Av - v_hat * (v_hat @ Av)) ** 2) / (v @ Av)
    c_perp = np.sum((Av - projector @ Av) ** 2) / (v @ Av)
    assert misalignment_constant(beta, gram, K, Q) == pytest.approx(c_init, rel=1e-10)
    assert out_of_span_constant(beta, gram, K, Q) == pytest.approx(c_perp, rel=1e-10)
    assert c_init > c_perp > 0
