"""The variants' kernels against their SymPy forms, high-precision differences of the loss, the
dense computation, and (at the base values) the base kernel bit for bit."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

from theory.foundation.codegen import lambdify_expression
from theory.foundation.losses import LOSSES, loss_expression
from theory.variants import kernels
from theory.variants.gradients import gelu, gelu_prime
from verify.sim import kernels as base

RNG = np.random.default_rng(2024)


def draw(n: int = 5, T: int = 4, runs: tuple[int, ...] = ()) -> tuple[np.ndarray, ...]:
    logits = RNG.normal(0, 2, (*runs, n, T))
    scores = RNG.normal(0, 0.8, (*runs, n, T))
    labels = RNG.choice([-1.0, 1.0], (*runs, n))
    return logits, scores, base.score_differences(scores), labels


def test_logistic_kernel_is_the_base_kernel_bit_for_bit():
    for runs in ((), (3,)):
        logits, scores, differences, labels = draw(runs=runs)
        mine = kernels.logit_gradient(logits, scores, differences, labels)
        theirs = base.logit_gradient(logits, scores, differences, labels)
        for name in ("probabilities", "outputs", "margins", "logit_gradient"):
            assert getattr(mine, name).tobytes() == getattr(theirs, name).tobytes(), name
        other = kernels.logit_gradient(logits, scores, differences, labels, "exponential")
        assert not np.array_equal(other.logit_gradient, theirs.logit_gradient)
    mp = kernels.mpmath_arithmetic()
    logits, scores, differences, labels = (mp.asarray(a) for a in draw(n=2, T=3))
    with mpmath.workdps(40):
        mine = kernels.logit_gradient(logits, scores, differences, labels, arithmetic=mp)
        theirs = base.logit_gradient(logits, scores, differences, labels, base.MPMATH)
    pairs = zip(mine.logit_gradient.flat, theirs.logit_gradient.flat, strict=True)
    assert all(a == b for a, b in pairs)


def _sympy_logit_gradient(T: int, loss: str):
    """h_t = d/da_t [l(y f)/n], differentiated by SymPy from the loss itself."""
    a = sp.symbols(f"a_1:{T + 1}", real=True)
    g = sp.symbols(f"g_1:{T + 1}", real=True)
    y, n = sp.Symbol("y", real=True), sp.Symbol("n", positive=True)
    partition = sum(sp.exp(v) for v in a)
    f = sum(sp.exp(v) * w for v, w in zip(a, g, strict=True)) / partition
    h = [sp.diff(loss_expression(y * f, loss) / n, v) for v in a]
    return lambdify_expression([a, g, y, n], h, "mpmath")


@pytest.mark.parametrize("loss", LOSSES)
def test_logit_gradient_equals_the_sympy_form_for_every_loss(loss):
    T, n = 4, 3
    reference = _sympy_logit_gradient(T, loss)
    logits, scores, differences, labels = draw(n=n, T=T)
    logits[0] = [30.0, -8.0, 0.5, 2.0]  # a saturated sample: the small entries keep accuracy
    output = kernels.logit_gradient(logits, scores, differences, labels, loss)
    mp = kernels.mpmath_arithmetic()
    with mpmath.workdps(50):
        exact = np.array(
            [
                [
                    float(v)
                    for v in reference(
                        list(map(mpmath.mpf, logits[i])),
                        list(map(mpmath.mpf, scores[i])),
                        labels[i],
                        n,
                    )
                ]
                for i in range(n)
            ]
        )
        arrays = (mp.asarray(x) for x in (logits, scores, differences, labels))
        high = kernels.logit_gradient(*arrays, loss, mp)
    np.testing.assert_allclose(output.logit_gradient, exact, rtol=1e-12, atol=0)
    np.testing.assert_allclose(high.logit_gradient.astype(float), exact, rtol=1e-15, atol=0)
    other = LOSSES[(LOSSES.index(loss) + 1) % len(LOSSES)]  # another loss's numbers differ
    wrong = kernels.logit_gradient(logits, scores, differences, labels, other)
    assert not np.allclose(wrong.logit_gradient, exact, rtol=1e-3)
    naive = base.naive_logit_gradient(logits, scores, labels)
    if loss == "logistic":
        assert abs(naive[0, 0] / exact[0, 0] - 1) > 1e-9  # the selected entry cancels


def _mp_ffn_loss(logits, projections, labels, biases, out, loss):
    """The FFN readout's loss (1/n) sum_i l(y_i f_i) in mpmath, from its definition."""
    total = 0
    n = len(labels)
    for i in range(n):
        top = max(logits[i])
        weights = [mpmath.exp(v - top) for v in logits[i]]
        s = [w / sum(weights) for w in weights]
        hidden = [
            sum(s[t] * projections[i][t][k] for t in range(len(s))) + biases[k]
            for k in range(len(biases))
        ]
        f = sum(
            out[k] * hidden[k] * (1 + mpmath.erf(hidden[k] / mpmath.sqrt(2))) / 2
            for k in range(len(out))
        )
        margin = labels[i] * f
        total += {
            "logistic": mpmath.log1p(mpmath.exp(-margin)),
            "exponential": mpmath.exp(-margin),
            "squared": (1 - margin) ** 2 / 2,
        }[loss]
    return total / n


