r"""Gragg-Bulirsch-Stoer extrapolation: an adaptive explicit ODE integrator of any order.

For :math:`y' = f(s, y)`, one step of size :math:`H` from :math:`(s, y)` runs the modified
midpoint rule with :math:`n_j = 2j` substeps :math:`h_j = H / n_j` (:math:`j = 1..k`),

.. math::

    z_0 = y, \quad z_1 = z_0 + h_j f(s, z_0), \quad
    z_{m+1} = z_{m-1} + 2 h_j f(s + m h_j, z_m), \qquad T_{j,1} = z_{n_j},

whose error expands in even powers of :math:`h_j` (Gragg), and extrapolates to
:math:`h = 0` (Aitken-Neville):

.. math::

    T_{j,c+1} = T_{j,c} + \frac{T_{j,c} - T_{j-1,c}}{(n_j / n_{j-c})^2 - 1},

so that :math:`T_{k,k}` has order :math:`2k`, for :math:`1 + k^2` evaluations of
:math:`f`. The step is accepted when

.. math::

    \mathrm{err} = \max_i \frac{|T_{k,k} - T_{k,k-1}|_i}{\tau\,(1 + \max(|y_i|, |T_{k,k,i}|))}
    \le 1

(:math:`\tau` the tolerance; the estimate is the local error of the order-:math:`2k-2`
value :math:`T_{k,k-1}`, an upper estimate for :math:`T_{k,k}`'s), and the next step is
:math:`H \cdot \min(4, \max(1/50, 0.94\,(0.65/\mathrm{err})^{1/(2k-1)}))`.

Vectors are fixed-point integers (:mod:`verify.sim.fixed_point`), and the right-hand
side is asked for :math:`c\,f(s, y)` with the step factor :math:`c` it is to be multiplied
by (:math:`H`, :math:`2h_j`), so that a midpoint substep is one sum of integer vectors.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np

from verify.sim.fixed_point import FixedPoint, divide_nearest

#: ``derivative(s, y, c)`` is :math:`c\,f(s, y)`, fixed point, for mpmath ``s`` and ``c``.
ScaledDerivative = Callable[[mpmath.mpf, np.ndarray, mpmath.mpf], np.ndarray]


def columns_for(tolerance: float) -> int:
    r"""Extrapolation columns :math:`k = \lceil 0.4\,D \rceil`, :math:`D = -\log_{10}\tau`,
    within [3, 16]: order :math:`2k \approx 0.8 D`, where the work per unit time of the
    reduced flow was least (7 columns at :math:`10^{-16}`, 8 at :math:`10^{-20}`)."""
    digits = -math.log10(tolerance)
    return min(16, max(3, math.ceil(0.4 * digits)))


def extrapolated_step(
    derivative: ScaledDerivative, s: mpmath.mpf, y: np.ndarray, H: mpmath.mpf, columns: int
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(T_{k,k}, T_{k,k-1})` of one step of size ``H`` from ``(s, y)`` (see the
    module docstring); ``columns`` :math:`= k \ge 2`."""
    first = derivative(s, y, H)  # H f(s, y), shared by every midpoint sequence
    previous: list[np.ndarray] = []
    row: list[np.ndarray] = []
    for j in range(1, columns + 1):
        substeps = 2 * j
        h = H / substeps
        z0, z1 = y, y + divide_nearest(first, 1, substeps)
        for m in range(1, substeps):
            z0, z1 = z1, z0 + derivative(s + m * h, z1, 2 * h)
        row = [z1]
        for c in range(1, j):
            low, high = (2 * (j - c)) ** 2, substeps**2
            row.append(row[-1] + divide_nearest(row[-1] - previous[c - 1], low, high - low))
        previous = row
    return row[-1], row[-2]


class Extrapolation:
    r"""Adaptive Gragg-Bulirsch-Stoer integration of ``derivative`` from ``(s, y)`` with
    tolerance :math:`\tau` = ``tolerance`` (see the module docstring)."""

    #: Limits of the step-size ratio, and the controller's safety factors.
    GROWTH, SHRINK, SAFETY, TARGET = 4.0, 0.02, 0.94, 0.65

    def __init__(
        self,
        derivative: ScaledDerivative,
        s: mpmath.mpf,
        y: np.ndarray,
        tolerance: float,
        fixed: FixedPoint,
        columns: int | None = None,
    ):
        self.s, self.y = mpmath.mpf(s), y
        self.previous = (self.s, y)  # the last accepted step's start
        self.tolerance, self.fixed = tolerance, fixed
        self.columns = columns or columns_for(tolerance)
        self.evaluations = self.accepted = self.rejected = 0

        def counted(s: mpmath.mpf, y: np.ndarray, c: mpmath.mpf) -> np.ndarray:
            self.evaluations += 1
            return derivative(s, y, c)

        self.derivative = counted
        self.H = self._first_step()

    def _first_step(self) -> mpmath.mpf:
        r""":math:`H_0 = \tau^{1/(2k)} (1 + \|y\|_\infty) / \|f(s, y)\|_\infty`, at most 1."""
        slope = self._magnitude(self.derivative(self.s, self.y, mpmath.mpf(1)))
        size = 1.0 + self._magnitude(self.y)
        guess = self.tolerance ** (0.5 / self.columns) * size / max(slope, 1e-300)
        return mpmath.mpf(min(1.0, guess))

    def _magnitude(self, values: np.ndarray) -> float:
        return float(np.max(np.abs(self.fixed.to_float(values)), initial=0.0))

    def error_ratio(self, high: np.ndarray, low: np.ndarray) -> float:
        """The scaled error estimate err of a step to ``high`` (module docstring)."""
        fixed = self.fixed
        size = np.maximum(np.abs(fixed.to_float(self.y)), np.abs(fixed.to_float(high)))
        difference = np.abs(fixed.to_float(high - low))
        return float(np.max(difference / (self.tolerance * (1.0 + size)), initial=0.0))

    def state_after(self, start: tuple[mpmath.mpf, np.ndarray], H: mpmath.mpf) -> np.ndarray:
        """The state one step ``H`` after ``start`` (for dense values inside an accepted
        step: a shorter step is at least as accurate)."""
        s, y = start
        return y if H == 0 else extrapolated_step(self.derivative, s, y, H, self.columns)[0]

    def advance(self, until: mpmath.mpf) -> None:
        """One accepted step, ending at ``until`` or before it (rejected attempts retried
        with smaller steps)."""
        while self.s < until:
            H = min(self.H, until - self.s)
            high, low = extrapolated_step(self.derivative, self.s, self.y, H, self.columns)
            err = self.error_ratio(high, low)
            ratio = (
                self.GROWTH
                if err == 0
                else self.SAFETY * (self.TARGET / err) ** (1.0 / (2 * self.columns - 1))
            )
            proposal = H * min(self.GROWTH, max(self.SHRINK, ratio))
            if err <= 1.0:
                self.previous = (self.s, self.y)
                self.s, self.y = self.s + H, high
                self.H = max(proposal, self.H) if H < self.H else proposal
                self.accepted += 1
                return
            self.rejected += 1
            self.H = proposal
            if self.H <= mpmath.eps * (1 + abs(self.s)):
                raise FloatingPointError(
                    f"the extrapolation step fell below the working precision at s = "
                    f"{mpmath.nstr(self.s, 8)}"
                )


__all__ = ["Extrapolation", "extrapolated_step", "columns_for", "ScaledDerivative"]
