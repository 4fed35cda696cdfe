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


def _closure_velocities(pop, taus):
    """The closure flow's logit velocities per unit log tau at ``taus`` (differences over
    log tau = 0.001)."""
    import numpy as np

    from theory.stage2 import flow

    points = np.sort(np.concatenate([taus, taus * 1.001]))
    logits = flow.solve(pop, points[-1], tau_eval=points).logits
    return logits[0::2], (logits[1::2] - logits[0::2]) / np.log(1.001)


def test_rank_one_closure_within_one_percent():
    """The closure flow (theory.stage2.flow) against the mean-field flow without the
    closure (theory.stage2.discrete: W^T W carried exactly as W0^T W0 plus the rank-two
    updates), benign preset, 1e2 to 1e12 steps: the training logits and their velocities
    per unit log tau agree to 1% of the largest; at 1e2 steps the same comparison rejects
    the closure flow with the memorisation 2% off (it is not blind)."""
    import numpy as np

    from theory.stage2 import discrete, flow
    from verify.sim.config import preset

    config = preset("benign")
    pop = flow.population(config.model, config.training)
    taus = config.training.alpha * np.array([1e2, 1e4, 1e6, 1e8, 1e10, 1e12])
    logits, velocities = _closure_velocities(pop, taus)
    table = discrete.Table.of(pop)
    state = discrete.evolve(table, 1e-5, 100).state  # flow time 1e-3
    exact_logits, exact_velocities = [], []
    for tau in taus:
        state, _ = discrete.flow_to(table, state, tau)
        exact_logits.append(state.logits(table)[0])
        da = discrete.velocity(table, state.a, state.L, state.pi)[0]
        exact_velocities.append((tau * da)[0, : table.cells].reshape(table.scores.shape))

    def worst(ours, theirs):
        return max(
            float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
            for a, b in zip(ours, theirs, strict=True)
        )

    assert worst(logits, exact_logits) <= 0.01
    assert worst(velocities, exact_velocities) <= 0.01
    wrong = flow.population(config.model, config.training, memorisation_scale=1.02)
    early = _closure_velocities(wrong, taus[:1])[1]
    assert worst(early, exact_velocities[:1]) > 0.01