@pytest.mark.parametrize("loss", LOSSES)
def test_ffn_gradient_equals_central_differences_of_the_loss(loss):
    n, T, m = 2, 3, 4
    logits = RNG.normal(0, 1.5, (n, T))
    projections = RNG.normal(0, 1, (n, T, m))
    labels = np.array([1.0, -1.0])
    biases, out = RNG.uniform(0.5, 1.5, m), RNG.normal(0, 0.5, m)
    output = kernels.ffn_logit_gradient(logits, projections, labels, biases, out, loss)
    mp = kernels.mpmath_arithmetic()
    with mpmath.workdps(60):
        args = [
            [[mpmath.mpf(v) for v in row] for row in logits],
            [[[mpmath.mpf(v) for v in tok] for tok in seq] for seq in projections],
            [mpmath.mpf(v) for v in labels],
            [mpmath.mpf(v) for v in biases],
            [mpmath.mpf(v) for v in out],
        ]
        step = mpmath.mpf(10) ** -25
        differences = np.empty((n, T))
        for i in range(n):
            for t in range(T):
                shifted = [[list(row) for row in args[0]] for _ in range(2)]
                shifted[0][i][t] += step
                shifted[1][i][t] -= step
                up = _mp_ffn_loss(shifted[0], *args[1:], loss)
                down = _mp_ffn_loss(shifted[1], *args[1:], loss)
                differences[i, t] = float((up - down) / (2 * step))
        high = kernels.ffn_logit_gradient(
            mp.asarray(logits),
            mp.asarray(projections),
            mp.asarray(labels),
            mp.asarray(biases),
            mp.asarray(out),
            loss,
            mp,
        )
    np.testing.assert_allclose(output.logit_gradient, differences, rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(high.logit_gradient.astype(float), differences, rtol=1e-15)
    wrong = kernels.ffn_logit_gradient(logits, projections, labels, biases, -out, loss)
    assert not np.allclose(wrong.logit_gradient, differences)


def test_gelu_and_its_slope_match_sympy_in_both_arithmetics():
    x = sp.Symbol("x", real=True)
    points = np.array([-3.0, -1.4142, -0.75, 0.0, 0.3, 1.4142, 4.0])
    exact = [sp.Float(v, 40) for v in points]
    reference = [
        (float(gelu(x).subs(x, v).evalf(40)), float(gelu_prime(x).subs(x, v).evalf(40)))
        for v in exact
    ]
    np.testing.assert_allclose(
        kernels.FLOAT64.gelu(points), [r[0] for r in reference], rtol=1e-14, atol=1e-300
    )
    np.testing.assert_allclose(
        kernels.FLOAT64.gelu_prime(points), [r[1] for r in reference], rtol=1e-14, atol=1e-16
    )  # near GELU's minimum (x = -0.75) Phi + x phi cancels: absolute accuracy there
    mp = kernels.mpmath_arithmetic()
    with mpmath.workdps(30):
        values = mp.gelu_prime(mp.asarray(points))
    np.testing.assert_allclose(values.astype(float), [r[1] for r in reference], rtol=1e-15)


def test_trained_head_span_step_equals_the_dense_step():
    n, T, d, alpha = 3, 4, 7, 0.3
    tokens = RNG.normal(0, 1, (n, T, d))
    labels = np.array([1.0, -1.0, 1.0])
    nu0 = RNG.normal(0, 0.3, d)
    B = tokens.reshape(-1, d).T  # columns x_{i,t}
    gram = B.T @ B
    c = RNG.normal(0, 0.05, n * T)
    nu = nu0 + B @ c
    scores = kernels.trained_head_scores(tokens @ nu0, gram, c)
    np.testing.assert_allclose(scores, tokens @ nu, rtol=1e-12)
    logits = RNG.normal(0, 1, (n, T))
    out = kernels.logit_gradient(logits, scores, base.score_differences(scores), labels)
    g = kernels.score_gradient(out)
    dense = np.einsum("it,itd->d", g, tokens)  # grad_nu L = sum g x

    # the dense gradient by central differences of the loss in nu
    def loss(head):
        s = np.exp(logits - logits.max(1, keepdims=True))
        f = ((s / s.sum(1, keepdims=True)) * (tokens @ head)).sum(1)
        return np.mean(np.logaddexp(0, -labels * f))

    step = 1e-6
    numeric = [(loss(nu + step * e) - loss(nu - step * e)) / (2 * step) for e in np.eye(d)]
    np.testing.assert_allclose(dense, numeric, rtol=1e-6, atol=1e-10)
    stepped = kernels.trained_head_scores(tokens @ nu0, gram, c - alpha * g.ravel())
    np.testing.assert_allclose(stepped, tokens @ (nu - alpha * dense), rtol=1e-12)
    base_scores = tokens @ nu0  # at c = 0 the scores are the fixed head's, bit for bit
    same = kernels.trained_head_scores(base_scores, gram, np.zeros(n * T))
    assert same.tobytes() == base_scores.tobytes()
    assert not np.allclose(kernels.trained_head_scores(base_scores, gram, g.ravel()), stepped)


def test_one_step_update_is_a_gradient_step_on_the_head_loss():
    m, d, alpha = 6, 5, 0.7
    means, labels = RNG.normal(0, 1, (m, d)), np.array([1.0, -1.0] * 3)
    nu0 = RNG.normal(0, 0.4, d)
    for loss in LOSSES:
        nu1 = kernels.one_step_update(nu0, means, labels, alpha, loss)
        z = sp.Symbol("z")
        slope = sp.lambdify(z, sp.diff(loss_expression(z, loss), z))
        gradient = (
            sum(slope(labels[j] * means[j] @ nu0) * labels[j] * means[j] for j in range(m)) / m
        )
        np.testing.assert_allclose(nu1, nu0 - alpha * gradient, rtol=1e-13, atol=1e-15)
    assert not np.allclose(kernels.one_step_update(nu0, means, -labels, alpha), nu1)


def test_reduced_gradient_norms_equal_the_dense_norms():
    d, n, T = 9, 3, 2
    N = n * T
    W0, B = RNG.normal(0, 0.3, (d, d)), RNG.normal(0, 1, (d, N))
    M, a, h = RNG.normal(0, 0.2, (N, N)), RNG.normal(0, 1, N), RNG.normal(0, 1, (n, T))
    V = W0 @ B
    p, W = V @ a, W0 + V @ M @ B.T
    K, gram = V.T @ V, B.T @ B
    noisy = np.array([True, False, False])
    dense = []
    for mask in (noisy, ~noisy):
        part = np.where(mask[:, None], h, 0.0).ravel()
        G = B @ part
        weight_sq, query_sq = kernels.subset_gradient_norms(K, gram, a, M, part)
        np.testing.assert_allclose(weight_sq, np.sum(np.outer(p, G) ** 2), rtol=1e-12)
        np.testing.assert_allclose(query_sq, np.sum((W @ G) ** 2), rtol=1e-12)
        dense.append(np.sum(np.outer(p, G) ** 2) + np.sum((W @ G) ** 2))
    ratio = kernels.noisy_gradient_ratio(K, gram, a, M, h, noisy)
    np.testing.assert_allclose(ratio, np.sqrt(dense[0] / dense[1]), rtol=1e-12)
    swapped = kernels.noisy_gradient_ratio(K, gram, a, M, h, ~noisy)
    np.testing.assert_allclose(swapped * ratio, 1.0, rtol=1e-12)
    assert abs(ratio - 1) > 1e-3
    stacked = kernels.noisy_gradient_ratio(
        np.stack([K, K]),
        np.stack([gram, gram]),
        np.stack([a, 2 * a]),
        np.stack([M, M]),
        np.stack([h, h]),
        noisy,
    )
    assert stacked[0] == pytest.approx(ratio, rel=1e-13) and stacked[1] != pytest.approx(ratio)
