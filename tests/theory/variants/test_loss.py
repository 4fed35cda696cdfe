"""The loss variant: stage-1 rates through the loss weights (the threshold moves only with
q = w(f0)/w(-f0)), the stage-2 flow per loss (R4: the same slope per decade, an offset set by
the saturated weight), the squared loss's finite target, and the logistic default unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from theory.foundation.data_model import DataModel, Training
from theory.foundation.losses import LOSSES, WEIGHT_AT_ZERO, saturated_weight_floor, weight
from theory.stage1.predictions import gap_velocities, overfitting_threshold, rate
from theory.stage1.sampling import sample_gap_velocities
from theory.stage2 import flow
from theory.stage2.predictions import gap_slope
from theory.variants import loss as variant

PRESETS = [(5000, 5.0), (2000, 20.0), (1000, 100.0)]


def test_loss_weights_are_minus_the_slopes_and_bounded_below():
    for name in LOSSES:
        assert weight(0.0, name) == WEIGHT_AT_ZERO[name]
        step = 1e-6
        for z in (-0.7, 0.2, 0.9):
            slope = (variant_loss(z + step, name) - variant_loss(z - step, name)) / (2 * step)
            assert weight(z, name) == pytest.approx(-slope, rel=1e-8)
    assert saturated_weight_floor(0.7, "squared") == pytest.approx(0.3)
    assert saturated_weight_floor(-0.7, "logistic") == pytest.approx(1 / (1 + math.exp(0.7)))
    with pytest.raises(ValueError, match="^loss='hinge'"):
        weight(0.0, "hinge")


def variant_loss(z: float, name: str) -> float:
    return {
        "logistic": math.log1p(math.exp(-z)),
        "exponential": math.exp(-z),
        "squared": (1 - z) ** 2 / 2,
    }[name]


@pytest.mark.parametrize(("d", "mu"), PRESETS)
def test_stage1_rates_scale_with_the_loss_weights(d, mu):
    model = DataModel(d=d, mu_norm=mu)
    base = Training()
    log_clean, log_noisy = variant.stage1_weights(model, "logistic")
    eta = model.noisy_count / model.n
    for name in LOSSES:
        training = Training(loss=name)
        clean, noisy = variant.stage1_weights(model, name)
        signal = ((1 - eta) * clean - eta * noisy) / ((1 - eta) * log_clean - eta * log_noisy)
        assert rate(model, training, "signal_rate") == pytest.approx(
            signal * rate(model, base, "signal_rate"), rel=1e-12
        )
        assert rate(model, training, "memorisation_rate", True) == pytest.approx(
            noisy / log_noisy * rate(model, base, "memorisation_rate", True), rel=1e-12
        )
        ratio = overfitting_threshold(model, training) / overfitting_threshold(model, base)
        assert ratio == pytest.approx(variant.threshold_ratio(model, name), rel=1e-12)
    # The threshold is the same for every loss to zeroth order in f0 (here 0.088): a few %.
    assert 1.05 < variant.threshold_ratio(model, "exponential") < 1.2
    assert rate(model, base, "signal_rate") == rate(model, Training(loss="logistic"), "signal_rate")


def test_exponential_loss_velocities_match_a_monte_carlo_of_the_exact_gradient():
    model = DataModel(d=200, n=10, T=4, mu_norm=10.0)
    gaps = (("I", False), ("R", True))
    results = {}
    for name in ("exponential", "logistic"):
        training = Training(loss=name)
        with threadpool_limits(1):
            results[name] = sample_gap_velocities(model, training, gaps, 300, seed=77)
    for other, noisy in gaps:
        predicted = gap_velocities(model, Training(loss="exponential"), noisy)[other]
        sample = results["exponential"][(other, noisy)].mean
        error = sample.std(ddof=1) / math.sqrt(sample.size)
        assert abs(sample.mean() - predicted) < 4 * error + 0.02 * abs(predicted)
        logistic = results["logistic"][(other, noisy)].mean.mean()
        assert abs(logistic - predicted) > 4 * error  # the loss is seen: twice the weights


@pytest.mark.parametrize(("d", "mu"), PRESETS)
def test_flow_gap_slope_is_the_same_for_every_loss_and_the_offset_is_predicted(d, mu):
    model = DataModel(d=d, mu_norm=mu)
    slopes = {name: gap_slope(model, Training(loss=name)).value for name in LOSSES}
    assert max(slopes.values()) - min(slopes.values()) < 0.01 * slopes["logistic"]
    steps = np.geomspace(1e9, 1e12, 3)
    gaps = {}
    for name in LOSSES:
        pop = flow.population(model, Training(loss=name))
        gaps[name] = flow.solve(pop, 5e-3 * steps[-1], tau_eval=5e-3 * steps).clean_gap()
    for name in ("exponential", "squared"):
        offset = variant.late_gap_offset(model, name)
        assert abs(offset) > 0.1  # a loss that were not wired in would show no offset
        np.testing.assert_allclose(gaps[name] - gaps["logistic"], offset, atol=0.03)


def test_logistic_flow_weight_is_the_base_formula_bit_for_bit():
    pop = flow.population(DataModel(d=500, mu_norm=9.0), Training())
    rng = np.random.default_rng(3)
    for _ in range(20):
        logits = rng.normal(0, 3, pop.scores.shape[1]).tolist()
        for k in (0, 1):
            h, probabilities, output = pop.kernel.row_gradient(k, logits)
            # The flow's logistic weight before the loss became a setting, operation for operation.
            expected = 0.5 * (1.0 - math.tanh(0.5 * pop.kernel.varsigma[k] * output))
            scale = -expected * pop.kernel.loss_scale[k]
            mass = [p * c for p, c in zip(probabilities, pop.kernel.counts, strict=True)]
            rebuilt = [
                scale * p * sum(g * m for g, m in zip(gaps, mass, strict=True))
                for p, gaps in zip(probabilities, pop.kernel.differences[k], strict=True)
            ]
            assert h == rebuilt
    squared = flow.population(DataModel(d=500, mu_norm=9.0), Training(loss="squared"))
    assert squared.kernel.row_gradient(1, logits)[0] != pop.kernel.row_gradient(1, logits)[0]


def test_squared_loss_gap_stops_when_the_selected_score_exceeds_one():
    model = DataModel(nu_scale=2.0)  # gamma0 = 1.41 > 1: the target f = 1 is reachable
    stop = variant.squared_loss_stationary_gap(model)
    assert math.isfinite(stop) and math.isinf(variant.squared_loss_stationary_gap(DataModel()))
    steps = np.array([1e3, 1e4, 1e6])
    runs = {}
    for name in ("squared", "logistic"):
        pop = flow.population(model, Training(loss=name))
        runs[name] = flow.solve(pop, 5e-3 * steps[-1], tau_eval=5e-3 * steps)
    squared = runs["squared"].clean_gap()
    assert abs(squared[-1] - squared[0]) < 0.01  # stopped
    assert squared[-1] == pytest.approx(stop, rel=0.1)  # x* assumes equal competitors
    output = flow.logit_gradient(runs["squared"].population, runs["squared"].logits[-1]).outputs
    assert output[0] == pytest.approx(1.0, abs=1e-3)  # at the target: its weight is 0
    assert runs["logistic"].clean_gap()[-1] - runs["logistic"].clean_gap()[0] > 5  # grows
    assert math.isinf(variant.time_to_gap_ratio(model, "squared"))
    assert math.isnan(variant.late_gap_offset(model, "squared"))
