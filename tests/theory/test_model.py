"""Model gradients: symbolic proofs (T = 2..8), finite differences in float64 and in
50-digit mpmath, and the generated reference kernels."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import model
from theory.foundation.proof import residuals_vanish

pytestmark = [
    pytest.mark.filterwarnings("error"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

ALL_T = range(2, 9)


# --------------------------------------------------------------------------- symbolic proofs


@pytest.mark.parametrize("T", ALL_T)
def test_logit_gradient_formula_is_sympy_derivative(T):
    assert residuals_vanish(model.logit_gradient_residuals(T))


@pytest.mark.parametrize("T", ALL_T)
def test_cancellation_free_score_deviation(T):
    assert residuals_vanish(model.score_deviation_residuals(T))


@pytest.mark.parametrize("T", ALL_T)
def test_softmax_shift_invariance(T):
    assert residuals_vanish(model.shifted_softmax_residuals(T))


@pytest.mark.parametrize("T", ALL_T)
def test_chain_rule_gives_WG_and_pGT(T):
    residual_W, residual_p = model.chain_rule_residuals(T, d=2, n=2)
    assert residual_W.is_zero_matrix and residual_p.is_zero_matrix


@pytest.mark.parametrize("T", ALL_T)
def test_stable_kernel_equals_textbook_gradient(T):
    assert residuals_vanish(model.stable_gradient_residuals(T))


def test_stable_loss_and_slope():
    assert residuals_vanish(model.stable_loss_residuals())


def test_end_to_end_gradient_with_true_loss():
    residual_W, residual_p = model.end_to_end_gradient_residuals(T=2, d=2)
    assert residual_W.is_zero_matrix and residual_p.is_zero_matrix


def test_invalid_sizes_are_rejected_with_a_message():
    with pytest.raises(ValueError, match=r"T=1 is invalid: allowed an integer >= 2"):
        model.logit_gradient_residuals(1)
    with pytest.raises(ValueError, match=r"module=.* is invalid: allowed one of"):
        model.reference_logit_gradient(3, module="torch")


# --------------------------------------------------------------------------- numeric model


def _numpy_loss(tokens, labels, W, p, nu):
    logits = tokens @ (W.T @ p)  # (n, T)
    shifted = logits - logits.max(axis=1, keepdims=True)
    probabilities = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    outputs = (probabilities * (tokens @ nu)).sum(axis=1)
    return float(np.mean(np.logaddexp(0.0, -labels * outputs)))


def _numpy_gradients(tokens, labels, W, p, nu):
    n, T, _ = tokens.shape
    kernel = model.reference_logit_gradient(T, module="numpy")
    logits = tokens @ (W.T @ p)
    scores = tokens @ nu
    h = kernel(logits.T, scores.T, labels, n)  # (T, n)
    G = np.einsum("ti,itd->d", h, tokens)
    return np.outer(p, G), W @ G


def _mp_loss(tokens, labels, W, p, nu):
    n, T, d = len(tokens), len(tokens[0]), len(p)
    query = [mpmath.fsum(W[j][k] * p[j] for j in range(d)) for k in range(d)]
    total = mpmath.mpf(0)
    for i in range(n):
        logits = [mpmath.fsum(tokens[i][t][k] * query[k] for k in range(d)) for t in range(T)]
        scores = [mpmath.fsum(tokens[i][t][k] * nu[k] for k in range(d)) for t in range(T)]
        weights = [mpmath.exp(a) for a in logits]
        output = mpmath.fsum(w * g for w, g in zip(weights, scores, strict=True)) / mpmath.fsum(
            weights
        )
        total += mpmath.log(1 + mpmath.exp(-labels[i] * output))
    return total / n


def _mp_gradients(tokens, labels, W, p, nu):
    n, T, d = len(tokens), len(tokens[0]), len(p)
    kernel = model.reference_logit_gradient(T, module="mpmath")
    query = [mpmath.fsum(W[j][k] * p[j] for j in range(d)) for k in range(d)]
    G = [mpmath.mpf(0)] * d
    for i in range(n):
        logits = [mpmath.fsum(tokens[i][t][k] * query[k] for k in range(d)) for t in range(T)]
        scores = [mpmath.fsum(tokens[i][t][k] * nu[k] for k in range(d)) for t in range(T)]
        h = kernel(logits, scores, labels[i], n)
        for t in range(T):
            for k in range(d):
                G[k] += h[t] * tokens[i][t][k]
    grad_W = [[p[j] * G[k] for k in range(d)] for j in range(d)]
    grad_p = [mpmath.fsum(W[j][k] * G[k] for k in range(d)) for j in range(d)]
    return grad_W, grad_p


@st.composite
def configurations(draw):
    """Random small configurations: n = 2, d = 3, T in 2..5, labels +-1."""
    T = draw(st.integers(2, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    query_scale = draw(st.floats(0.1, 3.0))
    rng = np.random.default_rng(seed)
    n, d = 2, 3
    tokens = rng.normal(size=(n, T, d))
    W = rng.normal(size=(d, d)) / np.sqrt(d)
    p = query_scale * rng.normal(size=d)
    nu = rng.normal(size=d)
    labels = rng.choice([-1.0, 1.0], size=n)
    return tokens, labels, W, p, nu


@settings(max_examples=25, deadline=None)
@given(configurations())
def test_gradients_match_float64_central_differences(configuration):
    tokens, labels, W, p, nu = configuration
    grad_W, grad_p = _numpy_gradients(tokens, labels, W, p, nu)
    step = 1e-6
    fd_W = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        plus, minus = W.copy(), W.copy()
        plus[index] += step
        minus[index] -= step
        fd_W[index] = (
            _numpy_loss(tokens, labels, plus, p, nu) - _numpy_loss(tokens, labels, minus, p, nu)
        ) / (2 * step)
    fd_p = np.zeros_like(p)
    for j in range(p.size):
        plus, minus = p.copy(), p.copy()
        plus[j] += step
        minus[j] -= step
        fd_p[j] = (
            _numpy_loss(tokens, labels, W, plus, nu) - _numpy_loss(tokens, labels, W, minus, nu)
        ) / (2 * step)
    analytic = np.concatenate([grad_W.ravel(), grad_p])
    numeric = np.concatenate([fd_W.ravel(), fd_p])
    scale = np.max(np.abs(analytic))
    assert np.max(np.abs(analytic - numeric)) <= 1e-6 * scale + 1e-9


@settings(max_examples=6, deadline=None)
@given(configurations())
def test_gradients_match_mpmath_central_differences_at_50_digits(configuration):
    tokens_f, labels_f, W_f, p_f, nu_f = configuration
    with mpmath.workdps(50):
        tokens = [[[mpmath.mpf(v) for v in row] for row in sample] for sample in tokens_f]
        labels = [mpmath.mpf(v) for v in labels_f]
        W = [[mpmath.mpf(v) for v in row] for row in W_f]
        p = [mpmath.mpf(v) for v in p_f]
        nu = [mpmath.mpf(v) for v in nu_f]
        grad_W, grad_p = _mp_gradients(tokens, labels, W, p, nu)
        step = mpmath.mpf("1e-20")
        errors, magnitudes = [], []
        d = len(p)
        for j in range(d):
            for k in range(d):
                plus = [row[:] for row in W]
                minus = [row[:] for row in W]
                plus[j][k] += step
                minus[j][k] -= step
                fd = (
                    _mp_loss(tokens, labels, plus, p, nu) - _mp_loss(tokens, labels, minus, p, nu)
                ) / (2 * step)
                errors.append(abs(fd - grad_W[j][k]))
                magnitudes.append(abs(grad_W[j][k]))
            plus, minus = p[:], p[:]
            plus[j] += step
            minus[j] -= step
            fd = (
                _mp_loss(tokens, labels, W, plus, nu) - _mp_loss(tokens, labels, W, minus, nu)
            ) / (2 * step)
            errors.append(abs(fd - grad_p[j]))
            magnitudes.append(abs(grad_p[j]))
        assert max(errors) <= mpmath.mpf("1e-15") * max(magnitudes)


# --------------------------------------------------------------------------- reference kernels


@settings(max_examples=30, deadline=None)
@given(
    T=st.integers(2, 8),
    seed=st.integers(0, 2**32 - 1),
    logit_scale=st.floats(0.0, 5.0),
    label=st.sampled_from([-1.0, 1.0]),
)
def test_numpy_and_mpmath_kernels_agree(T, seed, logit_scale, label):
    rng = np.random.default_rng(seed)
    logits = logit_scale * rng.normal(size=T)
    scores = rng.normal(size=T)
    numpy_values = model.reference_logit_gradient(T, "numpy")(logits, scores, label, 3)
    naive_values = model.reference_logit_gradient(T, "numpy", form="naive")(
        logits, scores, label, 3
    )
    with mpmath.workdps(40):
        exact = model.reference_logit_gradient(T, "mpmath")(
            [mpmath.mpf(v) for v in logits], [mpmath.mpf(v) for v in scores], label, 3
        )
        exact = np.array([float(v) for v in exact])
        loss_exact = float(
            model.reference_sequence_loss(T, "mpmath", form="naive")(
                [mpmath.mpf(v) for v in logits], [mpmath.mpf(v) for v in scores], label, 3
            )
        )
    scale = np.max(np.abs(exact))
    assert np.max(np.abs(numpy_values - exact)) <= 1e-13 * scale + 1e-300
    # The textbook form cancels in gamma_t - f: its error is about e^{spread} ulps of the
    # scores (times the prefactor 1/n), not of h.
    spread = float(logits.max() - logits.min())
    naive_floor = 1e-14 * np.exp(spread) * (scale + np.max(np.abs(scores)) / 3)
    assert np.max(np.abs(naive_values - exact)) <= naive_floor
    loss = model.reference_sequence_loss(T, "numpy")(logits, scores, label, 3)
    assert abs(loss - loss_exact) <= 1e-14 * abs(loss_exact)


def test_kernel_broadcasts_over_a_batch_axis():
    rng = np.random.default_rng(0)
    logits, scores = rng.normal(size=(4, 7)), rng.normal(size=(4, 7))
    labels = rng.choice([-1.0, 1.0], size=7)
    kernel = model.reference_logit_gradient(4)
    batched = kernel(logits, scores, labels, 7)
    assert batched.shape == (4, 7)
    for i in range(7):
        np.testing.assert_allclose(
            batched[:, i], kernel(logits[:, i], scores[:, i], labels[i], 7), rtol=1e-15
        )


@settings(max_examples=25, deadline=None)
@given(
    gap=st.floats(0.0, 700.0),
    seed=st.integers(0, 2**32 - 1),
    label=st.sampled_from([-1.0, 1.0]),
)
def test_cancellation_free_kernel_keeps_relative_accuracy_at_large_gaps(gap, seed, label):
    """Token 1 leads the other 7 by ``gap`` and has the largest score (no inherent
    cancellation): the stable float kernel's selected-token update stays at 1e-13
    relative to 60-digit mpmath, at any gap."""
    T = 8
    rng = np.random.default_rng(seed)
    logits = np.concatenate([[gap], rng.normal(scale=0.1, size=T - 1)])
    others = rng.normal(size=T - 1)
    scores = np.concatenate([[others.max() + rng.uniform(0.1, 1.0)], others])
    stable = model.reference_logit_gradient(T)(logits, scores, label, 20)
    with mpmath.workdps(60):
        exact = model.reference_logit_gradient(T, "mpmath")(
            [mpmath.mpf(v) for v in logits], [mpmath.mpf(v) for v in scores], label, 20
        )
        exact_selected = exact[0]
        relative = abs((mpmath.mpf(stable[0]) - exact_selected) / exact_selected)
    assert float(relative) <= 1e-13


def test_naive_kernel_fails_where_predicted():
    """The textbook form loses the selected token's update near gap 40 in float64."""
    T = 8
    logits = np.array([40.0] + [0.0] * (T - 1))
    scores = np.array([1.0, 0.5, -0.5, 0.2, -0.2, 0.1, -0.1, 0.0])
    naive = model.reference_logit_gradient(T, form="naive")(logits, scores, 1.0, 20)
    stable = model.reference_logit_gradient(T)(logits, scores, 1.0, 20)
    with mpmath.workdps(60):
        exact = model.reference_logit_gradient(T, "mpmath")(
            [mpmath.mpf(v) for v in logits], [mpmath.mpf(v) for v in scores], 1.0, 20
        )
        exact_selected = float(exact[0])
    assert abs(stable[0] - exact_selected) <= 1e-14 * abs(exact_selected)
    assert abs(naive[0] - exact_selected) >= 0.1 * abs(exact_selected)


def test_stable_loss_kernel_has_no_overflow_at_huge_margins():
    kernel = model.reference_sequence_loss(2)
    values = kernel(np.array([0.0, 0.0]), np.array([1e5, 1e5]), -1.0, 1)
    assert np.isclose(values, 1e5)
    tiny = kernel(np.array([0.0, 0.0]), np.array([800.0, 800.0]), 1.0, 1)
    assert 0.0 <= tiny < 1e-300
