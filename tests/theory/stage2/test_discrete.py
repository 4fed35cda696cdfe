"""The mean-field GD map (theory.stage2.discrete): its step is exact, it tends to the flow
of its own variables as the step shrinks, and it follows the GD simulation where GD has
left the flow."""

from __future__ import annotations

import math

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.stage2 import discrete, flow


def test_the_step_is_exact():
    for residual in discrete.step_residuals(2):
        assert residual == 0 or all(entry == 0 for entry in residual)


def _logits_at(table, alpha, tau):
    return discrete.evolve(table, alpha, round(tau / alpha)).state.logits(table)[0]


def test_the_map_tends_to_the_flow_of_its_own_variables():
    """Benign preset's shape at d = 2000, ||mu|| = 40: the map against the flow of
    (a, L, pi) (no alpha^2 terms) to flow time 1: within 0.02% of the largest logit at
    alpha = 1e-3, and the difference is first order in alpha (five times larger at the
    paper's 5e-3)."""
    model, training = DataModel(d=2000, mu_norm=40.0), Training()
    table = discrete.Table.of(flow.population(model, training))
    start = discrete.evolve(table, 1e-5, 100).state  # flow time 1e-3
    exact = discrete.flow_to(table, start, 1.0)[0].logits(table)[0]

    def gap(alpha):
        return float(np.max(np.abs(_logits_at(table, alpha, 1.0) - exact)) / np.max(np.abs(exact)))

    small, paper = gap(1e-3), gap(5e-3)
    assert small <= 2e-4
    assert 3 < paper / small < 7


def test_the_map_follows_the_simulated_gd():
    """d = 1e6, n = 20, ||mu|| = 300 (alpha ||mu||^2 = 450: the clean samples saturate in the
    first steps), 1000 GD steps of the d-free engine: the learned query's signal component
    and norm within 1% of the map's; the flow to the same time misses both by more than 5%."""
    from verify.sim.config import RunConfig
    from verify.sim.simulate import simulate

    config = RunConfig.build(
        d=10**6,
        n=20,
        mu_norm=300.0,
        init="gaussian",
        engine="dfree",
        test_size=0,
        population="final",
        steps=1000,
        log_every=1000,
        seed=0,
    )
    history = simulate(config).history
    signal = float(np.asarray(history["q_signal_plus"])[-1])
    norm = float(np.asarray(history["q_norm"])[-1])
    pop = flow.population(config.model, config.training)
    table = discrete.Table.of(pop)
    state = discrete.evolve(table, config.training.alpha, 1000).state
    pi = float(state.pi[0])
    mapped = (
        float(state.signal(table)[0, 0]) / 300.0,
        math.sqrt(pi**2 + flow.KAPPA_P_RATIO * pop.kappa0 * pi),
    )
    assert abs(mapped[0] / signal - 1) <= 0.01 and abs(mapped[1] / norm - 1) <= 0.01
    run = flow.solve(pop, 5.0, tau_eval=np.array([5.0]))
    flowed = (float(run.beta[-1]) / 300.0, math.sqrt(float(run.query_norm_sq[-1])))
    assert abs(flowed[0] / signal - 1) > 0.05 and abs(flowed[1] / norm - 1) > 0.05


def test_two_classes_folded_are_the_symmetric_map():
    model, training = DataModel(d=1000, mu_norm=130.0), Training(init="gaussian")
    table = discrete.Table.of(flow.population(model, training))
    both = discrete.two_class_table(model, training, np.array([130.0**2]))
    one = discrete.evolve(table, 5e-3, 300).state
    two = discrete.evolve(both, 5e-3, 300).state
    np.testing.assert_allclose(two.logits(both)[0, :2], one.logits(table)[0], rtol=1e-10)
    np.testing.assert_allclose(two.logits(both)[0, 2:], one.logits(table)[0], rtol=1e-10)
    np.testing.assert_allclose(two.signal(both)[0], one.signal(table)[0, 0], rtol=1e-10)


def _reference_steps(table, alpha, steps, channel):
    """The map by :func:`discrete.forces` and :func:`discrete.step`, one array per step."""
    state = discrete.MapState.zero(table)
    for _ in range(steps):
        state = discrete.step(
            table, state, alpha, discrete.forces(table, state.a, state.L), channel
        )
    return state


def test_the_in_place_stepper_is_the_step_bit_for_bit():
    """Stepper against forces + step: probes (memorisation and signal preconditioner per
    member), both classes apart (two signal directions), a loss other than the logistic,
    and the W0 channel; every state array equal bit for bit after 200 steps."""
    model, training = DataModel(d=1000, mu_norm=60.0), Training(init="gaussian")
    pop = flow.population(model, training)
    mus = np.array([20.0, 60.0, 150.0, 20.0, 60.0, 150.0])
    scales = (np.array([1.0, 1.0, 1.0, 1.1, 1.0, 1.0]), np.array([1.0, 1.0, 1.0, 1.0, 1.1, 1.3]))
    exponential = flow.population(model, Training(init="gaussian", loss="exponential"))
    tables = [
        discrete.Table.of(pop, mus**2, *scales),
        discrete.two_class_table(model, training, mus[:3] ** 2),
        discrete.Table.of(exponential, mus**2),
    ]
    for table in tables:
        for channel in (False, True):
            expected = _reference_steps(table, 5e-3, 200, channel)
            stepper = discrete.Stepper(table, 5e-3, discrete.MapState.zero(table), channel)
            for _ in range(200):
                stepper.compute_forces()
                stepper.update()
            for name in ("a", "L", "pi", "tau", "b", "B"):
                np.testing.assert_array_equal(getattr(stepper, name), getattr(expected, name))
