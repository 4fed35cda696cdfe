r"""The growth function of the paper's gap analysis and the law it gives a gap.

A leader's attention gap x whose velocity falls off with the softmax saturation obeys
:math:`\dot x = c/g'(x)`, so :math:`g(x(\tau)) = g(x_0) + c\tau` with
:math:`g(x) = 2x + 2\sinh(x - \log T)` (the paper's Lemmas 4.5-4.7 track the gaps
:math:`\Lambda_{i,t}` and :math:`\Gamma_{i,u}` this way). :mod:`~theory.quadrature.g`
holds g, its inverse and the gap trajectories; :mod:`~theory.quadrature.asymptotics` the
large-argument series of :math:`g^{-1}` with error constants; :mod:`~theory.quadrature.gd`
the same law for gradient descent's discrete steps, with a per-step error bound.

No sub-module is imported here (importing the package loads neither SymPy nor NumPy); the
package holds one number, :data:`LOG_SLOPE_PER_DECADE`.
"""

from __future__ import annotations

import math

#: The :math:`g^{-1}` law's gap growth per decade of time, :math:`\ln 10`. Late on
#: :math:`g(x) \approx e^{x}/T`, so :math:`x(\tau) \approx \log(cT\tau)`
#: (:func:`theory.quadrature.g.time_to_reach_gap_scaling`) and
#: :math:`dx/d\log_{10}\tau = \ln 10` at a constant rate c.
LOG_SLOPE_PER_DECADE = math.log(10.0)

__all__ = ["LOG_SLOPE_PER_DECADE"]
