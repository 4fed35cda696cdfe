"""The boundary sweep's harmful|benign rules (selection by the mechanism, accuracy as the
practical view), its settings' validation, and its predicted-vs-measured rows."""

import math
import subprocess
import sys

import pytest

from theory.foundation.validation import InvalidParameter
from verify.experiments.boundaries import (
    BENIGN_NOT,
    HARMFUL_BENIGN,
    Bracket,
    summary_rows,
    upper_side,
)
from verify.experiments.boundary_theory import Prediction
from verify.experiments.settings import BoundarySettings
from verify.experiments.workers import final_state

#: d = 1e8, n = 20, ||mu|| = 100 after 1000 d-free GD steps: about 32% of the test
#: sequences select their relevant token (harmful by the mechanism) while the test
#: accuracy is above 0.99 (benign in the practical view); every noisy label is fitted.
KNOWN = {"d": 10**8, "n": 20, "mu": 100.0}


@pytest.fixture(scope="module")
def known_run():
    settings = BoundarySettings(engine="dfree", steps=1000)
    config = settings.config(KNOWN["d"], KNOWN["n"], KNOWN["mu"], seed=0)
    return final_state({"config": config.to_dict()})


def test_known_run_is_harmful_by_selection_and_benign_by_accuracy(known_run):
    assert 0.2 < known_run["population_test_selects_relevant"] < 0.45
    assert known_run["population_test_accuracy"] > 0.95
    assert known_run["noisy_fitted"] == 1.0
    selection = BoundarySettings(engine="dfree", steps=1000)
    accuracy = BoundarySettings(engine="dfree", steps=1000, rule="accuracy")
    assert not upper_side(HARMFUL_BENIGN, known_run, selection)
    assert upper_side(HARMFUL_BENIGN, known_run, accuracy)
    assert not upper_side(BENIGN_NOT, known_run, selection)  # overfits


def test_a_lower_selection_level_or_higher_accuracy_level_flips_the_run(known_run):
    lower = BoundarySettings(engine="dfree", steps=1000, selection_level=0.2)
    assert upper_side(HARMFUL_BENIGN, known_run, lower)
    stricter = BoundarySettings(engine="dfree", steps=1000, rule="accuracy", test_threshold=1.0)
    assert not upper_side(HARMFUL_BENIGN, known_run, stricter)


def test_the_selection_rule_reads_the_population_before_the_test_set():
    row = {"population_test_selects_relevant": 0.6, "test_selects_relevant": 0.1}
    settings = BoundarySettings()
    assert upper_side(HARMFUL_BENIGN, row, settings)
    assert not upper_side(HARMFUL_BENIGN, {"test_selects_relevant": 0.1}, settings)


@pytest.mark.parametrize(
    ("changes", "name"),
    [
        ({"engine": "dense"}, "engine"),
        ({"engine": "dfree", "steps": 10**12}, "steps"),
        ({"engine": "reduced", "steps": 10**8}, "steps"),
        ({"rule": "loss"}, "rule"),
        ({"selection_level": 1.5}, "selection_level"),
        ({"bracket_units": "log"}, "bracket_units"),
        ({"harmful_bracket": (4.0, 2.0)}, "harmful_bracket"),
    ],
)
def test_settings_reject_bad_values(changes, name):
    with pytest.raises(InvalidParameter) as error:
        BoundarySettings(**changes)
    assert error.value.name == name


def test_flow_horizons_and_dfree_configs():
    settings = BoundarySettings(engine="dfree-flow", steps=10**12, bracket_units="scaled")
    config = settings.config(10**8, 20, 50.0, 3)
    assert config.training.init == "gaussian" and config.training.steps == 10**12
    assert config.recording.population == "final" and config.recording.test_size == 0
    low, high = settings.bracket("harmful", 10**8, 20)
    assert low == pytest.approx(1.0 * (5e6) ** 0.25) and high == pytest.approx(64 * (5e6) ** 0.25)
    low, _ = settings.bracket("overfit", 10**8, 20)
    assert low == pytest.approx(8.0 * math.sqrt(5e6))
    assert BoundarySettings().config(100, 20, 5.0, 0).training.init == "uniform"


def test_the_command_line_rejects_a_gd_horizon_of_1e12_in_one_line(tmp_path):
    command = [sys.executable, "-m", "verify", "sweep-boundaries", "--engine", "dfree"]
    command += ["--steps", "1e12", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "steps" in done.stderr


def test_summary_puts_the_prediction_and_relative_error_next_to_the_measurement():
    brackets = [Bracket(HARMFUL_BENIGN, "d", 100, 20, s, 3.0, 3.0 * 1.21, True) for s in range(3)]
    predictions = {(HARMFUL_BENIGN, 100, 20): Prediction(3.0, 0.1)}
    (row,) = summary_rows(brackets, predictions, "selection")
    assert row["mu_star_geomean"] == pytest.approx(3.3)
    assert row["relative_error"] == pytest.approx(0.1)
    assert row["predicted"] == 3.0 and row["rule"] == "selection"
    (missing,) = summary_rows(brackets, {}, "accuracy")
    assert math.isnan(missing["relative_error"])


def test_markdown_cells_keep_the_boundary_names_in_one_column():
    from verify.output.tables import markdown_table

    text = markdown_table(("boundary", "b"), [(HARMFUL_BENIGN, 0.25)])
    assert text.splitlines()[-1] == r"| harmful\|benign | 0.25 |"


def test_a_run_that_ended_early_stops_its_bracket_instead_of_being_classified():
    from verify.experiments.boundaries import _completed

    bracket = Bracket(BENIGN_NOT, "d", 100, 20, 0, 2.0, 8.0)
    done = {"status": "completed", "noisy_fitted": 1.0}
    evaluated = {(100, 20, 2.0, 0): done, (100, 20, 8.0, 0): dict(done)}
    assert _completed(bracket, evaluated, 0) and bracket.bracketed is None
    evaluated[(100, 20, 8.0, 0)] = {"status": "failed", "message": "the flow solver failed"}
    assert not _completed(bracket, evaluated, 0)
    assert bracket.bracketed is False and "failed" in bracket.note
