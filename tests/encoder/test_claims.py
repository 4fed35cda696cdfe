"""The claim measures: each claim holds on rows that satisfy it and fails on wrong rows."""

import math

import pytest

from verify.encoder.claims import (
    ENCODER_CLAIMS,
    accuracy,
    claim_verdict,
    regime_agreement,
    selection_share,
)


def benign_rows(**values):
    """Three seeds at the benign setting with residuals, every claimed quantity good
    (overridden by ``values``), plus a run at another setting that must be ignored."""
    good = {
        "select_clean_R": 0.95,
        "select_noisy_W-": 1.0,
        "select_test_R": 0.9,
        "train_accuracy": 1.0,
        "test_accuracy": 0.99,
        "regime": "benign",
        "bare_regime": "benign",
    }
    rows = []
    for seed, jitter in enumerate((0.0, 0.01, -0.01)):
        row = {"d": 2000, "mu_norm": 20.0, "residual": True, "seed": seed}
        for key, value in {**good, **values}.items():
            row[key] = value if isinstance(value, str) or value in (0.0, 1.0) else value + jitter
        rows.append(row)
    rows.append({**rows[0], "d": 5000, "mu_norm": 5.0, "select_clean_R": 0.0, "regime": "harmful"})
    return rows


WRONG = {
    "encoder_clean_select_relevant": {"select_clean_R": 0.2},
    "encoder_noisy_select_weak_opposite": {"select_noisy_W-": 0.0},
    "encoder_train_accuracy": {"train_accuracy": 0.95},
    "encoder_test_accuracy": {"test_accuracy": 0.7},
    "encoder_test_select_relevant": {"select_test_R": 0.3},
}


@pytest.mark.parametrize("name", sorted(ENCODER_CLAIMS))
def test_each_claim_holds_on_good_rows_and_fails_on_wrong_ones(name):
    assert set(WRONG) == set(ENCODER_CLAIMS)
    holds, measure = claim_verdict(ENCODER_CLAIMS[name], benign_rows())
    assert holds, (name, measure)
    assert len(measure.samples) == 3  # the other setting is not counted
    fails, wrong = claim_verdict(ENCODER_CLAIMS[name], benign_rows(**WRONG[name]))
    assert not fails, (name, wrong)


def test_measures_report_estimate_interval_and_samples():
    rows = benign_rows()
    share = selection_share(rows, "clean", "R")
    assert share.estimate == pytest.approx(0.95)
    assert share.interval[0] < 0.95 < share.interval[1]
    assert accuracy(rows, "train").interval == (1.0, 1.0)
    missing = selection_share(rows, "clean", "R", {"d": 7, "mu_norm": 1.0, "residual": True})
    assert math.isnan(missing.estimate) and missing.samples == ()
    assert not claim_verdict(ENCODER_CLAIMS["encoder_clean_select_relevant"], [])[0]


def test_regime_agreement_counts_every_setting():
    rows = benign_rows()
    rows[-1]["bare_regime"] = "benign"  # the (5000, 5) run disagrees
    agreement = regime_agreement(rows)
    assert agreement.estimate == pytest.approx(3 / 4)
    assert agreement.samples == (1.0, 1.0, 1.0, 0.0)
    assert 0 < agreement.interval[0] < 0.75 < agreement.interval[1] <= 1
