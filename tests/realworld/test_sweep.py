"""A sweep over eta: its table, where its verdicts change, its report section and heat map."""

from __future__ import annotations

import pytest

SLOPES = {"a": 0.45, "b": 2.5}  # test accuracy lost per unit of eta
ETAS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06)


def _row(dataset: str, eta: float, seed: int, protocol="fullbatch-adam", n=200) -> dict:
    accuracy = 0.9 + 0.01 * seed - SLOPES[dataset] * eta
    fitted = 0.5 if (dataset, eta) == ("b", 0.06) else (1.0 if eta else "nan")
    return {
        "protocol": protocol,
        "dataset": dataset,
        "n": n,
        "eta": eta,
        "seed": seed,
        "train_loss": 0.0,
        "train_accuracy": 1.0,
        "noisy_fitted": fitted,
        "test_accuracy": accuracy,
        "validation_accuracy": 0.5,
        "early_stopping_epoch": 10,
        "early_stopped_test_accuracy": 0.9 + 0.01 * seed,
        "early_stopped_noisy_fitted": 0.1,
        "test_accuracy_at_reinit": 0.5,
        "pretrained_test_accuracy": 0.9,
        "mean_max_attention": 0.3,
        "noisy_fraction": eta,
    }


@pytest.fixture
def summary():
    from verify.realworld.table import summary_rows

    runs = [_row(d, eta, s) for d in SLOPES for eta in ETAS for s in (0, 1)]
    runs += [_row("a", eta, s, "authors", 20) for eta in (0.0, 0.1, 0.2) for s in (0, 1)]
    return summary_rows(runs)


def test_a_sweep_is_a_cell_run_at_five_levels_or_more(summary):
    from verify.realworld.table import sweep_rows

    rows = sweep_rows(summary)
    assert {(r["protocol"], r["n"]) for r in rows} == {("fullbatch-adam", 200)}
    assert len(rows) == 2 * len(ETAS) and all(r["seeds"] == 2 for r in rows)
    at = {(r["dataset"], r["eta"]): r for r in rows}
    assert at["b", 0.03]["final_change"] == pytest.approx(-2.5 * 0.03)


def test_verdicts_along_eta_are_read_as_stretches(summary):
    from verify.realworld.table import sweep_rows, verdict_stretches

    rows = sweep_rows(summary)
    stretches = {d: verdict_stretches([r for r in rows if r["dataset"] == d]) for d in SLOPES}
    assert stretches["a"] == [("benign", 0.01, 0.04, 4), ("harmful", 0.05, 0.06, 2)]
    assert stretches["b"] == [("harmful", 0.01, 0.05, 5), ("not overfitting", 0.06, 0.06, 1)]


def test_a_sweep_in_a_few_numbers(summary):
    from verify.realworld.table import sweep_rows, sweep_trend

    rows = sweep_rows(summary)
    a = sweep_trend([r for r in rows if r["dataset"] == "a"])
    b = sweep_trend([r for r in rows if r["dataset"] == "b"])
    assert a["clean_test_accuracy"] == pytest.approx(0.905)
    assert a["first_drop_eta"] == 0.05 and b["first_drop_eta"] == 0.01
    assert a["slope"] == pytest.approx(-0.45) and b["slope"] == pytest.approx(-2.5)
    assert a["slope_se"] == pytest.approx(0.0, abs=1e-9)
    assert (a["levels_fitted"], b["levels_fitted"], b["levels"]) == (6, 5, 6)
    assert a["levels_fitted_early"] == 0


def test_the_report_shows_the_sweep_and_the_grid_tables_leave_it_out(summary):
    from verify.realworld.report import report_markdown
    from verify.realworld.results import GRID_ETAS
    from verify.realworld.table import sweep_rows

    grid = [e for e in summary if e["eta"] in GRID_ETAS]
    record = {"groups": 1, "runs": 1, "grid_span_seconds": 1.0}
    record["compute_seconds_summed_over_groups"] = 1.0
    text = report_markdown(grid, [], record, [], sweep_rows(summary))
    section = text[text.index("## Label noise from 0 to 0.06: `fullbatch-adam`, n = 200") :]
    assert (
        "- a (final epoch): benign at eta = 0.01 to 0.04 (4 levels); harmful at eta = " in section
    )
    assert (
        "- b (final epoch): harmful at eta = 0.01 to 0.05 (5 levels); not overfitting at" in section
    )
    assert "| a | · | B | B | B | B | H | H |" in section
    assert "| b | · | H | H | H | H | H | N |" in section
    assert "2 seeds per level" in section
    assert "| b | 0.905 | 0.01 | -2.50 ± 0.00 | 5/6 | 0/6 |" in section
    matrix = text[text.index("## Verdicts by protocol") : text.index("## Cells under")]
    assert "0.05" not in matrix  # the verdict matrix holds the grid's levels only


def test_the_heat_map_is_drawn_from_the_table(summary, tmp_path):
    pytest.importorskip("matplotlib")
    from verify.output.tables import write_table
    from verify.realworld.figures import figure_eta_heatmaps
    from verify.realworld.table import sweep_rows

    assert figure_eta_heatmaps(tmp_path, tmp_path / "figures") == []  # no sweep, no figure
    write_table(tmp_path / "realworld_eta_sweep", sweep_rows(summary), parquet=False)
    drawn = figure_eta_heatmaps(tmp_path, tmp_path / "figures")
    names = sorted(p.name for p in drawn)
    assert names == [
        "realworld_eta_heatmap_fullbatch-adam_n200.pdf",
        "realworld_eta_heatmap_fullbatch-adam_n200.png",
    ]
    assert all(p.stat().st_size > 10_000 for p in drawn)
