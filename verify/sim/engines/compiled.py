r"""The reduced GD step of many runs, compiled (numba), each run's matrices kept in cache.

Run :math:`r` has its statistics :math:`K_r, \mathrm{Gram}_r` (:math:`N \times N`) and its
state :math:`(a_r, M_r)`; one GD step is

.. math::

    \ell = K a + \mathrm{Gram}\, M^\top K a, \qquad h = \partial L / \partial \ell, \qquad
    a \leftarrow a - \alpha\,(h + M\, \mathrm{Gram}\, h), \qquad
    M \leftarrow M - \alpha\, a h^\top \ \text{(with the old } a\text{)},

and :math:`h` is :func:`verify.sim.kernels.logit_gradient`, in its cancellation-free form
:math:`h_{i,t} = \tfrac1n \ell'(y_i f_i)\, y_i\, s_{i,t} \sum_u s_{i,u} (\gamma_{i,t} -
\gamma_{i,u})`. A step is five products of an :math:`N \times N` matrix with a vector and
a rank-1 update of :math:`M`.

:func:`advance_runs` takes runs with their own matrices: a run takes all its steps before
the next run starts, so its three matrices (0.6 MB at :math:`N = 160`) stay in the
processor's cache; matrix-vector products read four rows at a time, and the rank-1 updates
of :math:`M` wait in groups of four (products with :math:`M` corrected for them) so that
:math:`M` is rewritten once per four steps, in the pass of the next product with
:math:`M^\top`.

:func:`advance_shared_runs` takes runs whose matrices share a common part,
:math:`K_r = K_0 + U_r C_r U_r^\top` and :math:`\mathrm{Gram}_r = G_0 + V_r D_r V_r^\top`
with factors of a few columns (runs on the same draws that differ in their signal: see
:func:`verify.sim.batch.simulate_group`). Two runs step together: each read of
:math:`K_0` or :math:`G_0` serves both runs' products (three of the five products of a
step), the factors add their part in :math:`O(N)`, and the pair's matrices (0.8 MB) stay
in cache.

Sums may be reassociated by the compiler (vectorised), so results agree with the NumPy
formula to rounding rather than bit for bit; they use no BLAS and no threads, so one machine
gives the same numbers on every run, idle or busy. Compiled functions are cached on disk
after their first use in an environment.
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
def _fold_transpose_times(
    M: np.ndarray, left: np.ndarray, right: np.ndarray, vector: np.ndarray, out: np.ndarray
) -> None:
    """:func:`_fold` of :data:`WAITING` updates and ``out = M.T @ vector`` of the folded
    ``M`` in one pass over ``M`` (four rows at a time; the same sums as the two apart)."""
    rows, columns = M.shape
    full = rows - rows % BLOCK
    out[:] = 0.0
    r0, r1, r2, r3 = right[0], right[1], right[2], right[3]
    # (this bound, not range(0, full, BLOCK), keeps the loop vectorised here)
    for i in range(0, rows - BLOCK + 1, BLOCK):
        a0, a1, a2, a3 = left[0, i], left[1, i], left[2, i], left[3, i]
        b0, b1, b2, b3 = left[0, i + 1], left[1, i + 1], left[2, i + 1], left[3, i + 1]
        c0, c1, c2, c3 = left[0, i + 2], left[1, i + 2], left[2, i + 2], left[3, i + 2]
        e0, e1, e2, e3 = left[0, i + 3], left[1, i + 3], left[2, i + 3], left[3, i + 3]
        w0, w1, w2, w3 = vector[i], vector[i + 1], vector[i + 2], vector[i + 3]
        for j in range(columns):
            p, q, s, t = r0[j], r1[j], r2[j], r3[j]
            m0 = M[i, j] - ((a0 * p + a1 * q) + (a2 * s + a3 * t))
            m1 = M[i + 1, j] - ((b0 * p + b1 * q) + (b2 * s + b3 * t))
            m2 = M[i + 2, j] - ((c0 * p + c1 * q) + (c2 * s + c3 * t))
            m3 = M[i + 3, j] - ((e0 * p + e1 * q) + (e2 * s + e3 * t))
            M[i, j], M[i + 1, j], M[i + 2, j], M[i + 3, j] = m0, m1, m2, m3
            out[j] += (w0 * m0 + w1 * m1 + w2 * m2) + w3 * m3
    for i in range(full, rows):
        for j in range(columns):
            M[i, j] -= (left[0, i] * r0[j] + left[1, i] * r1[j]) + (
                left[2, i] * r2[j] + left[3, i] * r3[j]
            )
            out[j] += vector[i] * M[i, j]


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
    _logit_gradient(logits, scores, differences, labels, out, np.empty((n, T)), np.empty(n))


@njit(cache=True, fastmath=FASTMATH)
def _logit_gradient(
    logits: np.ndarray,
    scores: np.ndarray,
    differences: np.ndarray,
    labels: np.ndarray,
    out: np.ndarray,
    s: np.ndarray,
    slope: np.ndarray,
) -> None:
    """:func:`logit_gradient_into` with its work arrays given (``s`` (n, T), ``slope``
    (n,)): each stage a loop over every sample, the exponentials in one loop."""
    n, T = logits.shape
    for i in range(n):
        largest = logits[i, 0]
        for t in range(1, T):
            largest = max(largest, logits[i, t])
        for t in range(T):
            s[i, t] = logits[i, t] - largest
    for i in range(n):
        for t in range(T):
            s[i, t] = math.exp(s[i, t])
    for i in range(n):
        norm = 0.0
        for t in range(T):
            norm += s[i, t]
        output = 0.0
        for t in range(T):
            s[i, t] /= norm
            output += s[i, t] * scores[i, t]
        slope[i] = -math.exp(-_log1p_exp(labels[i] * output)) * labels[i] / n
    for i in range(n):
        for t in range(T):
            centred = 0.0
            for u in range(T):
                centred += differences[i, t, u] * s[i, u]
            out[i, t] = slope[i] * s[i, t] * centred


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
    h, s, slope = np.empty((n, T)), np.empty((n, T)), np.empty(n)
    flat_h = h.reshape(N)
    # M = M[r] - left[:waiting].T @ right[:waiting]: left holds alpha a, right h.
    left, right = np.empty((WAITING, N)), np.empty((WAITING, N))
    for r in range(runs):
        if stopped[r]:
            continue
        waiting = 0
        for step in range(steps):
            _times(K[r], a[r], Ka)
            if waiting == WAITING:
                _fold_transpose_times(M[r], left, right, Ka, x)
                waiting = 0
            else:
                _transpose_times(M[r], Ka, x)
                _correct(x, left, right, Ka, waiting)
            _times(gram[r], x, logits)
            logits += Ka
            if not _all_finite(logits):
                stopped[r] = first_step + step + 1
                break
            _logit_gradient(logits.reshape(n, T), scores[r], differences[r], labels[r], h, s, slope)
            _times(gram[r], flat_h, y)
            _times(M[r], y, w)
            _correct(w, right, left, y, waiting)
            left[waiting] = alphas[r] * a[r]
            right[waiting] = flat_h
            waiting += 1
            a[r] -= alphas[r] * (flat_h + w)
        _fold(M[r], left, right, waiting)


#: Runs of :func:`advance_shared_runs` stepped together (:func:`_times_pair` is written out
#: for two).
TOGETHER = 2


@njit(cache=True, fastmath=FASTMATH)
def _times_pair(matrix: np.ndarray, vectors: np.ndarray, out: np.ndarray) -> None:
    """``out[g] = matrix @ vectors[g]`` for the two rows ``g`` of ``vectors`` and ``out``
    ((2, N)), four rows of ``matrix`` at a time (each entry read once for both)."""
    rows, columns = matrix.shape
    v0, v1 = vectors[0], vectors[1]
    full = rows - rows % BLOCK
    for i in range(0, full, BLOCK):
        a0 = a1 = b0 = b1 = c0 = c1 = e0 = e1 = 0.0
        for j in range(columns):
            x, y = v0[j], v1[j]
            m = matrix[i, j]
            a0 += m * x
            a1 += m * y
            m = matrix[i + 1, j]
            b0 += m * x
            b1 += m * y
            m = matrix[i + 2, j]
            c0 += m * x
            c1 += m * y
            m = matrix[i + 3, j]
            e0 += m * x
            e1 += m * y
        out[0, i], out[0, i + 1], out[0, i + 2], out[0, i + 3] = a0, b0, c0, e0
        out[1, i], out[1, i + 1], out[1, i + 2], out[1, i + 3] = a1, b1, c1, e1
    for i in range(full, rows):
        a0 = a1 = 0.0
        for j in range(columns):
            a0 += matrix[i, j] * v0[j]
            a1 += matrix[i, j] * v1[j]
        out[0, i], out[1, i] = a0, a1


@njit(cache=True, fastmath=FASTMATH)
def _add_low_rank(
    factors: np.ndarray, core: np.ndarray, vector: np.ndarray, out: np.ndarray, work: np.ndarray
) -> None:
    r"""``out += U C U^T vector`` with ``factors`` :math:`= U^\top` (k, N), ``core``
    :math:`C` (k, k); ``work`` holds 2k numbers."""
    k = core.shape[0]
    for p in range(k):
        total = 0.0
        for j in range(vector.size):
            total += factors[p, j] * vector[j]
        work[p] = total
    for p in range(k):
        total = 0.0
        for q in range(k):
            total += core[p, q] * work[q]
        work[k + p] = total
    for p in range(k):
        weight = work[k + p]
        for j in range(out.size):
            out[j] += factors[p, j] * weight


@njit(cache=True, fastmath=FASTMATH)
def advance_shared_runs(
    K0: np.ndarray,
    gram0: np.ndarray,
    K_factors: np.ndarray,
    K_cores: np.ndarray,
    gram_factors: np.ndarray,
    gram_cores: np.ndarray,
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
    r""":func:`advance_runs` for runs with :math:`K_r = K_0 + U_r C_r U_r^\top` and
    :math:`\mathrm{Gram}_r = G_0 + V_r D_r V_r^\top` (``K_factors`` :math:`U_r^\top` and
    ``gram_factors`` :math:`V_r^\top` (R, k, N), ``K_cores`` and ``gram_cores`` (R, k, k)),
    :data:`TOGETHER` runs at a time (see the module docstring); the same state, stopping
    rule and result."""
    runs, N = a.shape
    n, T = scores.shape[1:]
    k = K_cores.shape[1]
    # slot g of a pair: its run (-1: none) and its vectors; a missing run's vectors are zero
    member = np.empty(TOGETHER, dtype=np.int64)
    state, Ka, x = np.zeros((TOGETHER, N)), np.zeros((TOGETHER, N)), np.zeros((TOGETHER, N))
    logits, h, y = np.zeros((TOGETHER, N)), np.zeros((TOGETHER, N)), np.zeros((TOGETHER, N))
    w, s, slope, work = np.empty(N), np.empty((n, T)), np.empty(n), np.empty(2 * k)
    left, right = np.empty((TOGETHER, WAITING, N)), np.empty((TOGETHER, WAITING, N))
    for start in range(0, runs, TOGETHER):
        count = 0
        for r in range(start, min(start + TOGETHER, runs)):
            if not stopped[r]:
                member[count] = r
                count += 1
        member[count:] = -1
        state[:], x[:], h[:] = 0.0, 0.0, 0.0
        waiting = 0
        for step in range(steps):
            if member.max() < 0:
                break
            for g in range(TOGETHER):
                if member[g] >= 0:
                    state[g] = a[member[g]]
            _times_pair(K0, state, Ka)
            for g in range(TOGETHER):
                r = member[g]
                if r >= 0:
                    _add_low_rank(K_factors[r], K_cores[r], state[g], Ka[g], work)
                    if waiting == WAITING:
                        _fold_transpose_times(M[r], left[g], right[g], Ka[g], x[g])
                    else:
                        _transpose_times(M[r], Ka[g], x[g])
                        _correct(x[g], left[g], right[g], Ka[g], waiting)
            if waiting == WAITING:
                waiting = 0
            _times_pair(gram0, x, logits)
            for g in range(TOGETHER):
                r = member[g]
                if r < 0:
                    continue
                _add_low_rank(gram_factors[r], gram_cores[r], x[g], logits[g], work)
                logits[g] += Ka[g]
                if not _all_finite(logits[g]):
                    stopped[r] = first_step + step + 1
                    _fold(M[r], left[g], right[g], waiting)
                    member[g] = -1
                    state[g], x[g], h[g] = 0.0, 0.0, 0.0
                    continue
                _logit_gradient(
                    logits[g].reshape(n, T),
                    scores[r],
                    differences[r],
                    labels[r],
                    h[g].reshape(n, T),
                    s,
                    slope,
                )
            _times_pair(gram0, h, y)
            for g in range(TOGETHER):
                r = member[g]
                if r < 0:
                    continue
                _add_low_rank(gram_factors[r], gram_cores[r], h[g], y[g], work)
                _times(M[r], y[g], w)
                _correct(w, right[g], left[g], y[g], waiting)
                left[g, waiting] = alphas[r] * a[r]
                right[g, waiting] = h[g]
                a[r] -= alphas[r] * (h[g] + w)
            waiting += 1
        for g in range(TOGETHER):
            if member[g] >= 0:
                _fold(M[member[g]], left[g], right[g], waiting)
