"""The variants' fields: declared once with a constraint and help, base values by default,
relations between fields validated with one message form."""

from __future__ import annotations

import dataclasses

import pytest

from theory.foundation.data_model import (
    DEFAULT_FFN_WIDTH,
    HEADS,
    LOSSES,
    READOUTS,
    DataModel,
    Training,
    check_variant_combination,
)
from theory.foundation.validation import InvalidParameter, parameter_fields

NEW_FIELDS = {
    DataModel: {"rho_spread": 0.0, "readout": "linear", "ffn_width": None},
    Training: {
        "loss": "logistic",
        "head": "fixed",
        "head_step": None,
        "head_init_scale": None,
        "head_n": 0,
    },
}


@pytest.mark.parametrize("settings", [DataModel, Training])
def test_new_fields_are_parameters_with_help_and_base_defaults(settings):
    specs = {spec.name: spec for spec in parameter_fields(settings)}
    for name, default in NEW_FIELDS[settings].items():
        assert specs[name].default == default
        assert specs[name].metadata["help"]
        for rejected in specs[name].metadata["constraint"].rejected_examples():
            with pytest.raises(InvalidParameter, match=f"^{name}="):
                settings(**{name: rejected})
    assert LOSSES == ("logistic", "exponential", "squared")
    assert HEADS == ("fixed", "one-step", "trained") and READOUTS == ("linear", "ffn")


@pytest.mark.parametrize(
    ("settings", "changes", "name", "allowed"),
    [
        (DataModel, {"rho_spread": 0.11}, "rho_spread", r"\[0, min\(rho, 1 - rho\)\] = \[0, 0.1\]"),
        (DataModel, {"rho": 0.9, "rho_spread": 0.2}, "rho_spread", r"= \[0, 0.1\]"),
        (DataModel, {"ffn_width": 64}, "ffn_width", "None with readout 'linear'"),
        (DataModel, {"readout": "ffn", "ffn_width": 63}, "ffn_width", "an even width"),
        (DataModel, {"readout": "ffn", "d": 2}, "d", "an integer >= 3 with readout 'ffn'"),
        (Training, {"head_step": 0.1}, "head_step", "None with head 'fixed'"),
        (Training, {"head_init_scale": 0.1}, "head_init_scale", "None with head 'fixed'"),
        (Training, {"head_n": 5}, "head_n", "0 with head 'fixed'"),
        (Training, {"head": "trained", "head_n": 5}, "head_n", "0 with head 'trained'"),
        (Training, {"head": "trained", "head_init_scale": 1.0}, "head_init_scale", "None"),
        (Training, {"head": "one-step", "head_step": 0.0}, "head_step", "a positive step"),
    ],
)
def test_relations_name_the_parameter_and_what_is_allowed(settings, changes, name, allowed):
    with pytest.raises(InvalidParameter, match=f"^{name}=.* is invalid: allowed .*{allowed}"):
        settings(**changes)


def test_allowed_combinations_are_accepted():
    assert DataModel(rho_spread=0.1).rho_spread == 0.1  # spread up to rho
    assert DataModel(readout="ffn").hidden_width == DEFAULT_FFN_WIDTH
    assert DataModel(readout="ffn", ffn_width=8).hidden_width == 8
    assert Training(head="trained", head_step=0.0).head_step == 0.0  # a frozen trained head
    one_step = Training(head="one-step", head_n=3000, head_step=0.5, head_init_scale=1e-4)
    assert (one_step.head_n, one_step.head_step) == (3000, 0.5)
    assert Training(loss="squared").loss == "squared"


def test_defaults_are_the_base_model():
    """The base settings hold the base values, so a run that gives no variant is the paper's."""
    base_model, base_training = DataModel(), Training()
    for settings, fields in (
        (base_model, NEW_FIELDS[DataModel]),
        (base_training, NEW_FIELDS[Training]),
    ):
        assert {name: getattr(settings, name) for name in fields} == fields
    assert dataclasses.replace(base_training, loss="logistic") == base_training


def test_the_ffn_readout_takes_the_fixed_head():
    ffn = DataModel(readout="ffn")
    check_variant_combination(ffn, Training())
    check_variant_combination(DataModel(), Training(head="trained"))
    for head in ("one-step", "trained"):
        with pytest.raises(InvalidParameter, match=f"^head='{head}' is invalid: allowed 'fixed'"):
            check_variant_combination(ffn, Training(head=head))
