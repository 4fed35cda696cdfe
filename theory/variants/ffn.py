r"""The FFN readout: a fixed random two-layer map around the head, with the base model's
signal scores.

This package's own construction. With :math:`P = m/2` pairs of hidden units, random
directions :math:`r_j` orthogonal to the signal plane (entries
:math:`N(0, 1/(\sigma_\epsilon^2(d - 2)))` off :math:`e_1, e_2`, so that
:math:`r_j^\top\epsilon \sim N(0, 1)` for a token's noise) and offsets
:math:`c_j \sim U[c_-, c_+]` (:data:`OFFSET_RANGE`), the readout of :math:`z = X^\top s` is

.. math::

    f(z) = a^\top\mathrm{GELU}(Bz + c) = \frac{\lambda}{P}\sum_{j=1}^{P}
    \Big[\mathrm{GELU}(c_j + r_j^\top z + \kappa\,\nu^\top z)
       - \mathrm{GELU}(c_j + r_j^\top z - \kappa\,\nu^\top z)\Big],

i.e. :math:`B = [\kappa\nu^\top + r_j^\top;\ -\kappa\nu^\top + r_j^\top]` (m x d),
:math:`c = [c_j; c_j]`, :math:`a = [\lambda/P; -\lambda/P]`, with
:math:`\mathrm{GELU}(x) = x\Phi(x)`. The scales:

* :math:`\kappa = 1/\gamma_0`, so that a signal's head score :math:`\pm\gamma_0` enters the
  units at :math:`\pm1`: the map is nonlinear on the scale of the scores, and through
  :math:`r_j^\top z` (order 1) on the token noise;
* :math:`\lambda = \gamma_0 / \frac1P\sum_j[\mathrm{GELU}(c_j + 1) - \mathrm{GELU}(c_j - 1)]`,
  so that on the signals :math:`f(\mu_{\pm1}) = \pm\gamma_0` exactly, the base head's
  scores (:math:`r_j \perp \mu_{\pm1}`, and each pair is odd in :math:`\nu^\top z`);
* the class sign holds by construction: GELU increases on :math:`(-0.75, \infty)` and
  :math:`c_j - 1 \ge c_- - 1 = -1/2`, so every pair's term has the sign of
  :math:`\nu^\top z` at the signals.

Bound: :math:`|\mathrm{GELU}(w + u) - \mathrm{GELU}(w - u)| \le 2|u|\,L`,
:math:`L = \max|\mathrm{GELU}'| = \mathrm{GELU}'(\sqrt2) = 1.129`, so
:math:`|f(z)| \le 2\lambda\kappa L\,|\nu^\top z| \le 2\lambda\kappa L\max_t|\gamma_t|`:
the output stays of the order of the token scores, as the base model's
:math:`|f| \le \max_t|\gamma_t|` (:data:`GELU_SLOPE_MAX`).

Cheap in reduced coordinates: :math:`Bx_{i,t} = [\kappa\gamma_{i,t} + r_j^\top x_{i,t};\
-\kappa\gamma_{i,t} + r_j^\top x_{i,t}]` (:meth:`FFNReadout.projections`), an
:math:`n \times T \times m` array fixed in training.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.variants.kernels import FLOAT64

#: The offsets :math:`c_j` are uniform on this interval.
OFFSET_RANGE = (0.5, 1.5)
#: :math:`L = \max_x|\mathrm{GELU}'(x)|`, attained at :math:`x = \sqrt2`:
#: :math:`\Phi(\sqrt2) + \sqrt2\varphi(\sqrt2) = \tfrac12(1 + \mathrm{erf}(1)) + e^{-1}/\sqrt\pi`.
GELU_SLOPE_MAX = 0.5 * (1 + math.erf(1.0)) + math.exp(-1.0) / math.sqrt(math.pi)


@dataclass(frozen=True)
class FFNReadout:
    r"""One draw of the FFN readout (module docstring): the head ``nu`` (d,), the random
    ``directions`` :math:`r_j` (P, d), the ``offsets`` :math:`c_j` (P,), :math:`\kappa` and
    :math:`\lambda` (``scale``)."""

    nu: np.ndarray
    directions: np.ndarray
    offsets: np.ndarray
    kappa: float
    scale: float

    @classmethod
    def build(
        cls,
        nu: np.ndarray,
        gamma0: float,
        sigma_eps: float,
        normals: np.ndarray,
        offsets: np.ndarray,
    ) -> FFNReadout:
        r"""From standard normals (P, d - 2) and offsets (P,): :math:`r_j` is the normals
        over :math:`\sigma_\epsilon\sqrt{d-2}` on the coordinates off the signal plane,
        :math:`\kappa = 1/\gamma_0`, :math:`\lambda` from the offsets."""
        pairs, free = normals.shape
        directions = np.zeros((pairs, free + 2))
        directions[:, 2:] = normals / (sigma_eps * math.sqrt(free))
        units = FLOAT64.gelu(offsets + 1.0) - FLOAT64.gelu(offsets - 1.0)
        return cls(nu, directions, offsets, 1.0 / gamma0, gamma0 / float(np.mean(units)))

    @property
    def pairs(self) -> int:
        return int(self.offsets.shape[0])

    @property
    def width(self) -> int:
        """m = 2P hidden units."""
        return 2 * self.pairs

    @property
    def in_weights(self) -> np.ndarray:
        r""":math:`B` (m, d): rows :math:`\kappa\nu + r_j`, then :math:`-\kappa\nu + r_j`."""
        head = self.kappa * self.nu
        return np.vstack([head + self.directions, -head + self.directions])

    @property
    def biases(self) -> np.ndarray:
        """:math:`c` (m,): the offsets, twice."""
        return np.concatenate([self.offsets, self.offsets])

    @property
    def out_weights(self) -> np.ndarray:
        r""":math:`a` (m,): :math:`+\lambda/P` on the first P units, :math:`-\lambda/P` on the
        others."""
        value = self.scale / self.pairs
        return np.concatenate([np.full(self.pairs, value), np.full(self.pairs, -value)])

    def projections(self, tokens: np.ndarray) -> np.ndarray:
        r""":math:`Bx` for tokens (..., d), shape (..., m), through the scores and the
        random projections (equal to ``tokens @ in_weights.T`` up to rounding)."""
        head = self.kappa * (tokens @ self.nu)[..., None]
        # One 2-D product (a stacked one with a transposed operand takes a slow path).
        flat = tokens.reshape(-1, tokens.shape[-1]) @ self.directions.T
        random = flat.reshape(*tokens.shape[:-1], self.pairs)
        return np.concatenate([head + random, -head + random], axis=-1)

    def __call__(self, z: np.ndarray) -> np.ndarray:
        r""":math:`f(z) = a^\top\mathrm{GELU}(Bz + c)` for inputs z (..., d)."""
        return FLOAT64.gelu(self.projections(z) + self.biases) @ self.out_weights

    def selection_scores(self, tokens: np.ndarray) -> np.ndarray:
        r"""The outputs of hard selection, :math:`\mathrm{FFN}(x_t)` for tokens (..., d): the
        token scores of the selection problem the FFN readout poses."""
        return self(tokens)


__all__ = ["OFFSET_RANGE", "GELU_SLOPE_MAX", "FFNReadout"]
