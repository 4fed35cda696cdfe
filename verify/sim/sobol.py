r"""Scrambled Sobol' points in plain NumPy, without importing scipy.stats (slower than a run).

Dimension :math:`j` of the Sobol' sequence has a primitive polynomial
:math:`x^s + a_1x^{s-1} + \dots + a_{s-1}x + 1` over GF(2) and odd initial integers
:math:`m_1, \dots, m_s` (:math:`m_k < 2^k`), continued by

.. math::

    m_k = 2a_1m_{k-1} \oplus 2^2a_2m_{k-2} \oplus \dots \oplus 2^{s-1}a_{s-1}m_{k-s+1}
    \oplus 2^s m_{k-s} \oplus m_{k-s}

(dimension 0 has :math:`m_k = 1`). The direction numbers are :math:`v_k = m_k/2^k`, and
point :math:`n` is :math:`x_n = \bigoplus_k g_k v_{k+1}` over the bits :math:`g_k` of the
Gray code :math:`n \oplus \lfloor n/2\rfloor`: the points of
``scipy.stats.qmc.Sobol(scramble=False)``. The polynomials and initial integers are Joe and
Kuo's (21201 dimensions), read from the data file SciPy ships with its Sobol' engine.

Randomisation (Matoušek's linear matrix scramble with a digital shift): per dimension, each
:math:`v_k`'s binary digits are multiplied over GF(2) by one random lower-triangular matrix
with unit diagonal, and every point is XOR-ed with one random :math:`B`-bit integer. The
first :math:`2^m` points keep the sequence's equidistribution, and each point is uniform on
the grid :math:`\{(i + 1/2)/2^B\}`, :math:`B` = :data:`BITS` (the half cell keeps every
coordinate strictly inside (0, 1)).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np

#: Binary digits per coordinate.
BITS = 32


def direction_file() -> Path:
    """SciPy's file of Joe-Kuo primitive polynomials and initial direction integers,
    located without importing scipy.stats."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("SciPy is not installed: no Sobol' direction numbers")
    return Path(list(spec.submodule_search_locations)[0]) / "stats" / "_sobol_direction_numbers.npz"


@lru_cache(maxsize=8)
def direction_integers(dimension: int) -> np.ndarray:
    r"""Direction numbers :math:`v_k = m_k 2^{B-k}` as integers, shape (dimension, BITS)
    (read-only), for :math:`k = 1, \dots, B`."""
    with np.load(direction_file()) as table:
        polynomials = table["poly"][:dimension].astype(np.int64)
        initial = table["vinit"][:dimension].astype(np.int64)
    m = np.zeros((dimension, BITS), dtype=np.int64)
    m[0] = 1
    for j in range(1, dimension):
        degree = int(polynomials[j]).bit_length() - 1
        m[j, :degree] = initial[j, :degree]
        for k in range(degree, BITS):
            value = m[j, k - degree] ^ (m[j, k - degree] << degree)
            for i in range(1, degree):
                if (int(polynomials[j]) >> (degree - i)) & 1:
                    value ^= m[j, k - i] << i
            m[j, k] = value
    shifts = np.arange(BITS - 1, -1, -1, dtype=np.uint64)
    out = m.astype(np.uint64) << shifts
    out.setflags(write=False)
    return out


def to_digits(values: np.ndarray) -> np.ndarray:
    """Binary digits of ``BITS``-bit integers, most significant first: shape (..., BITS)."""
    shifts = np.arange(BITS - 1, -1, -1, dtype=np.uint64)
    return ((values[..., None] >> shifts) & np.uint64(1)).astype(np.int64)


def from_digits(digits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`to_digits`."""
    weights = np.uint64(1) << np.arange(BITS - 1, -1, -1, dtype=np.uint64)
    return (digits.astype(np.uint64) * weights).sum(axis=-1, dtype=np.uint64)


def scrambled_directions(dimension: int, rng: np.random.Generator) -> np.ndarray:
    r"""Direction integers after a random linear matrix scramble: digit :math:`r` of each
    :math:`v_k` becomes :math:`\bigoplus_{i \le r} L_{ri}\,\text{digit}_i` with :math:`L`
    random lower-triangular with unit diagonal, one :math:`L` per dimension."""
    lower = np.tril(rng.integers(0, 2, size=(dimension, BITS, BITS)), k=-1)
    lower += np.eye(BITS, dtype=lower.dtype)
    digits = to_digits(direction_integers(dimension))  # (dimension, k, i)
    scrambled = np.einsum("jki,jri->jkr", digits, lower) % 2
    return from_digits(scrambled)


def sobol_integers(directions: np.ndarray, start: int, count: int) -> np.ndarray:
    r"""Integer coordinates of points ``start`` to ``start + count - 1``:
    :math:`\bigoplus_k g_k(n)\,v_{k+1}` with :math:`g(n) = n \oplus \lfloor n/2\rfloor`.
    Shape (count, dimension)."""
    index = np.arange(start, start + count, dtype=np.uint64)
    gray = index ^ (index >> np.uint64(1))
    points = np.zeros((count, directions.shape[0]), dtype=np.uint64)
    for k in range(max(int(start + count - 1).bit_length(), 1)):
        selected = ((gray >> np.uint64(k)) & np.uint64(1)).astype(bool)
        points[selected] ^= directions[:, k]
    return points


def scrambled_sobol(dimension: int, start: int, count: int, rng: np.random.Generator) -> np.ndarray:
    r"""Points ``start`` to ``start + count - 1`` of one randomisation (drawn from ``rng``:
    the matrix scramble, then the digital shift) of the ``dimension``-dimensional Sobol'
    sequence, as :math:`(i + 1/2)/2^B` in (0, 1). Shape (count, dimension). The same
    ``rng`` state gives the same randomisation, so blocks of one sequence can be drawn
    separately. Equidistribution needs ``start`` and ``count`` to be multiples of a power
    of two as large as the block."""
    directions = scrambled_directions(dimension, rng)
    shift = rng.integers(0, 2**BITS, size=dimension, dtype=np.uint64)
    integers = sobol_integers(directions, start, count) ^ shift
    return (integers.astype(np.float64) + 0.5) / 2.0**BITS


__all__ = ["BITS", "direction_integers", "sobol_integers", "scrambled_sobol"]
