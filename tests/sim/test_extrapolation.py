r"""The Gragg-Bulirsch-Stoer integrator on ODEs with known solutions, against the error
model the flow precision test states for it: :math:`S` accepted steps at tolerance
:math:`\tau` leave at most :math:`S\tau(1 + \max|y|)`."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from verify.sim.extrapolation import Extrapolation
from verify.sim.fixed_point import FixedPoint

DPS = 40


def integrate(right_side, y0: float, until: float, tolerance: float, columns=None):
    r""":math:`y(\text{until})` of :math:`y' = f(s, y)`, :math:`y(0) = y_0` (one component),
    and the accepted steps."""
    with mpmath.workdps(DPS):
        fixed = FixedPoint.at_working_precision()

        def derivative(s, y, c):
            return fixed.from_mpf(np.array([c * right_side(s, fixed.to_mpf(y)[0])]))

        start = fixed.from_mpf(np.array([mpmath.mpf(y0)]))
        solver = Extrapolation(derivative, mpmath.mpf(0), start, tolerance, fixed, columns)
        while solver.s < until:
            solver.advance(mpmath.mpf(until))
        return fixed.to_mpf(solver.y)[0], solver.accepted


#: (right side, y(0), end, exact solution at the end, evaluated at the working precision)
CASES = {
    "y' = y": (lambda s, y: y, 1.0, 3.0, lambda: mpmath.exp(3)),
    "y' = -y^2": (lambda s, y: -(y**2), 1.0, 50.0, lambda: mpmath.mpf(1) / 51),
    "y' = cos(s) y": (lambda s, y: mpmath.cos(s) * y, 1.0, 9.0, lambda: mpmath.exp(mpmath.sin(9))),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tolerance", [1e-12, 1e-20])
def test_error_within_the_stated_model(case, tolerance):
    right_side, y0, until, solution = CASES[case]
    with mpmath.workdps(DPS):
        value, steps = integrate(right_side, y0, until, tolerance)
        exact = solution()
        error = float(abs(value - exact))
    bound = steps * tolerance * (1 + max(abs(y0), float(abs(exact))))
    assert error <= bound, (error, bound, steps)


def test_too_few_columns_take_more_steps_for_the_same_tolerance():
    """The order matters: two columns (order 4) need many more steps than the default."""
    right_side, y0, until, _ = CASES["y' = y"]
    _, default = integrate(right_side, y0, until, 1e-10)
    _, low_order = integrate(right_side, y0, until, 1e-10, columns=2)
    assert low_order > 10 * default


def test_an_integrator_ignoring_its_error_estimate_is_caught(monkeypatch):
    """Every step accepted (the step size then grows fourfold a step): the stated bound
    must fail."""
    monkeypatch.setattr(Extrapolation, "error_ratio", lambda self, high, low: 0.0)
    with pytest.raises(AssertionError):
        test_error_within_the_stated_model("y' = cos(s) y", 1e-12)
