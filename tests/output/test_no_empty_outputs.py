"""No empty or meaningless output called success: a table without rows is not written (the
record lists it), a figure with nothing drawn is not saved, a protocol run under an
override (``authors[epochs=3]``) keeps its column, and the boundary tables say n/a where
nothing is predicted (never 0, never a zero-width interval)."""

from __future__ import annotations

import json
import math

from verify.experiments.boundaries import prediction_markdown, shown
from verify.experiments.driver import ExperimentOutput, write_tables
from verify.experiments.fits import bootstrap_exponent
from verify.plots.style import pyplot, save_figure


def test_an_empty_table_is_not_written_and_an_old_one_goes(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "empty.csv").write_text("stale\n")
    output = ExperimentOutput(tables={"full": [{"a": 1.0}], "empty": []})
    written = write_tables(tmp_path, output)
    assert [p.name for p in written if p.suffix == ".csv"] == ["full.csv"]
    assert not (tmp_path / "tables" / "empty.csv").exists()


def test_a_figure_with_nothing_drawn_is_not_saved(tmp_path, capsys):
    plt = pyplot()
    figure, axis = plt.subplots()
    axis.set(xlabel="x", ylabel="y")
    assert save_figure(figure, tmp_path, "empty") == []
    assert not list(tmp_path.iterdir()) and "no data to draw" in capsys.readouterr().err


def test_a_protocol_run_under_an_override_keeps_its_column():
    from verify.realworld.results import protocol_columns
    from verify.realworld.table import protocol_table

    entry = {
        "protocol": "authors[epochs=3]",
        "dataset": "mnist",
        "n": 20,
        "eta": 0.1,
        "final_change": -0.05,
        "final_change_se": 0.01,
        "noisy_fitted": 0.5,
        "final_verdict": "harmful",
    }
    columns = protocol_columns([entry])
    assert columns[-1] == "authors[epochs=3]"
    rows = protocol_table([entry], columns)
    assert rows and rows[0]["authors[epochs=3]_verdict"] == "harmful"


def test_nothing_predicted_reads_n_a_and_one_seed_gives_no_interval():
    row = {
        "kind": "harmful|benign",
        "rule": "accuracy",
        "d": 1000,
        "n": 20,
        "mu_star_geomean": 12.0,
        "log_mu_star_sd": math.nan,
        "predicted": math.nan,
        "model_error": math.nan,
        "relative_error": math.nan,
        "bracketed_seeds": 1,
        "seeds": 1,
    }
    text = prediction_markdown([row])
    line = text.strip().splitlines()[-1]
    assert "| n/a | n/a | n/a |" in line and "nan" not in line and "| 0 |" not in line
    assert shown(0.25, ".2f") == "0.25" and shown(math.nan, ".2f") == "n/a"
    assert all(math.isnan(v) for v in bootstrap_exponent({100.0: [2.0], 200.0: [3.0]}))
    low, high = bootstrap_exponent({100.0: [2.0, 2.2], 200.0: [3.0, 3.1]})
    assert low < high


def test_the_record_lists_the_empty_tables(tmp_path):
    from verify.experiments.driver import Experiment, run_experiment
    from verify.experiments.settings import PrecisionSettings

    experiment = Experiment(
        "tiny",
        PrecisionSettings(),
        lambda store, executor, progress: ExperimentOutput(tables={"rows": [], "more": [{"x": 1}]}),
    )
    record = run_experiment(experiment, tmp_path, progress=False)
    assert record["empty_tables"] == ["rows"]
    assert json.loads((tmp_path / "tiny.json").read_text())["empty_tables"] == ["rows"]
