r"""Discrete (GD) version of the quadrature, with a rigorous per-step error bound.

GD on a gap driven at rate :math:`c` with step :math:`\alpha` is the recursion
:math:`x_{k+1} = x_k + \delta_k`, :math:`\delta_k = \alpha c / g'(x_k)`. Taylor with
Lagrange remainder (:math:`g'' = 2\sinh(x - \log T)`), for some :math:`\xi_k` between
:math:`x_k` and :math:`x_{k+1}`:

.. math:: g(x_{k+1}) - g(x_k) - \alpha c = \tfrac12 g''(\xi_k)\,\delta_k^2
          = \sinh(\xi_k - \log T)\,\delta_k^2 .

With :math:`u_k = x_k - \log T`, :math:`|\sinh| \le \cosh` and
:math:`\cosh(a+b) \le e^{|b|}\cosh a`:

.. math:: |g(x_{k+1}) - g(x_k) - \alpha c|
          \le \frac{\alpha^2 c^2\, e^{|\delta_k|} \cosh u_k}{4 (1 + \cosh u_k)^2}
          \le \frac{\alpha^2 c^2\, e^{|\alpha c|/4}}{16},

using :math:`|\delta_k| \le |\alpha c|/4` (:math:`g' \ge 4`) and
:math:`\max_{t\ge1} t/(1+t)^2 = 1/4`. (The brief's uniform constant 1/8 is valid but a
factor 2 loose.) Because sinh is increasing, the remainder is also enclosed two-sidedly:
:math:`\sinh(\xi_k - \log T)\,\delta_k^2 \in \delta_k^2\,[\sinh(\min(u_k, u_k+\delta_k)),
\sinh(\max(u_k, u_k+\delta_k))]`, which keeps the signs (and cancellations) of the sum.

Summing, :math:`|g(x_k) - g(x_0) - k\alpha c| \le E_k = \sum_{j<k} (\text{per-step bound})`,
and by the mean value theorem :math:`|x_k - x(k\alpha)| \le E_k / m_k` with
:math:`x(\tau) = g^{-1}(g(x_0) + c\tau)` and :math:`m_k = \min g'` on the interval between
:math:`x_k` and :math:`x(k\alpha)` (:math:`= 2 + 2\cosh(\mathrm{dist}(\log T, \cdot))`).

Reconstruction (this package's own derivation; the paper's exact statement is not available).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from theory.foundation.numerics import finite_array, reciprocal_two_plus_two_cosh
from theory.foundation.proof import RECONSTRUCTION, Derivation
from theory.foundation.symbols import T as T_symbol
from theory.foundation.symbols import alpha as alpha_symbol
from theory.foundation.symbols import c as c_symbol
from theory.foundation.symbols import x as x_symbol
from theory.foundation.validation import Integer, Real
from theory.quadrature.g import g_expression, g_prime_expression, quadrature_gap

# --------------------------------------------------------------------------- symbolic


def gd_taylor_remainder_residuals() -> list[sp.Expr]:
    r"""Proof of the two facts behind the per-step defect: (i) the GD step makes the
    first-order Taylor term exactly :math:`\alpha c`, :math:`g'(x)\,\delta - \alpha c = 0` for
    :math:`\delta = \alpha c/g'(x)`; (ii) :math:`\tfrac12 g''(x) = \sinh(x - \log T)`, so the
    Lagrange remainder is :math:`\sinh(\xi - \log T)\,\delta^2`. Returns 2 residuals (0)."""
    step = alpha_symbol * c_symbol / g_prime_expression(x_symbol)
    first_order = sp.simplify(g_prime_expression(x_symbol) * step - alpha_symbol * c_symbol)
    half_second = sp.simplify(
        sp.diff(g_expression(x_symbol), x_symbol, 2) / 2 - sp.sinh(x_symbol - sp.log(T_symbol))
    )
    return [first_order, half_second]


def saturation_peak_residual() -> sp.Expr:
    r"""Proof that :math:`t/(1+t)^2` (:math:`t = \cosh u \ge 1`) has derivative
    :math:`(1-t)/(1+t)^3 \le 0`, so its maximum on :math:`t \ge 1` is 1/4 at t = 1 (the step
    from the per-step bound to the uniform :math:`\alpha^2c^2e^{|\alpha c|/4}/16`).
    Returns the simplified derivative residual (0)."""
    t = sp.Symbol("t", positive=True)
    return sp.simplify(sp.diff(t / (1 + t) ** 2, t) - (1 - t) / (1 + t) ** 3)


# --------------------------------------------------------------------------- numeric


def _shifted_gap_factors(shifted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    decay = np.exp(-np.abs(shifted))
    return decay, (1.0 + decay) ** 4


def gd_recursion(
    x0: np.ndarray | float,
    c: np.ndarray | float,
    alpha: np.ndarray | float,
    steps: int,
    T: float,
) -> np.ndarray:
    r"""The GD gap recursion :math:`x_{k+1} = x_k + \alpha c / g'(x_k)`,
    :math:`g'(x) = 2 + 2\cosh(x - \log T)` (overflow-free), vectorised over broadcast
    ``x0, c, alpha``. Returns :math:`x_0, \dots, x_{steps}` stacked on axis 0.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = Real(0.0).check("T", T)
    steps = Integer(0).check("steps", steps)
    x0, c, alpha = np.broadcast_arrays(
        finite_array("x0", x0),
        finite_array("c", c),
        finite_array("alpha", alpha),
    )
    log_T = math.log(T)
    drive = alpha * c
    trajectory = np.empty((steps + 1,) + x0.shape, dtype=np.float64)
    trajectory[0] = x0
    current = x0.astype(np.float64, copy=True)
    for step in range(steps):
        current = current + drive * reciprocal_two_plus_two_cosh(current - log_T)
        trajectory[step + 1] = current
    return trajectory


