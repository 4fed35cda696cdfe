"""The simulator's hand-written kernel equals the kernel generated from the SymPy derivation."""

import mpmath
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.model import reference_logit_gradient, reference_sequence_loss
from verify.sim.kernels import MPMATH, logistic_loss, logit_gradient, score_differences

finite = st.floats(-30, 30, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    T=st.integers(2, 8),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    spread=st.floats(0.1, 40.0),
)
def test_float_kernel_equals_generated_sympy_kernel(T, n, seed, spread):
    rng = np.random.default_rng(seed)
    logits = spread * rng.standard_normal((n, T))
    scores = rng.standard_normal((n, T))
    labels = rng.choice([-1.0, 1.0], size=n)
    ours = logit_gradient(logits, scores, score_differences(scores), labels)
    reference = reference_logit_gradient(T, "numpy")
    loss = reference_sequence_loss(T, "numpy")
    for i in range(n):
        expected = np.asarray(reference(logits[i], scores[i], labels[i], n), dtype=float)
        np.testing.assert_allclose(ours.logit_gradient[i], expected, rtol=1e-12, atol=1e-300)
        expected_loss = float(loss(logits[i], scores[i], labels[i], n))
        np.testing.assert_allclose(logistic_loss(ours.margins[i]) / n, expected_loss, rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(T=st.integers(2, 6), seed=st.integers(0, 2**32 - 1), gap=st.floats(0, 400))
def test_mp_kernel_equals_generated_sympy_kernel_at_50_digits(T, seed, gap):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((1, T))
    logits[0, 0] += gap
    scores = rng.standard_normal((1, T))
    with mpmath.workdps(50):
        a, g = MPMATH.asarray(logits), MPMATH.asarray(scores)
        ours = logit_gradient(a, g, score_differences(g), MPMATH.asarray([1.0]), MPMATH)
        reference = reference_logit_gradient(T, "mpmath")(list(a[0]), list(g[0]), mpmath.mpf(1), 1)
        for mine, theirs in zip(ours.logit_gradient[0], reference, strict=True):
            assert abs(mine - theirs) <= mpmath.mpf(10) ** -45 * (abs(theirs) + 10**-400)
