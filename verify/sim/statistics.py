r"""What the reduced dynamics and the observables need of the d-dimensional draws.

Write the training tokens as :math:`B = Z + E S^\top` (:math:`d \times N`, :math:`N = nT`):
a noise part :math:`Z` (the whole tokens, for external data) and a signal part on the
signal directions :math:`E = [e_1, e_2]` with coefficients :math:`S` (:math:`N \times 2`).
With :math:`A = W_0^\top W_0`, reduced GD needs :math:`K = B^\top A B` and
:math:`\mathrm{Gram} = B^\top B`; the query :math:`q = W^\top p = A B a + B u`
(:math:`u = M^\top K a`) is seen by the observables only through

.. math::

    \|q\|^2 = a^\top Q a + 2 (K a)^\top u + u^\top \mathrm{Gram}\, u, \quad
    Q = B^\top A^2 B, \qquad E^\top q = (E^\top A B)\, a + (E^\top B)\, u .

One pass over :math:`W_0` in row blocks (:math:`O(d^2 N)` time, :math:`O(dN)` memory)
gives the signal-free products (:class:`ReducedSetup`); the :class:`Statistics` of any
signal :math:`S` then follow in :math:`O(N^2)`:

.. math::

    K = P + P_E S^\top + S P_E^\top + S P_{EE} S^\top, \quad
    \mathrm{Gram} = Z^\top Z + (E^\top Z)^\top S^\top + S E^\top Z + S S^\top, \quad
    Q = Q_0 + Q_E S^\top + S Q_E^\top + S Q_{EE} S^\top,

with :math:`P = V_0^\top V_0`, :math:`V_0 = W_0 Z`, :math:`P_E = V_0^\top W_0 E`,
:math:`P_{EE} = E^\top A E`, :math:`C_0 = A Z`, :math:`Q_0 = C_0^\top C_0`,
:math:`Q_E = C_0^\top A E`, :math:`Q_{EE} = E^\top A^2 E`. This is what lets runs that
differ only in :math:`\|\mu\|` share the products with :math:`W_0`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from verify.runtime.threads import ordered_map


@dataclass(frozen=True)
class Statistics:
    """The reduced statistics of one run's draws (see the module docstring)."""

    K: np.ndarray  # B^T A B, (N, N)
    gram: np.ndarray  # B^T B, (N, N)
    Q: np.ndarray  # B^T A^2 B, (N, N)
    signal_AB: np.ndarray  # E^T A B, (2, N)
    signal_B: np.ndarray  # E^T B, (2, N)
    invariant_scale: float  # ||W0 W0^T||_F (see conserved_scale)

    def query_moments(self, a: np.ndarray, M: np.ndarray) -> tuple[float, np.ndarray]:
        r""":math:`\|q\|^2` and :math:`E^\top q` (the query's signal coordinates) at state
        :math:`(a, M)`, in :math:`O(N^2)`."""
        Ka = self.K @ a
        u = M.T @ Ka
        q_sq = float(a @ (self.Q @ a) + 2.0 * (Ka @ u) + u @ (self.gram @ u))
        return max(q_sq, 0.0), self.signal_AB @ a + self.signal_B @ u

    def parameter_norms(self, a: np.ndarray, M: np.ndarray) -> dict[str, float]:
        r""":math:`\|p\| = (a^\top K a)^{1/2}`, :math:`\|W - W_0\|_F =
        \mathrm{tr}(M\,\mathrm{Gram}\,M^\top K)^{1/2}` and the invariant drift
        :math:`\|V D V^\top\|_F = \mathrm{tr}(DKDK)^{1/2}` with :math:`D = M + M^\top +
        M\,\mathrm{Gram}\,M^\top - a a^\top` (:math:`p = V a`, :math:`W - W_0 = V M B^\top`,
        :math:`V = W_0 B`); all three are 0 at the initial state (no :math:`O(N^3)` products)."""
        if not (a.any() or M.any()):
            return {"p_norm": 0.0, "weight_change_norm": 0.0, "invariant_drift": 0.0}
        return self.stacked_norms(a[None], M[None])[0]

    def stacked_norms(self, a: np.ndarray, M: np.ndarray) -> list[dict[str, float]]:
        """:meth:`parameter_norms` of many states, ``a`` (L, N) and ``M`` (L, N, N)."""
        K, gram = self.K, self.gram
        Mt = np.swapaxes(M, 1, 2)
        MGMt = (M @ gram) @ Mt
        D = M + np.ascontiguousarray(Mt)  # D = ((M + M^T) + M Gram M^T) - a a^T, in place
        D += MGMt
        D -= a[:, :, None] * a[:, None, :]
        DK = D @ K
        squares = zip(
            np.einsum("li,ij,lj->l", a, K, a),
            np.einsum("lij,ij->l", MGMt, K),
            np.einsum("lij,lji->l", DK, DK),
            strict=True,
        )
        return [
            {
                "p_norm": math.sqrt(max(float(p), 0.0)),
                "weight_change_norm": math.sqrt(max(float(w), 0.0)),
                "invariant_drift": math.sqrt(max(float(s), 0.0)),
            }
            for p, w, s in squares
        ]


