"""Generated from the signatures: every public function of ``verify`` checks its arguments
before any work. Each annotated argument given a value of a wrong type raises a
``TypeError`` naming the function, the argument and the type it takes; each declared
range refuses its constraint's rejected values as an ``InvalidParameter`` naming the
argument; the arrays a run takes are checked as the command line checks them."""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from pathlib import Path

import numpy as np
import pytest

import verify
from theory.foundation.validation import InvalidParameter, Validated
from verify.encoder.claims import ENCODER_CLAIMS
from verify.encoder.config import EncoderConfig, EncoderSettings
from verify.entries import ARGUMENT_CONSTRAINTS, annotations_of, matches
from verify.experiments.driver import Experiment

FUNCTIONS = [
    name
    for name in verify.__all__
    if callable(getattr(verify, name)) and not isinstance(getattr(verify, name), type)
]

TINY = {"d": 20, "n": 4, "T": 4, "eta": 0.0, "steps": 2, "test_size": 4}


def tiny_config() -> verify.RunConfig:
    return verify.preset("benign", **TINY)


class Unrelated:
    """A value of no annotated type."""

    def __repr__(self) -> str:
        return "<unrelated>"


def sample(annotation: typing.Any) -> typing.Any:
    """A value of the annotated type (the first option of a union that is not None)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        return sample(options[0])
    if origin is collections.abc.Callable:
        return lambda *args, **kwargs: None
    if origin is not None:
        return {dict: {}, collections.abc.Mapping: {}}.get(origin, [])
    if annotation in SAMPLES:
        return SAMPLES[annotation]
    if isinstance(annotation, type) and issubclass(annotation, Validated):
        return annotation()
    return BUILT.get(getattr(annotation, "__name__", ""), lambda: None)()


SAMPLES: dict[typing.Any, typing.Any] = {
    bool: True,
    int: 2,
    float: 0.5,
    str: "benign",
    Path: Path("unused"),
    np.ndarray: np.zeros(2),
}

#: Objects of the package's other classes, built when a case needs one.
BUILT: dict[str, typing.Callable[[], typing.Any]] = {
    "RunConfig": tiny_config,
    "Dataset": lambda: verify.generate(tiny_config()),
    "RunResult": lambda: verify.RunResult(tiny_config(), verify.generate(tiny_config())),
    "Experiment": lambda: Experiment("sample", verify.PrecisionSettings(), lambda *a: None),
    "Generator": lambda: np.random.default_rng(0),
    "EncoderClaim": lambda: ENCODER_CLAIMS["encoder_train_accuracy"],
    "EncoderConfig": lambda: tiny_encoder(),
    "EncoderResult": lambda: verify.train_encoder(tiny_encoder()),
}


def tiny_encoder() -> EncoderConfig:
    return EncoderConfig(run=tiny_config(), settings=EncoderSettings(mlp_dim=8))


def test_every_public_function_is_checked():
    assert len(FUNCTIONS) >= 20
    for name in FUNCTIONS:
        assert getattr(verify, name).__wrapped__ is not None, name


def wrong_type_cases() -> list[tuple[str, str]]:
    cases = []
    for name in FUNCTIONS:
        hints = annotations_of(getattr(verify, name))
        for parameter, expected in hints.items():
            if not matches(Unrelated(), expected):
                cases.append((name, parameter))
    return cases


WRONG_TYPES = wrong_type_cases()


def test_the_generated_cases_cover_every_function_with_annotations():
    covered = {name for name, _ in WRONG_TYPES}
    assert {"simulate", "predict", "write_run", "generate", "preset", "run_experiment"} <= covered
    assert len(WRONG_TYPES) >= 40


@pytest.mark.parametrize(("name", "parameter"), WRONG_TYPES, ids=lambda v: str(v))
def test_a_wrong_type_is_a_type_error_naming_the_argument(name, parameter):
    function = getattr(verify, name)
    signature = inspect.signature(function)
    hints = annotations_of(function)
    arguments = {}
    for other, spec in signature.parameters.items():
        if spec.kind in (spec.VAR_POSITIONAL, spec.VAR_KEYWORD):
            continue
        if other == parameter:
            arguments[other] = Unrelated()
        elif spec.default is inspect.Parameter.empty:
            arguments[other] = sample(hints.get(other, typing.Any))
    with pytest.raises(TypeError) as failure:
        function(**arguments)
    message = str(failure.value)
    assert message.startswith(f"{name}() argument {parameter!r} must be ")
    assert "not Unrelated (<unrelated>)" in message


RANGES = [
    (name, parameter, bad)
    for name, constraints in ARGUMENT_CONSTRAINTS.items()
    for parameter, constraint in constraints.items()
    for bad in constraint.rejected_examples()
    if bad is not None
]


@pytest.mark.parametrize(("name", "parameter", "bad"), RANGES, ids=lambda v: repr(v))
def test_an_out_of_range_argument_is_refused_naming_it(name, parameter, bad):
    function = getattr(verify, name)
    required = {
        "assumption_status": {"config": tiny_config()},
        "breakdown_gap": {"method": "naive_float64"},
        "precision_table": {"gaps": [5.0], "methods": ["naive_float64"]},
    }[name]
    with pytest.raises((InvalidParameter, TypeError)) as failure:
        function(**{**required, parameter: bad})
    message = str(failure.value)
    if isinstance(failure.value, InvalidParameter):
        assert message.startswith(f"{parameter}=") and " is invalid: allowed " in message
    else:
        assert f"argument {parameter!r} must be " in message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: verify.simulate(None), "simulate() argument 'config' must be RunConfig"),
        (lambda: verify.simulate("benign"), "verify.preset(name) builds"),
        (lambda: verify.simulate({"d": 10}), "RunConfig.build(**flat_fields)"),
        (lambda: verify.predict(None), "predict() argument 'config' must be RunConfig"),
        (lambda: verify.write_run(None, "out"), "write_run() argument 'result' must be"),
        (lambda: verify.main("run"), "main() argument 'argv' must be Sequence or None"),
        (lambda: verify.simulate(tiny_config(), progress="yes"), "'progress' must be bool"),
    ],
)
def test_the_issue_s_calls_name_the_argument(call, message):
    with pytest.raises(TypeError, match=None) as failure:
        call()
    assert message in str(failure.value)


@pytest.mark.parametrize(
    ("W0", "message"),
    [
        (np.zeros((20, 20)), "W0='all zeros' is invalid: allowed a nonzero matrix"),
        (np.ones((3, 3)), "W0='shape (3, 3)' is invalid: allowed an array of shape (20, 20)"),
        (np.full((20, 20), np.nan), "W0='non-finite entries' is invalid"),
        ([[1.0]], "W0='list' is invalid: allowed a NumPy array"),
    ],
)
def test_W0_is_checked_as_the_command_line_checks_it(W0, message):
    with pytest.raises((InvalidParameter, TypeError)) as failure:
        verify.simulate(tiny_config(), W0=W0)
    assert message in str(failure.value) or "argument 'W0' must be" in str(failure.value)


def test_data_is_checked_against_the_configuration():
    config = tiny_config()
    data = verify.generate(config.replace(d=30))
    with pytest.raises(InvalidParameter, match=r"^data\.X_train='shape \(4, 4, 30\)'"):
        verify.simulate(config, data=data)
    good = verify.generate(config)
    flipped = type(good)(**{**good.__dict__, "y_train": good.y_train * 2})
    with pytest.raises(InvalidParameter, match=r"^data\.y_train='other values'"):
        verify.simulate(config, data=flipped)


def test_tiny_initial_scales_are_refused_before_any_division():
    with pytest.raises(InvalidParameter, match=r"^init_scale=1e-300 is invalid: allowed a scale"):
        verify.preset("benign", init_scale=1e-300)


def test_a_missing_history_and_an_unwritable_place_name_the_argument(tmp_path):
    with pytest.raises(InvalidParameter, match=r"^path='.*missing.csv' is invalid"):
        verify.read_history(tmp_path / "missing.csv")
    (tmp_path / "file").write_text("x")
    result = verify.simulate(tiny_config())
    with pytest.raises(InvalidParameter, match=r"^out='.*file' is invalid: allowed a directory"):
        verify.write_run(result, tmp_path / "file")