def gd_step_defect_bound(
    gap: np.ndarray | float, c: np.ndarray | float, alpha: np.ndarray | float, T: float
) -> np.ndarray:
    r"""Per-step bound :math:`|g(x_{k+1}) - g(x_k) - \alpha c| \le
    \frac{\alpha^2 c^2 e^{|\delta_k|}\cosh u_k}{4(1+\cosh u_k)^2}`, :math:`u_k = x_k - \log T`,
    :math:`\delta_k = \alpha c/g'(x_k)`; evaluated overflow-free as
    :math:`\alpha^2c^2 e^{|\delta|}\,\tfrac12(1 + e^{-2|u|})\,e^{-|u|}/(1 + e^{-|u|})^4`.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = Real(0.0).check("T", T)
    shifted = finite_array("gap", gap) - math.log(T)
    drive = finite_array("c", c) * finite_array("alpha", alpha)
    decay, denominator = _shifted_gap_factors(shifted)
    step = drive * reciprocal_two_plus_two_cosh(shifted)
    return drive**2 * np.exp(np.abs(step)) * 0.5 * (1.0 + decay**2) * decay / denominator


def gd_step_defect_uniform_bound(c: np.ndarray | float, alpha: np.ndarray | float) -> np.ndarray:
    r"""Uniform per-step bound :math:`\alpha^2 c^2 e^{|\alpha c|/4}/16` (any gap, any T).

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    drive = finite_array("c", c) * finite_array("alpha", alpha)
    return drive**2 * np.exp(np.abs(drive) / 4.0) / 16.0


def _scaled_sinh(shifted_end: np.ndarray, shifted_start: np.ndarray) -> np.ndarray:
    r""":math:`\sinh(w)\,\phi(u)^2`, :math:`\phi(u) = 1/(2+2\cosh u)`, overflow-free."""
    magnitude = np.abs(shifted_end)
    decay_start, denominator = _shifted_gap_factors(shifted_start)
    growth = np.exp(magnitude - 2.0 * np.abs(shifted_start))
    return np.sign(shifted_end) * 0.5 * (-np.expm1(-2.0 * magnitude)) * growth / denominator


