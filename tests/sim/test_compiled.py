"""The compiled GD step: its logit gradient is the NumPy kernel's, its runs stop alone."""

from __future__ import annotations

import numpy as np
import pytest

from verify.sim.engines.compiled import logit_gradient_into
from verify.sim.engines.independent import IndependentGD, SharedMatrices
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


def _shared(N: int, runs: int, seed: int):
    """Runs whose matrices are a common part plus rank-4 terms, as their Statistics and as
    SharedMatrices."""
    rng = np.random.default_rng(seed)
    base = _statistics(N, seed)
    K_factors = rng.standard_normal((runs, 4, N))
    gram_factors = rng.standard_normal((runs, 4, N))
    K_cores, gram_cores = np.empty((runs, 4, 4)), np.empty((runs, 4, 4))
    statistics = []
    for r in range(runs):
        C, D = rng.standard_normal((2, 4, 4))
        K_cores[r], gram_cores[r] = C @ C.T, D @ D.T
        U, V = K_factors[r].T, gram_factors[r].T
        statistics.append(
            Statistics(
                K=base.K + U @ K_cores[r] @ U.T,
                gram=base.gram + V @ gram_cores[r] @ V.T,
                Q=base.Q,
                signal_AB=base.signal_AB,
                signal_B=base.signal_B,
                invariant_scale=1.0,
            )
        )
    shared = SharedMatrices(base.K, base.gram, K_factors, K_cores, gram_factors, gram_cores)
    return statistics, shared


def test_runs_on_shared_matrices_equal_runs_on_their_own():
    """Five runs (two pairs and one alone) whose K and Gram share a common part step two at
    a time on it: the same state as each run on its own full matrices, to 1e-12 of its scale,
    over log points that split the waiting rank-1 updates; the run whose step size overflows
    stops at the same step in both with its last finite state. Other low-rank terms give
    another state (the comparison tells kernels apart)."""
    n, T, runs = 5, 4, 5
    statistics, shared = _shared(n * T, runs, 11)
    rng = np.random.default_rng(4)
    scores = rng.standard_normal((runs, n, T))
    labels = np.where(rng.random((runs, n)) < 0.5, -1.0, 1.0)
    alphas = np.array([1e-3, 2e-3, 1e120, 5e-4, 1e-3])
    alone = IndependentGD(statistics, scores, labels, alphas)
    paired = IndependentGD(statistics, scores, labels, alphas, shared)
    for step in (3, 10, 41):
        assert alone.advance_to(step).keys() == paired.advance_to(step).keys()
        np.testing.assert_array_equal(alone.stopped, paired.stopped)
        for run in range(runs):  # each run to its own scale
            a, M = alone.a[run], alone.M[run]
            assert np.abs(paired.a[run] - a).max() <= 1e-12 * np.abs(a).max()
            assert np.abs(paired.M[run] - M).max() <= 1e-12 * np.abs(M).max()
    assert alone.stopped[2] > 0 and np.all(alone.stopped[[0, 1, 3, 4]] == 0)
    assert np.all(np.isfinite(paired.a)) and np.all(np.isfinite(paired.M))
    other = SharedMatrices(
        shared.K0,
        shared.gram0,
        shared.K_factors,
        shared.K_cores[::-1].copy(),
        shared.gram_factors,
        shared.gram_cores,
    )
    wrong = IndependentGD(statistics, scores, labels, alphas, other)
    wrong.advance_to(41)
    assert np.abs(wrong.a[0] - alone.a[0]).max() > 1e-6 * np.abs(alone.a[0]).max()
