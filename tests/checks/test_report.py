"""Report rows say what they test: a threshold on the share of seeds, a one-sided bound and
its direction, an interval clipped to the possible range (and saying so); the summary line
is the caller's, printed once."""

from __future__ import annotations

import pytest

from verify.checks.report import cells, console_table, markdown, summary_line


@pytest.fixture
def rows(hand_results):
    return {r.check.id: cells(r) for r in hand_results}


def test_a_regime_row_is_a_threshold_on_the_share_of_seeds(rows):
    _, _, predicted, measured, tolerance, _ = rows["benign.regime-gd"]
    assert predicted == "threshold: most seeds (> 1/2)"
    assert tolerance == "one-sided"
    assert measured == "1 [0.8668, 1]"


def test_a_one_sided_bound_says_its_direction(rows):
    _, _, predicted, _, tolerance, _ = rows["benign.delayed-generalisation"]
    assert predicted == "bound: at least 100x after fitting"
    assert tolerance == "one-sided"


def test_an_accuracy_interval_is_clipped_and_says_so(rows):
    measured = rows["benign.train-accuracy"][3]
    assert measured == "0.9969 [0.9714, 1] clipped"
    assert rows["benign.clean-gap-velocity"][3] == "2.79 [2.7, 2.88]"  # no range: as it is


def test_the_summary_line_is_not_in_the_table(hand_results):
    table = console_table(hand_results)
    assert summary_line(hand_results) not in table
    assert "threshold: most" in table and "clipped" in table


def test_markdown_rows_say_what_they_test(hand_results):
    text = markdown(
        hand_results,
        {"provenance": {"package_version": "0", "commit": "x"}, "mode": "quick", "wall_seconds": 1},
    )
    regime = next(line for line in text.splitlines() if line.startswith("| regime is benign"))
    assert "threshold: most seeds (> 1/2)" in regime and "one-sided" in regime
    assert text.count(summary_line(hand_results)) == 1


def test_the_tolerance_source_and_the_power_are_shown_when_recorded(hand_results):
    """A figure says where the tolerance came from and how far the prediction must move
    for the verdict to flip, when the result records them, and nothing when it does not."""
    import dataclasses

    from verify.checks.registry import Power
    from verify.checks.report_html import check_figure

    plain = dataclasses.replace(
        hand_results[0],
        measurement=dataclasses.replace(hand_results[0].measurement, tolerance_source=""),
        power=None,
    )
    assert "power" not in check_figure(plain) and "tolerance from" not in check_figure(plain)
    richer = dataclasses.replace(
        plain,
        measurement=dataclasses.replace(plain.measurement, tolerance_source="derived"),
        power=Power(0.25, float("nan"), 0.5, float("nan"), "fails"),
    )
    shown = check_figure(richer)
    assert "tolerance from: derived" in shown
    assert "power: verdict flips (fails) at a prediction moved by -0.25 or +: cannot flip" in shown


def test_tick_labels_tell_neighbours_apart():
    from verify.checks.report_svg import tick_labels, ticks

    labels = tick_labels(ticks(2.379, 2.397, log=False), log=False)
    assert len(set(labels)) == len(labels) and labels[0] == "2.380"
    assert tick_labels([2.0, 3.0, 4.0], log=True) == ["1e2", "1e3", "1e4"]
