r"""SciPy's quad, brentq and ndtr for the predictions, with SciPy imported at the first call.

Its import costs more than a prediction that needs none of them:

* :func:`quad`: :math:`\int_a^b f(x)\,dx` by ``scipy.integrate.quad`` (QUADPACK's QAGS);
* :func:`brentq`: the root of :math:`f` in a bracket :math:`[a, b]` with
  :math:`f(a) f(b) < 0` by ``scipy.optimize.brentq``;
* :func:`ndtr`: :math:`\Phi(x) = \tfrac12 \operatorname{erfc}(-x/\sqrt2)` by
  ``scipy.special.ndtr``, element-wise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def quad(function: Callable[[float], float], a: float, b: float, **options: Any) -> float:
    r""":math:`\int_a^b f(x)\,dx` (the value of ``scipy.integrate.quad``; its options)."""
    from scipy import integrate

    return float(integrate.quad(function, a, b, **options)[0])


def brentq(function: Callable[[float], float], a: float, b: float, **options: Any) -> float:
    """The root of ``function`` in ``[a, b]`` (``scipy.optimize.brentq``; its options)."""
    from scipy import optimize

    return float(optimize.brentq(function, a, b, **options))


def ndtr(x: Any) -> Any:
    r""":math:`\Phi(x)`, the standard normal distribution function, element-wise."""
    from scipy import special

    return special.ndtr(np.asarray(x, dtype=float)) if np.ndim(x) else float(special.ndtr(x))


__all__ = ["brentq", "ndtr", "quad"]
