r"""The reduced statistics of Gaussian draws, sampled in law at a cost independent of d.

Tokens :math:`B = E S^\top + \sigma G` (:math:`d \times N`, :math:`G` standard Gaussian,
:math:`E = [e_1, e_2]` the signal directions, :math:`S` the signal coefficients,
:math:`N \times 2`) and :math:`W_0` with iid :math:`N(0, s^2)` entries, independent of
:math:`G`. The reduced dynamics and the observables read only :math:`K = B^\top A B`,
:math:`\mathrm{Gram} = B^\top B`, :math:`Q = B^\top A^2 B`, :math:`E^\top A B` and
:math:`E^\top B` (:math:`A = W_0^\top W_0`); their joint law follows from a few small
triangular factors.

**Tokens.** On an orthonormal basis :math:`(e_1, e_2, f_1, \dots, f_{d-2})` the tokens have
coordinates :math:`E^\top B = S^\top + \sigma G_E` (:math:`G_E = E^\top G`, :math:`2 \times N`,
drawn explicitly) and :math:`\sigma G_\perp` (:math:`(d-2) \times N`, independent of
:math:`G_E`). The QR decomposition :math:`G_\perp = H F` has :math:`H` with orthonormal
columns, independent of the upper-trapezoidal :math:`F` (:math:`k \times N`,
:math:`k = \min(d-2, N)`), whose law is Bartlett's (:func:`bartlett_factor`,
:math:`F^\top F \sim \mathrm{Wishart}_N(d-2, I)`). Hence :math:`U = [e_1, e_2, B] = \mathcal Q R`
with :math:`\mathcal Q = [e_1, e_2, H]` orthonormal (:math:`d \times r`, :math:`r = 2 + k =
\min(d, N + 2)`) and

.. math::

    R = \begin{pmatrix} I_2 & S^\top + \sigma G_E \\ 0 & \sigma F \end{pmatrix}
    = (R_E \;\; R_B), \qquad \mathrm{Gram} = R_B^\top R_B, \quad E^\top B = R_{1:2,\,B}.

No Cholesky factorisation of :math:`U^\top U` is needed (and none cancels at large d).

**Weights.** :math:`W_0` is independent of :math:`U` and its law is invariant under
:math:`W_0 \mapsto W_0 O` (:math:`O` orthogonal); with :math:`O = [\mathcal Q, \mathcal
Q_\perp]`, :math:`Z = W_0 \mathcal Q` (:math:`d \times r`) and :math:`Y' = W_0 \mathcal
Q_\perp` are independent with iid :math:`N(0, s^2)` entries, so
:math:`\mathcal Q^\top A \mathcal Q = Z^\top Z \sim \mathrm{Wishart}_r(d, s^2 I)` and, from
:math:`W_0 W_0^\top = Z Z^\top + Y' Y'^\top`,

.. math::

    \mathcal Q^\top A^2 \mathcal Q = (Z^\top Z)^2 + Y^\top Y, \qquad Y = Y'^\top Z, \quad
    Y^\top Y \mid Z \sim \mathrm{Wishart}_r(d - r, s^2 Z^\top Z).

With :math:`Z = H_Z (s T_Z)` (:math:`T_Z` Bartlett, :math:`r \times r`,
:math:`T_Z^\top T_Z \sim \mathrm{Wishart}_r(d, I)`) and, the columns of :math:`Y'` being
rotation invariant, :math:`Y = s\,G_Y\, s T_Z` with :math:`G_Y^\top G_Y = T_Y^\top T_Y \sim
\mathrm{Wishart}_r(d - r, I)` independent of :math:`T_Z`:

.. math::

    V = s\,T_Z R_B \;(\text{the coordinates of } W_0 B), \quad K = V^\top V, \quad
    C = s\,T_Z^\top V \;(\text{those of } A B \text{ on } \mathcal Q), \quad
    Q = C^\top C + (s T_Y V)^\top (s T_Y V), \quad E^\top A B = C_{1:2}.

Everything is a product of :math:`r \times N` matrices: :math:`O(N^3)` time and
:math:`O(N^2)` memory whatever d is. The chi-square draws (Bartlett's diagonal) take any
number of degrees of freedom, so :math:`d = 10^9` costs what :math:`d = 10^3` costs. In
float64 nothing cancels: every statistic is a sum of products of draws (at
:math:`d = 10^9`, :math:`T_Z`'s diagonal is near :math:`\sqrt d \approx 3\cdot 10^4`
with relative spread :math:`(2d)^{-1/2}`, far above rounding), and each of :math:`K`,
:math:`\mathrm{Gram}` and :math:`Q` is formed as a Gram matrix, so it is symmetric
positive semi-definite by construction.
"""

from __future__ import annotations

import numpy as np

from verify.sim.statistics import Statistics, conserved_scale


def _transpose(matrices: np.ndarray) -> np.ndarray:
    """Transpose of each matrix of a stack (the last two axes)."""
    return np.swapaxes(matrices, -1, -2)


