r"""Population test metrics when each example draws its own weak-relevance factor.

With :math:`\rho_i \sim U[\rho - s, \rho + s]` a fresh test sequence is one of the base
model's at :math:`\rho_i` (the query is trained and fixed; the test example's factor enters
its own tokens only), so every population metric is the base one averaged over the factor:

.. math::

    m_s(q) = \frac1{2s}\int_{\rho - s}^{\rho + s} m(q; r)\,dr
    \approx \sum_j \tfrac{w_j}2\, m(q; \rho + s x_j),

with the :data:`NODES`-point Gauss-Legendre rule :math:`(x_j, w_j)` on [-1, 1] (exact for
polynomials in r of degree :math:`2\cdot` :data:`NODES` :math:`- 1`; the metrics are smooth
in r). The stated errors are the weighted sums of the nodes' stated errors (a bound on the
error of the weighted sum of the estimates); the quadrature's own error is not included
(a test bounds it at a few settings by the difference from the rule with half the nodes).
"""

from __future__ import annotations

import math

import numpy as np

from theory.foundation.data_model import DataModel
from verify.sim.observables import POPULATION_COLUMNS
from verify.sim.population import population_columns

#: Gauss-Legendre nodes of the average over the factor.
NODES = 6


def spread_population_columns(
    model: DataModel, q_sq: float, q_signal: np.ndarray, nodes: int = NODES
) -> dict[str, float]:
    """The population columns of ``model`` (with ``rho_spread``), averaged over the factor
    (module docstring); the base columns when the spread is 0."""
    if model.rho_spread == 0:
        return population_columns(model, q_sq, q_signal)
    x, w = np.polynomial.legendre.leggauss(nodes)
    total = dict.fromkeys(POPULATION_COLUMNS, 0.0)
    for node, weight in zip(x, w, strict=True):
        factor = model.replace(rho=model.rho + model.rho_spread * node, rho_spread=0.0)
        for key, value in population_columns(factor, q_sq, q_signal).items():
            total[key] += 0.5 * weight * value
    return {key: (value if math.isfinite(value) else math.nan) for key, value in total.items()}


__all__ = ["NODES", "spread_population_columns"]