def gd_step_defect_enclosure(
    gap: np.ndarray | float, c: np.ndarray | float, alpha: np.ndarray | float, T: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Two-sided enclosure of the exact per-step defect
    :math:`g(x_{k+1}) - g(x_k) - \alpha c = \sinh(\xi_k - \log T)\,\delta_k^2`:
    :math:`[\delta_k^2 \sinh(\min(u_k, u_k + \delta_k)),\ \delta_k^2\sinh(\max(u_k, u_k +
    \delta_k))]` (sinh is increasing). Returns ``(low, high)``.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = Real(0.0).check("T", T)
    shifted = finite_array("gap", gap) - math.log(T)
    drive = finite_array("c", c) * finite_array("alpha", alpha)
    step = drive * reciprocal_two_plus_two_cosh(shifted)
    start_value = drive**2 * _scaled_sinh(shifted, shifted)
    end_value = drive**2 * _scaled_sinh(shifted + step, shifted)
    return np.minimum(start_value, end_value), np.maximum(start_value, end_value)


@dataclass(frozen=True)
class GDQuadratureComparison:
    r"""GD recursion against the gradient-flow quadrature, with rigorous bounds.

    Arrays are indexed by step k = 0..steps on axis 0 (then the broadcast parameter shape).

    * ``gap_gd``: :math:`x_k`; ``gap_flow``: :math:`x(k\alpha) = g^{-1}(g(x_0) + k\alpha c)`.
    * ``defect_bound``: :math:`E_k` (sum of :func:`gd_step_defect_bound`), bounds
      :math:`|g(x_k) - g(x_0) - k\alpha c|`.
    * ``defect_low``, ``defect_high``: enclosure of :math:`g(x_k) - g(x_0) - k\alpha c`
      (sums of :func:`gd_step_defect_enclosure`).
    * ``uniform_defect_bound``: :math:`k\,\alpha^2c^2e^{|\alpha c|/4}/16`.
    * ``gap_error_bound``: :math:`E_k/m_k`; ``gap_error_bound_enclosure``:
      :math:`\max(|\mathrm{low}_k|, |\mathrm{high}_k|)/m_k`; both bound
      :math:`|x_k - x(k\alpha)|` in exact arithmetic.
    """

    step: np.ndarray
    gap_gd: np.ndarray
    gap_flow: np.ndarray
    defect_bound: np.ndarray
    defect_low: np.ndarray
    defect_high: np.ndarray
    uniform_defect_bound: np.ndarray
    gap_error_bound: np.ndarray
    gap_error_bound_enclosure: np.ndarray

    @property
    def gap_error(self) -> np.ndarray:
        r""":math:`|x_k - x(k\alpha)|` (measured)."""
        return np.abs(self.gap_gd - self.gap_flow)


def _inverse_min_g_prime(first: np.ndarray, second: np.ndarray, log_T: float) -> np.ndarray:
    r""":math:`1/\min g'` on the interval between ``first`` and ``second``."""
    low, high = np.minimum(first, second), np.maximum(first, second)
    distance = np.maximum(np.maximum(low - log_T, log_T - high), 0.0)
    return reciprocal_two_plus_two_cosh(distance)


def gd_recursion_bound(
    x0: np.ndarray | float,
    c: np.ndarray | float,
    alpha: np.ndarray | float,
    steps: int,
    T: float,
) -> GDQuadratureComparison:
    r"""Run :func:`gd_recursion` and return it with the quadrature values
    :math:`x(k\alpha) = g^{-1}(g(x_0) + k\alpha c)` and the rigorous bounds
    :math:`|x_k - x(k\alpha)| \le E_k/m_k` (see the module docstring and
    :class:`GDQuadratureComparison`).

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = Real(0.0).check("T", T)
    trajectory = gd_recursion(x0, c, alpha, steps, T)
    x0, c, alpha = np.broadcast_arrays(
        np.asarray(x0, dtype=np.float64),
        np.asarray(c, dtype=np.float64),
        np.asarray(alpha, dtype=np.float64),
    )
    step_index = np.arange(steps + 1, dtype=np.float64).reshape((-1,) + (1,) * x0.ndim)
    before = trajectory[:-1]
    per_step = gd_step_defect_bound(before, c, alpha, T)
    low_step, high_step = gd_step_defect_enclosure(before, c, alpha, T)
    zeros = np.zeros((1,) + x0.shape)
    defect_bound = np.concatenate([zeros, np.cumsum(per_step, axis=0)])
    defect_low = np.concatenate([zeros, np.cumsum(low_step, axis=0)])
    defect_high = np.concatenate([zeros, np.cumsum(high_step, axis=0)])
    gap_flow = quadrature_gap(x0, c, step_index * alpha, T)
    inverse_min_slope = _inverse_min_g_prime(trajectory, gap_flow, math.log(T))
    return GDQuadratureComparison(
        step=np.arange(steps + 1),
        gap_gd=trajectory,
        gap_flow=gap_flow,
        defect_bound=defect_bound,
        defect_low=defect_low,
        defect_high=defect_high,
        uniform_defect_bound=step_index * gd_step_defect_uniform_bound(c, alpha),
        gap_error_bound=defect_bound * inverse_min_slope,
        gap_error_bound_enclosure=np.maximum(np.abs(defect_low), np.abs(defect_high))
        * inverse_min_slope,
    )


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    from theory.foundation.proof import NUMERIC, PARTIAL
    from theory.foundation.symbols import alpha, c, x0

    g_of = sp.Function("g")
    g_inv = sp.Function("g^-1")
    delta_k, u_k, E_k, m_k = sp.symbols("delta_k u_k E_k m_k", real=True)
    x_k = sp.Symbol("x_k", real=True)
    return [
        Derivation(
            "GD recursion: per-step defect (Taylor, Lagrange remainder)",
            sp.Le(
                sp.Abs(g_of(x_k + delta_k) - g_of(x_k) - alpha * c),
                alpha**2
                * c**2
                * sp.exp(sp.Abs(delta_k))
                * sp.cosh(u_k)
                / (4 * (1 + sp.cosh(u_k)) ** 2),
            ),
            RECONSTRUCTION,
            gd_taylor_remainder_residuals,
            PARTIAL,
            "the check proves g'(x) delta = alpha c for the GD step and g''/2 = sinh(x - log T); "
            "bounding the Lagrange remainder is by hand; numeric: tests/theory/"
            "test_gd_quadrature.py::test_per_step_bounds (exact mpmath steps)",
            twin="theory.quadrature.gd.gd_step_defect_bound",
            test="tests/theory/quadrature/test_gd.py::test_per_step_bounds",
        ),
        Derivation(
            "GD recursion: uniform per-step defect (the brief's 1/8 tightened to 1/16)",
            sp.Le(
                sp.Abs(g_of(x_k + delta_k) - g_of(x_k) - alpha * c),
                alpha**2 * c**2 * sp.exp(sp.Abs(alpha * c) / 4) / 16,
            ),
            RECONSTRUCTION,
            saturation_peak_residual,
            PARTIAL,
            "the check proves d/dt [t/(1+t)^2] = (1-t)/(1+t)^3 (maximum 1/4 at t = 1); the "
            "step to the uniform bound is by hand; numeric: tests/theory/"
            "test_gd_quadrature.py::test_per_step_bounds",
            twin="theory.quadrature.gd.gd_step_defect_uniform_bound",
            test="tests/theory/quadrature/test_gd.py::test_per_step_bounds",
        ),
        Derivation(
            "GD recursion vs quadrature: accumulated gap error",
            sp.Le(sp.Abs(x_k - g_inv(g_of(x0) + sp.Symbol("k") * alpha * c)), E_k / m_k),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence="tests/theory/quadrature/test_gd.py::"
            "test_recursion_error_is_within_the_derived_bounds, "
            "::test_recursion_error_bound_over_1e5_steps and "
            "::test_defect_enclosure_against_mpmath",
            twin="theory.quadrature.gd.gd_recursion_bound",
            test="tests/theory/quadrature/test_gd.py::test_recursion_error_is_within_the_derived_bounds",
        ),
    ]
