"""Property tests over configurations built to satisfy A1-A8 (verify.checks.strategies).

For each drawn configuration the simulator runs and the theory's predictions are
asserted: regime, token selection, the g^-1 gap bracket and the stage-1 end. A second
strategy breaks exactly one assumption; what then breaks is recorded as a table.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings

from theory.predictions import predict
from verify.checks.runs import measured_regime, selected_groups
from verify.checks.strategies import (
    ASSUMPTION_KEYS,
    assumption_status,
    single_violation,
    valid_configs,
)
from verify.sim.simulate import simulate

PROPERTY_SETTINGS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FLOW_STEPS = 10**6


@lru_cache(maxsize=256)
def benign_run(config):
    flow = config.replace(engine="flow", steps=FLOW_STEPS, log_every=FLOW_STEPS, log_geometric=25)
    return simulate(flow), predict(config.model, config.training)


@lru_cache(maxsize=256)
def not_overfitting_run(config):
    return simulate(config), predict(config.model, config.training)


@seed(20251)
@PROPERTY_SETTINGS
@given(valid_configs("benign"))
def test_benign_regime_and_selection(config):
    result, p = benign_run(config)
    assert result.status == "completed", result.message
    assert p.regime == "benign"
    assert measured_regime(result) == "benign", result.final
    data = result.data
    chosen = selected_groups(result.train_logits[-1], data)
    assert np.mean(chosen[~data.noisy] == "R") >= 0.9
    assert np.mean(chosen[data.noisy] == "W-") >= 0.5, chosen[data.noisy]


@seed(20251)
@PROPERTY_SETTINGS
@given(valid_configs("benign"))
def test_benign_clean_gap_within_quadrature_bracket(config):
    result, p = benign_run(config)
    steps = np.array(result.steps)
    gaps = np.array([row["clean_gap_mean"] for row in result.history])
    keep = steps >= 1e3
    lower, upper = p.clean_gap_law.bracket(steps[keep] * config.training.alpha)
    assert np.all(gaps[keep] >= lower) and np.all(gaps[keep] <= upper), (gaps[keep], lower, upper)


@seed(20251)
@PROPERTY_SETTINGS
@given(valid_configs("benign"))
def test_benign_stage1_end_within_factor_3(config):
    result, p = benign_run(config)
    fitted = [row["step"] for row in result.history if row["noisy_fitted"] >= 1.0]
    assert fitted, "noisy samples never all fitted"
    predicted = p.noisy_fitting_time / config.training.alpha
    # The first fitted log point brackets the true time within one geometric log step.
    assert predicted / 3 <= fitted[0] <= 3 * predicted * (FLOW_STEPS ** (1 / 24)), (
        fitted[0],
        predicted,
    )


@pytest.mark.xfail(
    strict=True,
    reason=(
        "documented disagreement: the stage-1 derivation predicts not-overfitting whenever "
        "n SNR^2 exceeds its threshold (about 5 for the paper's setting), but in stage 2 the "
        "noisy samples' W- token can overtake R once the clean samples saturate; configurations "
        "satisfying A1-A8 with n SNR^2 at 2-4x the constant calibrated at rho = 0.1 (340) still "
        "fit their noisy samples within 1000 steps when rho is 0.3-0.45. Strict: this test "
        "starts failing (XPASS) if the prediction is repaired."
    ),
)
@seed(20252)
@PROPERTY_SETTINGS
@given(valid_configs("not-overfitting"))
def test_not_overfitting_regime_and_selection(config):
    result, p = not_overfitting_run(config)
    assert result.status == "completed", result.message
    assert p.regime == "not-overfitting"
    assert measured_regime(result) == "not-overfitting", result.final
    data = result.data
    chosen = selected_groups(result.train_logits[-1], data)
    assert np.mean(chosen[~data.noisy] == "R") >= 0.9
    assert np.mean(chosen[data.noisy] == "R") >= 0.5


VIOLATION_TABLE: dict[str, list[dict]] = {}


def _record_violation(key, config):
    flow = config.replace(engine="flow", steps=FLOW_STEPS, log_every=FLOW_STEPS, log_geometric=25)
    result = simulate(flow)
    p = predict(config.model, config.training)
    measured = measured_regime(result) if result.status == "completed" else result.status
    VIOLATION_TABLE.setdefault(key, []).append(
        {
            "predicted": p.regime,
            "measured": measured,
            "test_accuracy": result.final.get("test_accuracy", math.nan),
        }
    )


def test_single_violation_strategy_breaks_exactly_one_assumption(tmp_path):
    """Records, for each assumption, what happens when only it fails (a table, not a
    verdict): the predicted and measured regimes over a few drawn configurations."""

    def check_one(key):
        @seed(7)
        @settings(
            max_examples=2, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(single_violation(key))
        def draw(config):
            status = assumption_status(config)
            assert [k for k, holds in status.items() if not holds] == [key]
            _record_violation(key, config)

        draw()

    for key in ASSUMPTION_KEYS:
        check_one(key)
    lines = [
        "| violated | predicted regime | measured regime (1e6 steps) | test accuracy |",
        "|---|---|---|---|",
    ]
    for key, rows in VIOLATION_TABLE.items():
        for row in rows:
            lines.append(
                f"| {key} | {row['predicted']} | {row['measured']} | {row['test_accuracy']:.3f} |"
            )
    (tmp_path / "violations.md").write_text("\n".join(lines) + "\n")
    assert set(VIOLATION_TABLE) == set(ASSUMPTION_KEYS)
