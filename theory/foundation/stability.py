r"""The step-size condition of assumption A5 in plain numbers (no SymPy at run time).

At :math:`\tau = 0` a gap moves by about
:math:`\alpha\kappa_0\gamma_0(\|\mu\|^2/4 + \sigma_\epsilon^2 d/(2n))/T` per GD step; A5
asks that this stay below :math:`1/C_5`, so that GD tracks gradient flow and its
quadrature:

.. math::

    \alpha \le \alpha_{\max} = \frac{T}{C_5\,\kappa_0\gamma_0\,
    (\|\mu\|^2/4 + \sigma_\epsilon^2 d/(2n))} .

:mod:`theory.foundation.assumptions` states the same relation symbolically; a test proves the two
equal.
"""

from __future__ import annotations

from theory.foundation.data_model import DataModel, Training

#: The default constant :math:`C_5` of A5.
C5 = 2.0


def max_stable_step(model: DataModel, training: Training, c5: float = C5) -> float:
    r"""The largest step size :math:`\alpha_{\max}` that assumption A5 allows."""
    speed = (
        training.kappa0(model.d)
        * model.gamma0
        * (model.mu_norm**2 / 4 + model.sigma_eps**2 * model.d / (2 * model.n))
    )
    return model.T / (c5 * speed)


__all__ = ["C5", "max_stable_step"]
