"""The compiled GD step: its logit gradient is the NumPy kernel's, its runs stop alone."""

from __future__ import annotations

import numpy as np
import pytest

from verify.sim.engines.compiled import logit_gradient_into
from verify.sim.engines.independent import IndependentGD
from verify.sim.kernels import logit_gradient, score_differences
from verify.sim.statistics import Statistics


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 400.0])
def test_compiled_logit_gradient_equals_the_numpy_kernel(scale):
    """Every entry to a relative 1e-12 (its scale: the row's largest entry), from near-uniform
    attention to gaps of hundreds, where the naive form has lost every digit."""
    rng = np.random.default_rng(7)
    n, T = 20, 8
    logits = scale * rng.standard_normal((n, T))
    scores = rng.standard_normal((n, T))
    labels = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    differences = score_differences(scores)
    expected = logit_gradient(logits, scores, differences, labels).logit_gradient
    out = np.empty((n, T))
    logit_gradient_into(logits, scores, differences, labels, out)
    row_scale = np.abs(expected).max(axis=1, keepdims=True)
    assert np.all(np.abs(out - expected) <= 1e-12 * row_scale + 1e-300)
    wrong = np.empty((n, T))
    logit_gradient_into(logits, scores, differences, -labels, wrong)
    assert not np.all(np.abs(wrong - expected) <= 1e-12 * row_scale + 1e-300)


def _statistics(N: int, seed: int) -> Statistics:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((3 * N, N))
    W0 = rng.standard_normal((3 * N, 3 * N)) / np.sqrt(3 * N)
    A = W0.T @ W0
    return Statistics(
        K=B.T @ A @ B,
        gram=B.T @ B,
        Q=B.T @ A @ A @ B,
        signal_AB=(A @ B)[:2],
        signal_B=B[:2],
        invariant_scale=1.0,
    )


def test_a_run_that_stops_being_finite_stops_alone():
    """Two runs, one with a step size that overflows: it is reported with its step and keeps
    its last finite state; the other runs on and equals the same run trained alone with the
    same log points (waiting updates of M are applied at each log point, so other log points
    change the last bits)."""
    n, T = 4, 3
    statistics = [_statistics(n * T, seed) for seed in (1, 2)]
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((2, n, T))
    labels = np.ones((2, n))
    runs = IndependentGD(statistics, scores, labels, np.array([1e120, 0.05]))
    stopped = runs.advance_to(50)
    assert list(stopped) == [0] and "non-finite training logits at step" in stopped[0]
    assert np.all(np.isfinite(runs.a)) and np.all(np.isfinite(runs.M))
    assert runs.advance_to(60) == {}  # reported once
    alone = IndependentGD(statistics[1:], scores[1:], labels[1:], np.array([0.05]))
    alone.advance_to(50)
    alone.advance_to(60)
    np.testing.assert_array_equal(runs.a[1], alone.a[0])
    np.testing.assert_array_equal(runs.M[1], alone.M[0])
