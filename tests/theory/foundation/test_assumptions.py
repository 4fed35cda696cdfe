"""The assumptions A1-A8 as SymPy data, and the numeric twin of A5 (the step-size bound)."""

import math

import pytest
import sympy as sp

from theory.foundation.assumptions import ASSUMPTIONS, assess, symbol_values
from theory.foundation.data_model import DataModel


def test_assumption_registry_is_sympy_data():
    assert [a.key for a in ASSUMPTIONS] == [f"A{i}" for i in range(1, 9)]
    for assumption in ASSUMPTIONS:
        assert assumption.reason
        assert all(isinstance(r, sp.core.relational.Relational) for r in assumption.statement())
    values = symbol_values(2000, 20, 8, 0.1, 0.2, 20.0, 1.0, 5e-3, math.sqrt(1 / 6000), 1 / 20)
    status = {s.key: s for s in assess(values)}
    assert status["A7"].holds is False  # the paper's benign setting: noise scores beat rho
    assert status["A2"].holds and status["A1"].holds


def test_a5_numeric_twin_equals_the_sympy_relation():
    from theory.foundation.assumptions import ASSUMPTION_CONSTANTS, symbol_values_for
    from theory.foundation.data_model import Training
    from theory.foundation.stability import max_stable_step

    a5 = next(a for a in ASSUMPTIONS if a.key == "A5")
    ((lhs, rhs),) = a5.relations
    for model, training in [
        (DataModel(), Training()),
        (
            DataModel(d=500, n=7, T=5, mu_norm=3.0, nu_scale=2.0),
            Training(init="gaussian", init_scale=0.1),
        ),
    ]:
        bound = max_stable_step(model, training)
        values = symbol_values_for(model, training.replace(alpha=bound))
        assert float(lhs.subs(values)) == pytest.approx(float(rhs.subs(values)), rel=1e-12)
        assert ASSUMPTION_CONSTANTS["C_5"] == 2.0
