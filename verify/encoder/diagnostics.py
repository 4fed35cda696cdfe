r"""Where a trained encoder stores what it fits: in the [CLS] attention's token selection,
or in the feed-forward block and the head.

* ``noisy_fitted_uniform`` / ``clean_fitted_uniform`` / ``test_accuracy_uniform``: the
  fitted shares and the test accuracy with the [CLS] attention frozen at uniform
  (:math:`A_s = 1/(T + 1)`) and every trained weight kept. A noisy label still fitted
  without selection is memorised by the layers after the attention.
* ``attention_path_share`` (residuals on): the share of the sample-to-sample variation of
  the final LayerNorm's input :math:`z = y + F(y)` carried by the attention output
  :math:`y = a + c` itself,
  :math:`\sum_i\|y_i - \bar y\|^2 / (\sum_i\|y_i - \bar y\|^2 + \sum_i\|F_i - \bar F\|^2)`
  over the training samples (:math:`c` is shared, so all variation of :math:`y` comes
  from the attention); NaN without residuals, where everything passes the block.

These are the package's own diagnostics, not quantities of the paper.
"""

from __future__ import annotations

import math

import numpy as np

from verify.encoder.fast import cls_forward, outputs_with_attention
from verify.encoder.layers import normalise
from verify.encoder.parameters import EncoderParameters
from verify.sim.data import Dataset


def _share(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else math.nan


def uniform_attention_fit(
    params: EncoderParameters, data: Dataset, residual: bool, test_hat: np.ndarray | None = None
) -> dict[str, float]:
    """Fitted shares (clean, noisy) and test accuracy with the attention frozen uniform."""
    train_hat = normalise(data.X_train)[0]
    test_hat = normalise(data.X_test)[0] if test_hat is None else test_hat

    def outputs(tokens: np.ndarray) -> np.ndarray:
        m, T = tokens.shape[:2]
        uniform = np.full((m, T + 1), 1.0 / (T + 1))
        return outputs_with_attention(params, tokens, uniform, residual).outputs

    fitted = data.y_train * outputs(train_hat) > 0
    noisy = data.noisy
    correct = data.y_test * outputs(test_hat) > 0 if test_hat.shape[0] else np.zeros(0)
    return {
        "clean_fitted_uniform": _share(fitted[~noisy].astype(float)),
        "noisy_fitted_uniform": _share(fitted[noisy].astype(float)),
        "test_accuracy_uniform": _share(np.asarray(correct, dtype=float)),
    }


def attention_path_share(params: EncoderParameters, data: Dataset, residual: bool) -> float:
    """The module docstring's share of the residual stream's variation (NaN without
    residuals)."""
    if not residual:
        return math.nan
    forward = cls_forward(params, normalise(data.X_train)[0], residual)
    head = forward.head
    block = head.hidden @ params.fc2_weight.T + params.fc2_bias  # F(y)
    direct = np.sum((head.y - head.y.mean(axis=0)) ** 2)
    through = np.sum((block - block.mean(axis=0)) ** 2)
    return float(direct / (direct + through))


def diagnostics(params: EncoderParameters, data: Dataset, residual: bool) -> dict[str, float]:
    """Both diagnostics of the module docstring."""
    out = uniform_attention_fit(params, data, residual)
    out["attention_path_share"] = attention_path_share(params, data, residual)
    return out


__all__ = ["uniform_attention_fit", "attention_path_share", "diagnostics"]
