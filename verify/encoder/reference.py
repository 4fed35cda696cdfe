r"""The full encoder, every token through every layer, as the authors' code runs it
(PyTorch, float64, autograd). It is the reference the fast [CLS]-row model
(:mod:`verify.encoder.fast`) is held equal to, and the naive side of the benchmark.

On ``[cls; X]`` (n, T + 1, d): :math:`H = \mathrm{LN}_1(x)`,
:math:`Q, K, V = H W_q^\top, H W_k^\top, H W_v^\top` (one bias-free fused map),
:math:`A = \mathrm{softmax}(QK^\top/\sqrt d)` row-wise over all T + 1 positions,
:math:`O = AV`; with residuals :math:`x \leftarrow x + O`, :math:`x \leftarrow x +
F(x)`, without :math:`x \leftarrow F(O)`; :math:`F = ` LayerNorm, Linear(d, m), GELU,
Linear(m, d); then the final LayerNorm and :math:`f = \langle w, x_{[cls]}\rangle + b`;
the loss is the mean of :math:`\log(1 + e^{-yf})`. Recorded, as in the authors' code:
the [CLS] row of :math:`A` over the T data tokens.

Needs the ``realworld`` extra (torch); :func:`require_torch` says how to install it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from theory.foundation.validation import InvalidParameter
from verify.encoder.layers import LAYER_NORM_EPS
from verify.encoder.parameters import EncoderParameters

INSTALL_HINT = (
    'pip install ".[realworld]" (for the CPU build of torch first run: pip install '
    "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu)"
)


def require_torch() -> Any:
    """The ``torch`` module, or :class:`~theory.foundation.validation.InvalidParameter` naming the
    extra to install (the command line turns it into one line and exit status 2)."""
    try:
        import torch
    except ImportError:
        raise InvalidParameter(
            "model", "full", f"an installed torch (the realworld extra): {INSTALL_HINT}"
        ) from None
    return torch


def to_tensors(params: EncoderParameters) -> dict[str, Any]:
    """Leaf tensors (float64, requiring gradients) holding copies of ``params``."""
    torch = require_torch()
    return {
        name: torch.tensor(array, dtype=torch.float64, requires_grad=True)
        for name, array in params.items()
    }


def full_forward(tensors: dict[str, Any], X: Any, residual: bool) -> tuple[Any, Any]:
    """Outputs (n,) and the [CLS] row's attention over all T + 1 positions (n, T + 1)."""
    torch = require_torch()
    from torch.nn import functional

    n, _, d = X.shape
    eps = LAYER_NORM_EPS
    x = torch.cat([tensors["cls"].expand(n, 1, d), X], dim=1)
    h = functional.layer_norm(x, (d,), tensors["ln1_weight"], tensors["ln1_bias"], eps)
    q, k, v = (h @ tensors["qkv"].T).chunk(3, dim=-1)
    attention = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(d), dim=-1)
    out = attention @ v

    def feed_forward(y: Any) -> Any:
        y = functional.layer_norm(y, (d,), tensors["ln2_weight"], tensors["ln2_bias"], eps)
        y = functional.gelu(functional.linear(y, tensors["fc1_weight"], tensors["fc1_bias"]))
        return functional.linear(y, tensors["fc2_weight"], tensors["fc2_bias"])

    if residual:
        x = out + x
        x = feed_forward(x) + x
    else:
        x = feed_forward(out)
    x = functional.layer_norm(x, (d,), tensors["lnf_weight"], tensors["lnf_bias"], eps)
    outputs = x[:, 0] @ tensors["head_weight"] + tensors["head_bias"]
    return outputs, attention[:, 0]


def full_loss(tensors: dict[str, Any], X: Any, labels: Any, residual: bool) -> tuple[Any, Any]:
    """Mean logistic loss and the (outputs, [CLS] attention) pair of :func:`full_forward`."""
    torch = require_torch()
    outputs, attention = full_forward(tensors, X, residual)
    return torch.nn.functional.softplus(-labels * outputs).mean(), (outputs, attention)


def full_gradients(
    params: EncoderParameters, X: np.ndarray, labels: np.ndarray, residual: bool
) -> tuple[float, dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Loss, every parameter's gradient (autograd), outputs and [CLS] attention (T + 1
    positions) of the full encoder at ``params`` on ``X`` (n, T, d)."""
    torch = require_torch()
    tensors = to_tensors(params)
    loss, (outputs, attention) = full_loss(
        tensors, torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(labels * 1.0), residual
    )
    loss.backward()
    gradients = {name: tensor.grad.detach().numpy().copy() for name, tensor in tensors.items()}
    return (
        float(loss.detach()),
        gradients,
        outputs.detach().numpy().copy(),
        attention.detach().numpy().copy(),
    )


__all__ = [
    "INSTALL_HINT",
    "require_torch",
    "to_tensors",
    "full_forward",
    "full_loss",
    "full_gradients",
]
