"""``python -m verify predict`` and ``verify.predict``: the theory's regime, accuracies and
both boundaries for a configuration at a horizon, without training."""

import dataclasses
import functools
import json
import math
import subprocess
import sys

import pytest

import verify
from theory.foundation.validation import InvalidParameter
from theory.stage2.horizon import gd_horizon
from theory.stage2.predictions import benign_not_boundary, harmful_benign_boundary
from verify.cli import main
from verify.sim.config import preset


@functools.cache
def forecast(name: str, steps: int = 1000, **changes):
    return verify.predict(preset(name, **changes), steps)


def _json(capsys, arguments):
    assert main(["predict", *arguments, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_the_regime_boundaries_configuration_and_provenance(capsys):
    record = _json(capsys, ["--preset", "benign", "--d", "1500"])
    assert record["regime"] in ("harmful", "benign", "not-overfitting")
    assert record["regime_at_horizon"] in ("harmful", "benign", "not-overfitting")
    for key in (
        "boundary_harmful_benign_mu",
        "boundary_harmful_benign_error",
        "boundary_benign_not_mu",
        "boundary_benign_not_error",
        "train_accuracy",
        "test_accuracy",
        "test_accuracy_error",
        "test_accuracy_argmax",
        "uniform_test_accuracy",
    ):
        assert isinstance(record[key], float) and record[key] >= 0, key
    for key in ("train_accuracy", "test_accuracy", "uniform_test_accuracy"):
        assert record[key] <= 1, key
    assert record["boundary_harmful_benign_mu"] < record["boundary_benign_not_mu"]
    assert record["steps"] == 1000 and isinstance(record["steps"], int)
    assert record["config"]["model"]["d"] == 1500 and record["config"]["model"]["mu_norm"] == 20
    assert record["provenance"]["package_version"] and "commit" in record["provenance"]
    assert "reconstruction" in record["note"]


@pytest.mark.parametrize("name", ["harmful", "benign", "not-overfitting"])
def test_each_preset_is_predicted_in_its_own_regime(name):
    assert forecast(name).regime == name


def test_regimes_by_the_boundaries_at_the_paper_horizon():
    """Harmful and benign presets lie in their regimes by the stage-2 boundaries too; the
    not-overfitting preset (||mu|| = 100 at d = 1000) lies at the 1000-step benign |
    not-overfitting boundary of the GD map, within its error (the registered
    disagreement 'not-overfitting.regime-gd': the seeds split), far below the stage-1
    side's claim."""
    assert forecast("harmful").regime_at_horizon == "harmful"
    assert forecast("benign").regime_at_horizon == "benign"
    late = forecast("not-overfitting")
    assert abs(late.boundary_benign_not_mu / 100.0 - 1) <= late.boundary_benign_not_error
    assert late.dynamics.startswith("mean-field GD map")


def test_gd_and_flow_engines_get_their_own_dynamics():
    """A GD engine is predicted by the GD map, a flow engine by the flow: at d = 1e5,
    n = 20 (alpha ||mu||^2 in the thousands at the benign | not boundary) GD's boundary
    lies far below the flow's (the package's GD sweep: 527 against the flow's 1913)."""
    gd = forecast("benign", d=10**5, n=20, init="gaussian", engine="dfree")
    flow = forecast("benign", d=10**5, n=20, init="gaussian", engine="dfree-flow")
    assert flow.dynamics == "mean-field gradient flow"
    assert flow.boundary_benign_not_mu > 1500
    assert gd.boundary_benign_not_band is not None  # chaotic: abstains with its band
    assert gd.boundary_benign_not_band[1] < 0.4 * flow.boundary_benign_not_mu


def test_no_number_where_the_gd_map_is_chaotic(capsys):
    """Where the GD map's outcome flips with ||mu|| over a band wider than 25%, the boundary
    is null in JSON with the reason, and the text says so."""
    arguments = ["--preset", "benign", "--d", "100000", "--init", "gaussian"]
    record = _json(capsys, [*arguments, "--engine", "dfree"])
    assert record["boundary_benign_not_mu"] is None
    assert "chaotic" in record["boundary_benign_not_validity"]
    assert len(record["boundary_benign_not_band"]) == 2
    assert main(["predict", *arguments, "--engine", "dfree"]) == 0
    assert (
        "benign | not-overfitting at 1000 steps: no prediction (band [" in capsys.readouterr().out
    )


def test_the_benign_not_boundary_moves_out_with_the_horizon():
    values = [forecast("benign", steps).boundary_benign_not_mu for steps in (10**3, 10**6, 10**12)]
    assert values[0] < values[1] < values[2]


def test_the_harmful_benign_boundary_grows_with_d():
    values = [forecast("benign", d=d).boundary_harmful_benign_mu for d in (500, 2000, 8000)]
    assert values[0] < values[1] < values[2]


def test_the_printed_boundaries_are_the_theory_functions_values(capsys):
    arguments = ["--preset", "benign", "--d", "1200", "--mu-norm", "12", "--steps", "3000"]
    record = _json(capsys, arguments)
    config = preset("benign", d=1200, mu_norm=12, steps=3000)
    model, training = config.model, config.training
    result = gd_horizon(model, training, 3000)
    harmful, benign = result.harmful_benign, result.benign_not
    assert record["boundary_benign_not_error_source"] == benign.error_source
    assert record["boundary_harmful_benign_mu"] == harmful.value
    assert record["boundary_harmful_benign_error"] == harmful.model_error
    assert record["boundary_benign_not_mu"] == benign.value
    assert record["boundary_benign_not_error"] == benign.model_error
    assert main(["predict", *arguments]) == 0
    text = capsys.readouterr().out
    assert f"harmful | benign at 3000 steps: ||mu|| = {harmful.value:.4g}" in text
    assert f"benign | not-overfitting at 3000 steps: ||mu|| = {benign.value:.4g}" in text
    # a flow engine's boundaries are the flow's
    flow = _json(capsys, [*arguments, "--engine", "flow"])
    assert (
        flow["boundary_harmful_benign_mu"] == harmful_benign_boundary(model, training, 3000).value
    )
    assert flow["boundary_benign_not_mu"] == benign_not_boundary(model, training, 3000).value


def test_the_report_states_each_error_and_the_reconstruction(capsys):
    assert main(["predict", "--preset", "harmful"]) == 0
    text = capsys.readouterr().out
    p = forecast("harmful")
    assert f"||mu|| = {p.boundary_harmful_benign_mu:.4g} +- " in text
    assert f"{p.test_accuracy:.4f} +- {p.test_accuracy_error:.4f}" in text
    assert f"uniform attention (baseline): {p.uniform_test_accuracy:.4f}" in text
    assert "predicted regime (Theorem 4.1, stage 1): harmful" in text
    assert sum("reconstruction" in line for line in text.splitlines()) == 1


@pytest.mark.parametrize(
    ("arguments", "name"),
    [(["--steps", "0"], "steps"), (["--eta", "0"], "eta"), (["--d", "1"], "d")],
)
def test_bad_input_is_one_line_and_exit_2(capsys, arguments, name):
    assert main(["predict", "--preset", "benign", *arguments]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1
    assert lines[0].startswith(f"error: {name}=") and " is invalid: allowed " in lines[0]


def test_the_api_returns_a_frozen_record_and_checks_its_horizon():
    p = forecast("benign")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.regime = "harmful"  # type: ignore[misc]
    assert verify.predict is verify.predict  # the lazy export stays the function
    with pytest.raises(InvalidParameter) as refused:
        verify.predict(preset("benign"), 0)
    assert "steps=0" in str(refused.value)
    assert p.boundary_benign_not_error_source.startswith("derived: ")
    assert p.boundary_benign_not_validity == "" and p.boundary_benign_not_band is None


def test_predict_imports_no_sympy_and_no_scipy():
    """The prediction's path is SymPy-free (the stage-1 rates are generated kernels) and,
    for a GD engine, SciPy-free (its roots, quadratures and normal distribution function
    are the package's own: importing SciPy would cost the command more than the
    prediction)."""
    probe = (
        "import sys; import verify; from verify.sim.config import preset; "
        "verify.predict(preset('benign')); verify.predict(preset('harmful')); "
        "print(sorted(m for m in ('scipy', 'sympy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_registering_predict_imports_no_numeric_library():
    probe = (
        "import sys; from verify.cli.common import Parser; from verify.cli import predict; "
        "predict.register(Parser().add_subparsers(), ['predict']); "
        "print(sorted(m for m in ('numpy', 'scipy', 'sympy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_regime_between_the_boundaries():
    from verify.prediction import regime_between

    assert regime_between(5.0, 7.0, 100.0) == "harmful"
    assert regime_between(7.0, 7.0, 100.0) == "benign"
    assert regime_between(100.0, 7.0, 100.0) == "not-overfitting"
    assert regime_between(200.0, math.nan, 100.0) == "not-overfitting"
    assert regime_between(5.0, math.nan, 100.0) == "undetermined"
    assert regime_between(5.0, 7.0, math.nan) == "undetermined"


def test_a_missing_boundary_is_null_in_strict_json():
    missing = dataclasses.replace(forecast("benign"), boundary_benign_not_mu=math.nan)
    record = json.loads(json.dumps(missing.as_dict(), allow_nan=False))
    assert record["boundary_benign_not_mu"] is None
    assert record["boundary_harmful_benign_mu"] == forecast("benign").boundary_harmful_benign_mu


def test_a_boundary_below_the_grid_is_said_in_words():
    """A boundary of 0 (every ||mu|| of the grid above it) is not printed as a number
    with a 0% error; a found boundary is."""
    from verify.cli.predict import boundary_line

    below = boundary_line("benign | not-overfitting", "1000", 0.0, 0.0, "", None)
    assert "below every ||mu|| of the grid" in below and "+-" not in below
    found = boundary_line("benign | not-overfitting", "1000", 299.2, 0.2, "", None)
    assert "||mu|| = 299.2" in found
