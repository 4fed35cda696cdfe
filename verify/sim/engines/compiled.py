r"""The reduced GD step of many runs, compiled (numba), each run's matrices kept in cache.

Run :math:`r` has its statistics :math:`K_r, \mathrm{Gram}_r` (:math:`N \times N`) and its
state :math:`(a_r, M_r)`; one GD step is

.. math::

    \ell = K a + \mathrm{Gram}\, M^\top K a, \qquad h = \partial L / \partial \ell, \qquad
    a \leftarrow a - \alpha\,(h + M\, \mathrm{Gram}\, h), \qquad
    M \leftarrow M - \alpha\, a h^\top \ \text{(with the old } a\text{)},

and :math:`h` is :func:`verify.sim.kernels.logit_gradient`, in its cancellation-free form
:math:`h_{i,t} = \tfrac1n \ell'(y_i f_i)\, y_i\, s_{i,t} \sum_u s_{i,u} (\gamma_{i,t} -
\gamma_{i,u})`. A run takes all its steps before the next run starts, so its three
matrices (0.6 MB at :math:`N = 160`) stay in the processor's cache; matrix-vector products
read four rows at a time, and the rank-1 updates of :math:`M` wait in groups of four
(products with :math:`M` corrected for them) so that :math:`M` is rewritten once per four
steps. This is where a phase-diagram column spends most of its time: about 33 us a step at
:math:`N = 160` on one core (the NumPy form of the same step took about 120 us).

Sums may be reassociated by the compiler (vectorised), so results agree with the NumPy
formula to rounding rather than bit for bit; they use no BLAS and no threads, so one machine
gives the same numbers on every run, idle or busy. Compiled functions are cached on disk
after their first use in an environment (about 10 s; loading them takes about 1 s a process).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Reassociation and fused multiply-add only: infinities and NaN keep their meaning (a run
#: that stops being finite is still detected).
FASTMATH = {"reassoc", "contract"}


#: Rows of a matrix read together: each entry of the vector is loaded once for four rows
#: (the loops below are written out for four).
BLOCK = 4


@njit(cache=True, fastmath=FASTMATH)
def _times(matrix: np.ndarray, vector: np.ndarray, out: np.ndarray) -> None:
    """``out = matrix @ vector``, four rows at a time."""
    rows, columns = matrix.shape
    full = rows - rows % BLOCK
    for i in range(0, full, BLOCK):
        t0 = t1 = t2 = t3 = 0.0
        for j in range(columns):
            v = vector[j]
            t0 += matrix[i, j] * v
            t1 += matrix[i + 1, j] * v
            t2 += matrix[i + 2, j] * v
            t3 += matrix[i + 3, j] * v
        out[i], out[i + 1], out[i + 2], out[i + 3] = t0, t1, t2, t3
    for i in range(full, rows):
        total = 0.0
        for j in range(columns):
            total += matrix[i, j] * vector[j]
        out[i] = total


@njit(cache=True, fastmath=FASTMATH)
def _transpose_times(matrix: np.ndarray, vector: np.ndarray, out: np.ndarray) -> None:
    """``out = matrix.T @ vector``, reading ``matrix`` by rows, four at a time."""
    rows, columns = matrix.shape
    full = rows - rows % BLOCK
    out[:] = 0.0
    for i in range(0, full, BLOCK):
        w0, w1, w2, w3 = vector[i], vector[i + 1], vector[i + 2], vector[i + 3]
        for j in range(columns):
            out[j] += (
                w0 * matrix[i, j] + w1 * matrix[i + 1, j] + w2 * matrix[i + 2, j]
            ) + w3 * matrix[i + 3, j]
    for i in range(full, rows):
        for j in range(columns):
            out[j] += vector[i] * matrix[i, j]


#: Rank-1 updates of :math:`M` that wait and are applied together (each entry of
#: :math:`M` is then written once per this many steps; :func:`_fold` is written out for
#: four).
WAITING = 4


@njit(cache=True, fastmath=FASTMATH)
def _fold(M: np.ndarray, left: np.ndarray, right: np.ndarray, count: int) -> None:
    """``M -= left[:count].T @ right[:count]``: the ``count`` waiting rank-1 updates (rows
    of ``left`` and ``right``, (WAITING, N)), four at a time in one pass."""
    rows, columns = M.shape
    if count == WAITING:
        l0, l1, l2, l3 = left[0], left[1], left[2], left[3]
        r0, r1, r2, r3 = right[0], right[1], right[2], right[3]
        for i in range(rows):
            c0, c1, c2, c3 = l0[i], l1[i], l2[i], l3[i]
            for j in range(columns):
                M[i, j] -= (c0 * r0[j] + c1 * r1[j]) + (c2 * r2[j] + c3 * r3[j])
        return
    for k in range(count):
        for i in range(rows):
            weight = left[k, i]
            for j in range(columns):
                M[i, j] -= weight * right[k, j]


@njit(cache=True, fastmath=FASTMATH)
def _correct(
    out: np.ndarray, first: np.ndarray, second: np.ndarray, vector: np.ndarray, count: int
) -> None:
    r"""``out -= second[:count].T @ (first[:count] @ vector)``: a product with :math:`M`
    completed by the waiting updates :math:`-\sum_k l_k r_k^\top`."""
    for k in range(count):
        weight = 0.0
        for j in range(vector.size):
            weight += first[k, j] * vector[j]
        for j in range(out.size):
            out[j] -= weight * second[k, j]


@njit(cache=True, fastmath=FASTMATH)
def _log1p_exp(x: float) -> float:
    r""":math:`\log(1 + e^{x})`, overflow-free."""
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit(cache=True, fastmath=FASTMATH)
def logit_gradient_into(
    logits: np.ndarray,
    scores: np.ndarray,
    differences: np.ndarray,
    labels: np.ndarray,
    out: np.ndarray,
) -> None:
    r"""``out`` (n, T) = :func:`verify.sim.kernels.logit_gradient` of ``logits`` (n, T): the
    softmax shifted by its maximum, :math:`\gamma_t - f` from the exact score differences,
    and :math:`\ell'(m) = -e^{-\log(1 + e^{m})}` accurate for every margin :math:`m`."""
    n, T = logits.shape
    s = np.empty(T)
    for i in range(n):
        largest = logits[i, 0]
        for t in range(1, T):
            largest = max(largest, logits[i, t])
        norm = 0.0
        for t in range(T):
            s[t] = math.exp(logits[i, t] - largest)
            norm += s[t]
        output = 0.0
        for t in range(T):
            s[t] /= norm
            output += s[t] * scores[i, t]
        slope = -math.exp(-_log1p_exp(labels[i] * output)) * labels[i] / n
        for t in range(T):
            centred = 0.0
            for u in range(T):
                centred += differences[i, t, u] * s[u]
            out[i, t] = slope * s[t] * centred


@njit(cache=True, fastmath=FASTMATH)
def _all_finite(values: np.ndarray) -> bool:
    for value in values:
        if not math.isfinite(value):
            return False
    return True


@njit(cache=True, fastmath=FASTMATH)
def advance_runs(
    K: np.ndarray,
    gram: np.ndarray,
    a: np.ndarray,
    M: np.ndarray,
    scores: np.ndarray,
    differences: np.ndarray,
    labels: np.ndarray,
    alphas: np.ndarray,
    first_step: int,
    steps: int,
    stopped: np.ndarray,
) -> None:
    """Steps ``first_step`` to ``first_step + steps`` of every run not ``stopped`` (R,), in
    place on ``a`` (R, N) and ``M`` (R, N, N). A run whose training logits stop being
    finite keeps the state it had, and ``stopped[r]`` becomes one more than the step at
    which it stopped (0: running)."""
    runs, N = a.shape
    n, T = scores.shape[1:]
    Ka, x, logits, y, w = np.empty(N), np.empty(N), np.empty(N), np.empty(N), np.empty(N)
    h = np.empty((n, T))
    flat_h = h.reshape(N)
    # M = M[r] - left[:waiting].T @ right[:waiting]: left holds alpha a, right h.
    left, right = np.empty((WAITING, N)), np.empty((WAITING, N))
    for r in range(runs):
        if stopped[r]:
            continue
        waiting = 0
        for step in range(steps):
            _times(K[r], a[r], Ka)
            _transpose_times(M[r], Ka, x)
            _correct(x, left, right, Ka, waiting)
            _times(gram[r], x, logits)
            logits += Ka
            if not _all_finite(logits):
                stopped[r] = first_step + step + 1
                break
            logit_gradient_into(logits.reshape(n, T), scores[r], differences[r], labels[r], h)
            _times(gram[r], flat_h, y)
            _times(M[r], y, w)
            _correct(w, right, left, y, waiting)
            left[waiting] = alphas[r] * a[r]
            right[waiting] = flat_h
            waiting += 1
            if waiting == WAITING:
                _fold(M[r], left, right, waiting)
                waiting = 0
            a[r] -= alphas[r] * (flat_h + w)
        _fold(M[r], left, right, waiting)
