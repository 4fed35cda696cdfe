"""The precision study: the naive update fails where predicted, the package's does not."""

import pytest

from verify.experiments.precision import breakdown_gap, leader_update, precision_table


def test_naive_float32_and_float64_depart_from_mp_near_17_and_37():
    # Relative error of the leader's update against 60-digit mpmath exceeds 1e-2 at:
    assert 12 <= breakdown_gap("naive_float32", 1e-2, gaps=range(1, 60)) <= 20
    assert 32 <= breakdown_gap("naive_float64", 1e-2, gaps=range(1, 60)) <= 40


def test_stable_float64_within_1e10_of_mp_up_to_gap_700():
    rows = precision_table(
        [1, 10, 17, 37, 50, 100, 200, 300, 500, 700], ["stable_float64"], reference_dps=50
    )
    assert max(row.relative_error for row in rows) <= 1e-10


def test_naive_form_needs_precision_growing_with_gap_but_stable_mp_does_not():
    rows = precision_table([100, 300], ["naive_mp60", "stable_mp30"], reference_dps=80)
    errors = {(row.gap, row.method): row.relative_error for row in rows}
    assert errors[(100, "naive_mp60")] < 1e-10  # 60 digits still enough at gap 100
    assert errors[(300, "naive_mp60")] > 0.5  # ... but not at gap 300 (about 2.3 * 60 = 138)
    assert errors[(300, "stable_mp30")] < 1e-25


def test_unknown_method_is_named():
    with pytest.raises(ValueError, match="method='float16'"):
        leader_update(10.0, "float16")


def test_naive_form_is_rescued_by_precision_raised_with_the_gap():
    # p digits fail near gap 2.3 p; raising p to gap / 2.3 + 20 restores accuracy.
    gap = 300
    digits = int(gap / 2.3) + 20
    row = precision_table([gap], [f"naive_mp{digits}"], reference_dps=digits + 40)[0]
    assert row.relative_error < 1e-15
