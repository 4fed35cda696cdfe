"""The growing preconditioner: its rank-one closure and the two-channel flow are proved by
their derivation records (:mod:`theory.stage2.preconditioner`, run in
``tests/theory/stage2/test_laws.py``); here each fails with a wrong term."""

from __future__ import annotations

import sympy as sp

from theory.foundation.proof import residuals_vanish
from theory.foundation.symbols import real_vector


def test_rank_one_closure_fails_with_a_wrong_sign():
    """The closure itself is proved by its derivation record; a wrong sign fails."""
    W0 = sp.Matrix(2, 2, sp.symbols("v1:5", real=True))
    p, varrho = real_vector("p", 2), real_vector("r", 2)
    W = W0 + p * varrho.T
    q, k, pi = W.T * p, W0.T * p, (p.T * p)[0, 0]
    wrong = ((W.T * W - W0.T * W0) * pi - (q * q.T + k * k.T)).applyfunc(sp.expand)
    assert not residuals_vanish(wrong)


def test_two_channel_flow_needs_the_rank_one_term():
    """Proved by its derivation record; without the rank-one part of W^T W it fails."""
    # Dropping the rank-one part of W^T W (preconditioner kappa0 + pi only) breaks them.
    A = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"A{min(i, j)}{max(i, j)}", real=True))
    q, k, G = real_vector("q", 2), real_vector("k", 2), real_vector("G", 2)
    pi = sp.Symbol("pi", positive=True)
    c_dot = -(A + pi * sp.eye(2)) * G - (-A * G - k * ((q - k).T * G)[0, 0] / pi)
    residual = (c_dot - (-pi * G + (q - k) * (-2 * (q.T * G)[0, 0]) / (2 * pi))).applyfunc(
        sp.simplify
    )
    assert not residuals_vanish(residual)
