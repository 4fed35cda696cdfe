"""The stage-2 mean-field flow: it starts with the stage-1 velocities, and its
preconditioner ratio kappa_p = 2 kappa0 holds for a square initialisation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.foundation.data_model import DataModel, Training
from theory.stage1.predictions import token_velocities
from theory.stage2 import flow

TRAINING = Training()


def test_mean_field_starts_with_the_stage1_velocities():
    """At tau -> 0 the flow's logit velocity is -kappa0 G h0: theory.stage1.rates' token velocities
    (the same mean field, derived independently from the group table)."""
    for model in (DataModel(d=500, mu_norm=9.0, rho=0.3),):
        pop = flow.population(model, TRAINING)
        _, state = flow.initial_state(pop)
        velocity = flow.velocity(pop, state)
        logit_velocity = velocity.b + state.s * velocity.r + velocity.s * state.r
        for row, noisy in ((0, False), (1, True)):
            expected = token_velocities(model, TRAINING, noisy)
            for slot, name in enumerate(pop.names):
                assert logit_velocity[row, slot] == pytest.approx(expected[name], rel=1e-4)


def test_kappa_p_is_twice_kappa0_for_a_square_initialisation():
    """p lies in the range of W0: kappa_p = g^T A^2 g / g^T A g = m2/m1 = 2 kappa0."""
    rng = np.random.default_rng(0)
    d = 1500
    W0 = rng.uniform(-1, 1, (d, d)) / math.sqrt(d)
    ratios = []
    for _ in range(4):
        p = W0 @ rng.standard_normal(d)
        ratios.append(float(np.sum((W0.T @ p) ** 2) / (p @ p)))
    kappa0 = TRAINING.kappa0(d)
    assert np.mean(ratios) == pytest.approx(flow.KAPPA_P_RATIO * kappa0, rel=3 * math.sqrt(2 / d))
    assert abs(np.mean(ratios) / kappa0 - 1) > 0.5  # kappa_p = kappa0 would be wrong