def bartlett_factor(
    dof: int, dim: int, rng: np.random.Generator, size: tuple[int, ...] = ()
) -> np.ndarray:
    r"""The R factor of the QR decomposition of a ``dof`` x ``dim`` standard Gaussian matrix,
    in law: upper trapezoidal, :math:`k \times \mathrm{dim}` with :math:`k =
    \min(\mathrm{dof}, \mathrm{dim})`, :math:`F_{ii} = (\chi^2_{\mathrm{dof} - i + 1})^{1/2}`
    (:math:`i = 1..k`), :math:`F_{ij} \sim N(0, 1)` for :math:`j > i`, all independent; so
    :math:`F^\top F \sim \mathrm{Wishart}_{\mathrm{dim}}(\mathrm{dof}, I)` (Bartlett's
    decomposition, singular when :math:`\mathrm{dof} < \mathrm{dim}`). ``size``: a stack of
    independent factors, shape ``(*size, k, dim)``."""
    rows = min(dof, dim)
    factor = np.triu(rng.standard_normal((*size, rows, dim)), 1)
    diagonal = np.arange(rows)
    factor[..., diagonal, diagonal] = np.sqrt(rng.chisquare(dof - diagonal, (*size, rows)))
    return factor


def signal_coordinates(
    signal: np.ndarray, sigma: float, rng: np.random.Generator, size: tuple[int, ...] = ()
) -> np.ndarray:
    r""":math:`E^\top B = S^\top + \sigma G_E` (2, N): the signal coefficients ``signal``
    (N, 2) plus the noise's components on the signal plane, drawn explicitly."""
    return signal.T + sigma * rng.standard_normal((*size, 2, signal.shape[0]))


def noise_factor(
    d: int, N: int, rng: np.random.Generator, size: tuple[int, ...] = ()
) -> np.ndarray:
    r""":math:`F` with :math:`F^\top F \sim \mathrm{Wishart}_N(d - 2, I)`: the noise of
    :math:`N` tokens off the two signal directions, up to a rotation."""
    return bartlett_factor(d - 2, N, rng, size)


def token_factor(
    signal_B: np.ndarray, sigma: float, d: int, rng: np.random.Generator
) -> np.ndarray:
    r""":math:`R = \begin{pmatrix} I_2 & E^\top B \\ 0 & \sigma F\end{pmatrix}`
    (:math:`r \times (N + 2)`), the triangular factor of :math:`[e_1, e_2, B]`, from the
    tokens' coordinates ``signal_B`` :math:`= E^\top B` (2, N; or a stack of them)."""
    *size, _, N = signal_B.shape
    noise = sigma * noise_factor(d, N, rng, tuple(size))
    factor = np.zeros((*size, 2 + noise.shape[-2], 2 + N))
    factor[..., :2, :2] = np.eye(2)
    factor[..., :2, 2:] = signal_B
    factor[..., 2:, 2:] = noise
    return factor


def weight_factors(
    rank: int, d: int, rng: np.random.Generator, size: tuple[int, ...] = ()
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(T_Z, T_Y)`: :math:`T_Z^\top T_Z \sim \mathrm{Wishart}_r(d, I)` and,
    independent, :math:`T_Y^\top T_Y \sim \mathrm{Wishart}_r(d - r, I)` (:math:`r` =
    ``rank`` :math:`\le d`)."""
    return bartlett_factor(d, rank, rng, size), bartlett_factor(d - rank, rank, rng, size)


def factor_statistics(
    R: np.ndarray, T_Z: np.ndarray, T_Y: np.ndarray, s: float, d: int
) -> Statistics:
    r"""The :class:`~verify.sim.statistics.Statistics` from the factors (or from stacks of
    them: then every array of the result has the stack's leading axes): with
    :math:`R_B` = ``R[:, 2:]``, :math:`V = s T_Z R_B`, :math:`C = s T_Z^\top V`,
    :math:`K = V^\top V`, :math:`\mathrm{Gram} = R_B^\top R_B`,
    :math:`Q = C^\top C + (s T_Y V)^\top (s T_Y V)`, :math:`E^\top A B = C_{1:2}`,
    :math:`E^\top B = R_{1:2, B}`, and :math:`\|W_0 W_0^\top\|_F` from the Gaussian moments
    :math:`(s^2, 3 s^4)`."""
    R_B = R[..., 2:]
    V = (s * T_Z) @ R_B
    C = _transpose(s * T_Z) @ V
    Y = (s * T_Y) @ V
    return Statistics(
        K=_transpose(V) @ V,
        gram=_transpose(R_B) @ R_B,
        Q=_transpose(C) @ C + _transpose(Y) @ Y,
        signal_AB=C[..., :2, :].copy(),
        signal_B=R_B[..., :2, :].copy(),
        invariant_scale=conserved_scale(s * s, 3.0 * s**4, d),
    )


def sample_statistics(
    signal: np.ndarray,
    sigma: float,
    s: float,
    d: int,
    token_rng: np.random.Generator,
    weight_rng: np.random.Generator,
    size: tuple[int, ...] = (),
) -> Statistics:
    r"""One draw of the statistics of tokens :math:`B = E S^\top + \sigma G` (``signal``
    :math:`= S`, (N, 2)) and :math:`W_0` with :math:`N(0, s^2)` entries, in dimension ``d``
    (see the module docstring). ``token_rng`` draws :math:`G_E` then :math:`F`,
    ``weight_rng`` draws :math:`T_Z` then :math:`T_Y`. ``size``: a stack of independent
    draws instead (every array of the result with leading axes ``size``)."""
    signal_B = signal_coordinates(signal, sigma, token_rng, size)
    R = token_factor(signal_B, sigma, d, token_rng)
    T_Z, T_Y = weight_factors(R.shape[-2], d, weight_rng, size)
    return factor_statistics(R, T_Z, T_Y, s, d)


__all__ = [
    "bartlett_factor",
    "signal_coordinates",
    "noise_factor",
    "token_factor",
    "weight_factors",
    "factor_statistics",
    "sample_statistics",
]
