r"""The encoder's parameters and their initialisation (PyTorch's layer defaults, drawn
from a seeded NumPy generator).

The authors' encoder is built from ``nn.LayerNorm``, ``nn.Linear`` and one
``nn.Parameter``; with their default initialisations:

==================  ================  =====================================================
parameter           shape             initial value
==================  ================  =====================================================
``cls``             (d,)              :math:`N(0, 1)` entries (``torch.randn``)
``ln1_weight``      (d,)              1 (LayerNorm before the attention)
``ln1_bias``        (d,)              0
``qkv``             (3d, d)           :math:`U(-1/\sqrt d, 1/\sqrt d)`; rows ``0:d`` the
                                      query map, ``d:2d`` the key map, ``2d:3d`` the value
                                      map; no bias
``ln2_weight``      (d,)              1 (LayerNorm before the feed-forward block)
``ln2_bias``        (d,)              0
``fc1_weight``      (m, d)            :math:`U(-1/\sqrt d, 1/\sqrt d)`
``fc1_bias``        (m,)              :math:`U(-1/\sqrt d, 1/\sqrt d)`
``fc2_weight``      (d, m)            :math:`U(-1/\sqrt m, 1/\sqrt m)`
``fc2_bias``        (d,)              :math:`U(-1/\sqrt m, 1/\sqrt m)`
``lnf_weight``      (d,)              1 (the final LayerNorm)
``lnf_bias``        (d,)              0
``head_weight``     (d,)              :math:`U(-1/\sqrt d, 1/\sqrt d)`
``head_bias``       ()                :math:`U(-1/\sqrt d, 1/\sqrt d)`
==================  ================  =====================================================

``nn.Linear``'s default is Kaiming-uniform with :math:`a = \sqrt5`, whose bound
:math:`\sqrt{2/(1 + a^2)}\sqrt{3/\text{fan-in}}` is :math:`1/\sqrt{\text{fan-in}}`, and its
bias is uniform with the same bound. The distributions are PyTorch's; the numbers are not
(they come from NumPy's generator, drawn in the table's order of the random entries:
``qkv``, ``fc1_weight``, ``fc1_bias``, ``fc2_weight``, ``fc2_bias``, ``head_weight``,
``head_bias``, ``cls`` — the order the authors' module creates them in).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, fields

import numpy as np

#: Parameter names in the order of the module docstring's table.
PARAMETER_NAMES = (
    "cls",
    "ln1_weight",
    "ln1_bias",
    "qkv",
    "ln2_weight",
    "ln2_bias",
    "fc1_weight",
    "fc1_bias",
    "fc2_weight",
    "fc2_bias",
    "lnf_weight",
    "lnf_bias",
    "head_weight",
    "head_bias",
)


@dataclass
class EncoderParameters:
    """Every trainable array of the encoder (float64; see the module docstring)."""

    cls: np.ndarray
    ln1_weight: np.ndarray
    ln1_bias: np.ndarray
    qkv: np.ndarray
    ln2_weight: np.ndarray
    ln2_bias: np.ndarray
    fc1_weight: np.ndarray
    fc1_bias: np.ndarray
    fc2_weight: np.ndarray
    fc2_bias: np.ndarray
    lnf_weight: np.ndarray
    lnf_bias: np.ndarray
    head_weight: np.ndarray
    head_bias: np.ndarray

    @property
    def d(self) -> int:
        return int(self.cls.shape[0])

    @property
    def mlp_dim(self) -> int:
        return int(self.fc1_bias.shape[0])

    @property
    def query(self) -> np.ndarray:
        """The query map (a view of ``qkv``'s first d rows)."""
        return self.qkv[: self.d]

    @property
    def key(self) -> np.ndarray:
        return self.qkv[self.d : 2 * self.d]

    @property
    def value(self) -> np.ndarray:
        return self.qkv[2 * self.d :]

    def items(self) -> Iterator[tuple[str, np.ndarray]]:
        for spec in fields(self):
            yield spec.name, getattr(self, spec.name)

    def copy(self) -> EncoderParameters:
        return EncoderParameters(**{name: array.copy() for name, array in self.items()})

    def count(self) -> int:
        """Number of trainable scalars."""
        return sum(array.size for _, array in self.items())


def uniform(rng: np.random.Generator, bound: float, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-bound, bound, size=shape)


def initial_parameters(d: int, mlp_dim: int, rng: np.random.Generator) -> EncoderParameters:
    """PyTorch's default initialisation of the authors' encoder (module docstring), drawn
    from ``rng`` in the authors' creation order."""
    by_d, by_m = 1.0 / math.sqrt(d), 1.0 / math.sqrt(mlp_dim)
    qkv = uniform(rng, by_d, (3 * d, d))
    fc1_weight = uniform(rng, by_d, (mlp_dim, d))
    fc1_bias = uniform(rng, by_d, (mlp_dim,))
    fc2_weight = uniform(rng, by_m, (d, mlp_dim))
    fc2_bias = uniform(rng, by_m, (d,))
    head_weight = uniform(rng, by_d, (d,))
    head_bias = uniform(rng, by_d, ())
    cls = rng.standard_normal(d)
    ones, zeros = np.ones(d), np.zeros(d)
    return EncoderParameters(
        cls=cls,
        ln1_weight=ones.copy(),
        ln1_bias=zeros.copy(),
        qkv=qkv,
        ln2_weight=ones.copy(),
        ln2_bias=zeros.copy(),
        fc1_weight=fc1_weight,
        fc1_bias=fc1_bias,
        fc2_weight=fc2_weight,
        fc2_bias=fc2_bias,
        lnf_weight=ones.copy(),
        lnf_bias=zeros.copy(),
        head_weight=head_weight,
        head_bias=np.asarray(head_bias, dtype=np.float64),
    )


__all__ = ["EncoderParameters", "PARAMETER_NAMES", "initial_parameters"]
