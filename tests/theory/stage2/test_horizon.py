"""GD-horizon predictions (theory.stage2.horizon): the benign | not-overfitting boundary
of the GD map against GD runs where the flow's is far off, its abstention where the map
is chaotic, and the derived errors' parts."""

from __future__ import annotations

import math

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.stage2 import horizon
from theory.stage2.predictions import benign_not_boundary

GAUSSIAN = Training(init="gaussian")


def _fitted(d: int, mu: float, seeds: int) -> float:
    """Mean over seeds of the fraction of noisy samples fitted after 1000 d-free GD steps."""
    from verify.sim.config import RunConfig
    from verify.sim.simulate import simulate

    values = []
    for seed in range(seeds):
        config = RunConfig.build(
            d=d,
            n=20,
            mu_norm=mu,
            init="gaussian",
            engine="dfree",
            test_size=0,
            population="none",
            steps=1000,
            log_every=1000,
            seed=seed,
        )
        values.append(float(np.asarray(simulate(config).history["noisy_fitted"])[-1]))
    return float(np.mean(values))


def test_the_gd_boundary_where_the_flow_s_is_far_off():
    """d = 1e7, n = 20: alpha ||mu||^2 ~ 1.5e4 at the boundary. Below the GD map's boundary
    (times 1 - 3 x its error) at least half of the noisy samples are fitted after 1000
    GD steps, above it (times 1 + 3 x the error) fewer; the flow's boundary, ten times
    higher, is in the not-fitted range already."""
    model = DataModel(d=10**7, mu_norm=10.0)
    result = horizon.gd_horizon(model, GAUSSIAN, 1000)
    boundary = result.benign_not
    assert not boundary.validity and boundary.model_error < 0.05
    margin = 3 * boundary.model_error + 0.03  # the measurement's bracket resolution
    assert _fitted(10**7, boundary.value * (1 - margin), 2) >= 0.5
    assert _fitted(10**7, boundary.value * (1 + margin), 2) < 0.5
    flow = benign_not_boundary(model, GAUSSIAN, 1000).value
    assert flow > 5 * boundary.value


def test_no_boundary_where_the_map_is_chaotic():
    """d = 1e5, n = 20: the map's outcome after 1000 steps flips with ||mu|| over a band
    wider than 25%: no number, the band and the reason."""
    result = horizon.gd_horizon(DataModel(d=10**5, mu_norm=10.0), GAUSSIAN, 1000).benign_not
    assert math.isnan(result.value) and "chaotic" in result.validity
    low, high = result.band
    assert high / low > horizon.BAND_LIMIT


def test_crossings_see_a_band():
    mus = np.geomspace(1.0, 10.0, 6)
    single = horizon.crossings(mus, np.array([-1, -1, -1, 1, 1, 1.0]))
    assert single.count == 1 and 2.51 < single.first < 3.98
    band = horizon.crossings(mus, np.array([-1, 1, -1, -1, 1, 1.0]))
    assert band.count == 3 and band.first < 2.6 and band.last > 3.98


def test_the_errors_are_derived_parts():
    """The benign preset's boundary error is one standard deviation of the dropped terms
    (per token and per class) plus the root's resolution; each part is positive and the
    per-class sensitivity is about one half (the class term scales the signal's drive)."""
    from verify.sim.config import preset

    config = preset("benign")
    boundary = horizon.gd_horizon(config.model, config.training, 1000).benign_not
    parts = boundary.parts
    assert parts["token"] > 0 and parts["class"] > 0 and parts["resolution"] > 0
    assert (
        boundary.model_error
        == math.hypot(parts["token"], parts["class"]) + parts["band"] + parts["resolution"]
    )
    assert 0.3 < parts["class"] / math.sqrt(2 / config.model.d) < 0.7
    assert boundary.error_source.startswith("derived: ")


def test_the_gd_horizon_does_not_overflow_at_a_huge_signal():
    """||mu|| = 1e99 (valid input): the query norm sqrt(pi^2 + kappa_p pi) is formed
    without squaring pi, so the prediction is finite (it overflowed before)."""
    from theory.stage2.horizon import gd_horizon
    from verify.sim.config import preset

    config = preset("benign", mu_norm=1e99)
    metrics = gd_horizon(config.model, config.training, 1000).metrics
    assert metrics is None or math.isfinite(metrics.query_norm)


def test_the_gd_map_steps_with_the_training_loss():
    """The GD map weights each sample by its loss's w(varsigma f): another loss moves the
    harmful | benign boundary (it was the logistic one whatever the loss), and the
    logistic map is the one the flow hands over to."""
    from theory.stage2.horizon import gd_horizon
    from verify.sim.config import RunConfig

    boundaries = {
        loss: gd_horizon(
            *_model_training(RunConfig.build(loss=loss, steps=200)), 200
        ).harmful_benign.value
        for loss in ("logistic", "exponential", "squared")
    }
    assert len(set(boundaries.values())) == 3, boundaries


def _model_training(config):
    return config.model, config.training
