r"""A weight matrix whose gradient-descent updates are kept as factors and applied in
batches.

The encoder's large matrices receive low-rank gradients, :math:`G = L^\top R` with
:math:`L` (k, rows) and :math:`R` (k, cols), :math:`k` = n for the value and feed-forward
maps and 1 for the query and key maps. Applying each step's update at once reads and
writes the whole matrix; kept as factors,

.. math::

    W = W_b - \sum_j L_j^\top R_j, \qquad
    XW^\top = XW_b^\top - (XR^\top)L, \qquad YW = YW_b - (YL^\top)R,

the products cost two small extra products, and the pending factors are folded into
:math:`W_b` by one BLAS rank-:math:`K` update when :math:`K` rows have gathered (one pass
over the matrix instead of one per step). The arithmetic is the same gradient descent;
only the order of the additions, so the rounding, differs.
"""

from __future__ import annotations

import numpy as np


def subtract_low_rank(matrix: np.ndarray, left: np.ndarray, right: np.ndarray, step: float) -> None:
    r"""``matrix -= step * left.T @ right`` in place (BLAS ``dgemm`` with
    :math:`\beta = 1` on the C-ordered matrix's Fortran-ordered transpose)."""
    from scipy.linalg.blas import dgemm

    target = matrix.T
    if not target.flags.f_contiguous:  # a view BLAS cannot write in place
        matrix -= step * (left.T @ right)
        return
    updated = dgemm(
        -step,
        np.asfortranarray(right),
        np.asfortranarray(left),
        beta=1.0,
        c=target,
        trans_a=1,
        overwrite_c=1,
    )
    if not np.may_share_memory(updated, matrix):  # BLAS returned a copy: keep its values
        matrix[...] = updated.T


class DeferredMatrix:
    """``base`` (updated in place) minus the pending factors, up to ``capacity`` rows."""

    def __init__(self, base: np.ndarray, capacity: int):
        rows, cols = base.shape
        self.base = base
        self.capacity = max(int(capacity), 1)
        self.left = np.empty((self.capacity, rows))
        self.right = np.empty((self.capacity, cols))
        self.count = 0

    def right_product(self, X: np.ndarray) -> np.ndarray:
        r""":math:`XW^\top` for X (m, cols)."""
        out = X @ self.base.T
        if self.count:
            k = self.count
            out -= (X @ self.right[:k].T) @ self.left[:k]
        return out

    def left_product(self, Y: np.ndarray) -> np.ndarray:
        """:math:`YW` for Y (m, rows)."""
        out = Y @ self.base
        if self.count:
            k = self.count
            out -= (Y @ self.left[:k].T) @ self.right[:k]
        return out

    def subtract(self, left: np.ndarray, right: np.ndarray, step: float) -> None:
        r""":math:`W \leftarrow W - \text{step}\,L^\top R` (deferred)."""
        k = left.shape[0]
        if self.count + k > self.capacity:
            self.flush()
        if k > self.capacity:
            subtract_low_rank(self.base, left, right, step)
            return
        self.left[self.count : self.count + k] = step * left
        self.right[self.count : self.count + k] = right
        self.count += k

    def flush(self) -> None:
        """Fold the pending factors into ``base``."""
        if self.count:
            k = self.count
            subtract_low_rank(self.base, self.left[:k], self.right[:k], 1.0)
            self.count = 0


class DenseMatrix:
    """A plain matrix behind the same products (no deferral)."""

    def __init__(self, base: np.ndarray):
        self.base = base

    def right_product(self, X: np.ndarray) -> np.ndarray:
        return X @ self.base.T

    def left_product(self, Y: np.ndarray) -> np.ndarray:
        return Y @ self.base

    def subtract(self, left: np.ndarray, right: np.ndarray, step: float) -> None:
        subtract_low_rank(self.base, left, right, step)

    def flush(self) -> None:
        pass


__all__ = ["DeferredMatrix", "DenseMatrix", "subtract_low_rank"]