def conserved_scale(second: float, fourth: float, d: int) -> float:
    r"""The size of the conserved matrix, :math:`\|W_0 W_0^\top\|_F`, from the mean square
    :math:`\sigma^2` and mean fourth power :math:`m_4` of :math:`W_0`'s entries: its
    expectation for iid entries,
    :math:`\sqrt{d(d\,m_4 + d(d-1)\sigma^4) + d^2(d-1)\sigma^4}` (cost :math:`O(d^2)`
    instead of the :math:`O(d^3)` product); the invariant drift is reported relative to
    it."""
    return float(np.sqrt(d * (d * fourth + d * (d - 1) * second**2) + d * d * (d - 1) * second**2))


BlockTerms = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float]


def block_terms(Z: np.ndarray, block: np.ndarray) -> BlockTerms:
    r"""What a row block :math:`W_b` of :math:`W_0` adds to the set-up's sums, with
    :math:`V_b = W_bZ` and :math:`W_bE` its first two columns: :math:`V_b^\top V_b`,
    :math:`V_b^\top W_bE`, :math:`(W_bE)^\top W_bE`, :math:`W_b^\top V_b`,
    :math:`W_b^\top W_bE`, and the sums of the squares and of the fourth powers of its
    entries."""
    V0 = block @ Z
    W0E = block[:, :2]
    powers = block * block
    second = float(powers.sum())
    np.multiply(powers, powers, out=powers)  # the fourth powers, in place
    return (
        V0.T @ V0,
        V0.T @ W0E,
        W0E.T @ W0E,
        block.T @ V0,
        block.T @ W0E,
        second,
        float(powers.sum()),
    )


@dataclass(frozen=True)
class ReducedSetup:
    """The signal-free products of one :math:`(W_0, Z)`, and :math:`Z`, :math:`C_0 = AZ`,
    :math:`AE` kept for query vectors and finite test sets."""

    Z: np.ndarray  # (d, N)
    C0: np.ndarray  # A Z, (d, N)
    AE: np.ndarray  # A E, (d, 2)
    P: np.ndarray  # V0^T V0, (N, N)
    P_E: np.ndarray  # V0^T W0 E, (N, 2)
    P_EE: np.ndarray  # E^T A E, (2, 2)
    gram0: np.ndarray  # Z^T Z, (N, N)
    Q0: np.ndarray  # C0^T C0, (N, N)
    Q_E: np.ndarray  # C0^T A E, (N, 2)
    Q_EE: np.ndarray  # E^T A^2 E, (2, 2)
    invariant_scale: float

    @classmethod
    def build(
        cls, Z: np.ndarray, W0_blocks: Iterable[np.ndarray], workers: int = 1
    ) -> ReducedSetup:
        """One pass over the row blocks of :math:`W_0` (each ``(rows, d)``); the blocks'
        products are computed ``workers`` blocks at a time (:func:`block_terms`, each in a
        thread of its own) and added up in the blocks' order, so the numbers do not depend
        on ``workers``."""
        d, N = Z.shape
        P, P_E, P_EE = np.zeros((N, N)), np.zeros((N, 2)), np.zeros((2, 2))
        C0, AE = np.zeros((d, N)), np.zeros((d, 2))
        second = fourth = 0.0
        terms = ordered_map(lambda block: block_terms(Z, block), W0_blocks, workers)
        for VV, VE, EE, C, CE, block_second, block_fourth in terms:
            P += VV
            P_E += VE
            P_EE += EE
            C0 += C
            AE += CE
            second, fourth = second + block_second, fourth + block_fourth
        scale = conserved_scale(second / d**2, fourth / d**2, d)
        return cls(
            Z=Z,
            C0=C0,
            AE=AE,
            P=P,
            P_E=P_E,
            P_EE=P_EE,
            gram0=Z.T @ Z,
            Q0=C0.T @ C0,
            Q_E=C0.T @ AE,
            Q_EE=AE.T @ AE,
            invariant_scale=scale,
        )

    def tokens(self, S: np.ndarray | None = None) -> np.ndarray:
        """:math:`B = Z + E S^\\top` (d, N)."""
        if S is None:
            return self.Z
        B = self.Z.copy()
        B[:2] += S.T
        return B

    def A_tokens(self, S: np.ndarray | None = None) -> np.ndarray:
        """:math:`A B = C_0 + (AE) S^\\top` (d, N)."""
        return self.C0 if S is None else self.C0 + self.AE @ S.T

    def statistics(self, S: np.ndarray | None = None) -> Statistics:
        """The :class:`Statistics` of the tokens :math:`Z + E S^\\top` (``S`` (N, 2); ``None``:
        no signal part), in :math:`O(N^2)` from the stored products."""
        Z_E, C0_E, AE_E = self.Z[:2], self.C0[:2], self.AE[:2]
        if S is None:
            return Statistics(
                K=self.P,
                gram=self.gram0,
                Q=self.Q0,
                signal_AB=C0_E.copy(),
                signal_B=Z_E.copy(),
                invariant_scale=self.invariant_scale,
            )
        K = self.P + self.P_E @ S.T + S @ self.P_E.T + S @ self.P_EE @ S.T
        gram = self.gram0 + Z_E.T @ S.T + S @ Z_E + S @ S.T
        Q = self.Q0 + self.Q_E @ S.T + S @ self.Q_E.T + S @ self.Q_EE @ S.T
        return Statistics(
            K=K,
            gram=gram,
            Q=Q,
            signal_AB=C0_E + AE_E @ S.T,
            signal_B=Z_E + S.T,
            invariant_scale=self.invariant_scale,
        )


__all__ = ["Statistics", "ReducedSetup", "conserved_scale"]
