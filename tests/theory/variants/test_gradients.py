"""The variants' exact gradients: the symbolic residuals vanish (quick sizes here, every size
under ``-m slow``), and a wrong claim leaves a residual."""

from __future__ import annotations

import pytest
import sympy as sp

from theory.foundation.losses import weight_residuals
from theory.foundation.proof import residuals_vanish
from theory.model import attention_output, softmax
from theory.variants import gradients
from theory.variants.loss import (
    saturated_slope_residuals,
    stationary_gap_residual,
    threshold_residuals,
)
from theory.variants.readout import pair_oddness_residual
from theory.variants.rho import spread_residuals


@pytest.mark.parametrize("T", [2, 3, 4])
def test_variant_gradients_vanish_at_quick_sizes(T):
    assert residuals_vanish(gradients.any_loss_gradient_residuals(T))
    assert residuals_vanish(gradients.ffn_gradient_residuals(T))
    assert residuals_vanish(gradients.trained_head_residuals(T))


def test_size_free_proofs_vanish():
    for check in (
        weight_residuals,
        gradients.gelu_residuals,
        lambda: gradients.one_step_residuals(2, 3, 2),
        lambda: gradients.reduced_norm_residuals(2, 2),
        threshold_residuals,
        saturated_slope_residuals,
        stationary_gap_residual,
        spread_residuals,
        pair_oddness_residual,
    ):
        assert residuals_vanish(check())


@pytest.mark.slow
@pytest.mark.parametrize("T", range(5, 9))
def test_variant_gradients_vanish_at_every_size(T):
    assert residuals_vanish(gradients.any_loss_gradient_residuals(T))
    assert residuals_vanish(gradients.ffn_gradient_residuals(T))
    assert residuals_vanish(gradients.trained_head_residuals(T))


@pytest.mark.slow
def test_larger_explicit_sizes_vanish():
    assert residuals_vanish(gradients.ffn_gradient_residuals(4, width=3, d=3))
    assert residuals_vanish(gradients.trained_head_residuals(3, d=3, n=3))
    assert residuals_vanish(gradients.one_step_residuals(3, 4, 3))
    assert residuals_vanish(gradients.reduced_norm_residuals(3, 2))


def test_a_wrong_ffn_gradient_leaves_a_residual():
    """phi_t with the activation instead of its slope (the readout's value, not its
    derivative) is not the gradient: the same reduction leaves a nonzero residual."""
    T, width = 2, 2
    logits, tokens, B, a, probabilities, hidden = gradients._ffn_parts(T, width, 2)
    output = sum(a[k] * gradients.Activation(hidden[k]) for k in range(width))
    margin = gradients._label * output
    loss = gradients.Loss(margin) / gradients._n_samples
    slopes = {gradients.ActivationSlope(h): sp.Symbol(f"A_{k}") for k, h in enumerate(hidden)}
    slopes[gradients.LossSlope(margin)] = sp.Symbol("L_1", real=True)
    wrong_phi = [
        sum(a[k] * gradients.Activation((B * tokens[t, :].T)[k]) for k in range(width))
        for t in range(T)
    ]
    residuals = gradients._logit_residuals(loss, margin, logits, probabilities, wrong_phi, slopes)
    assert not residuals_vanish(residuals)


def test_a_wrong_loss_slope_leaves_a_residual():
    """A loss scaled by the label y (a misplaced label) does not match the claimed h."""
    logits = sp.symbols("a_1:3", real=True)
    scores = sp.symbols("gamma_1:3", real=True)
    probabilities = softmax(logits)
    margin = gradients._label * attention_output(probabilities, scores)
    loss = gradients.Loss(margin) / gradients._n_samples
    slopes = {gradients.LossSlope(margin): sp.Symbol("L_1", real=True)}
    right = gradients._logit_residuals(loss, margin, logits, probabilities, scores, slopes)
    assert residuals_vanish(right)
    wrong = gradients._logit_residuals(
        loss * gradients._label, margin, logits, probabilities, scores, slopes
    )
    assert not residuals_vanish(wrong)
