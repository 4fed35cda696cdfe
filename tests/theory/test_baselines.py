"""Test-time baselines of the fixed head against the simulator's population metrics: at
q = 0 the attention is uniform, and the simulator's exact test accuracy and loss over the
test distribution are the theory's closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from theory.baselines import argmax_loss, uniform_attention_accuracy, uniform_attention_loss
from theory.foundation.data_model import DataModel

MODELS = [
    DataModel(d=50, mu_norm=3.0, T=6, n_relevant=2, rho=0.3),
    DataModel(d=2000, mu_norm=20.0),
    DataModel(d=1000, mu_norm=5.0, sigma_eps=0.5, T=4),
]


@pytest.mark.parametrize("model", MODELS)
def test_uniform_attention_is_the_simulators_population_metric_at_q_0(model):
    from verify.sim.population import population_metrics

    metrics = population_metrics(model, 0.0, np.zeros(2))
    assert metrics.accuracy == pytest.approx(uniform_attention_accuracy(model), abs=1e-12)
    assert metrics.loss == pytest.approx(uniform_attention_loss(model), abs=1e-9)
    # the argmax limit's loss (every sequence selecting R) is another number
    assert abs(metrics.loss - argmax_loss(model, {"R": 1.0})) > 1e-3
