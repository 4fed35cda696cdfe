"""The fast [CLS]-row model equals the full encoder (every token through every layer,
PyTorch autograd) in float64: loss, outputs, attention and every parameter's gradient,
and the trajectory over a few steps; its gradients also match central differences."""

import numpy as np
import pytest

from verify.encoder.config import EncoderConfig, EncoderSettings
from verify.encoder.fast import cls_backward, cls_forward
from verify.encoder.layers import logistic_loss, normalise
from verify.encoder.parameters import PARAMETER_NAMES, initial_parameters
from verify.encoder.train import encoder_parameters, train_encoder
from verify.sim.config import RunConfig

N, T, D, M = 5, 6, 16, 12


def perturbed_parameters(seed=3):
    """Default initialisation with the LayerNorm affine parameters moved off 1 and 0, so
    that every term of the backward map is exercised."""
    rng = np.random.default_rng(seed)
    params = initial_parameters(D, M, rng)
    for name in ("ln1_weight", "ln1_bias", "ln2_weight", "ln2_bias", "lnf_weight", "lnf_bias"):
        getattr(params, name)[:] += 0.3 * rng.standard_normal(D)
    return params


def small_data(seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, T, D))
    X[:, 0, 0] += 4.0
    labels = np.array([1.0, -1.0, 1.0, -1.0, -1.0])
    return X, labels


def fast_loss_and_gradients(params, X, labels, residual):
    tokens = normalise(X)[0]
    forward = cls_forward(params, tokens, residual)
    loss = float(np.mean(logistic_loss(labels * forward.outputs)))
    return loss, cls_backward(params, forward, tokens, labels, residual).full(), forward


def relative(a, b):
    return float(np.linalg.norm(np.asarray(a) - b) / max(np.linalg.norm(b), 1e-300))


@pytest.mark.parametrize("residual", [True, False])
def test_fast_model_equals_the_full_encoder(residual):
    from verify.encoder.reference import full_gradients

    pytest.importorskip("torch")
    params = perturbed_parameters()
    X, labels = small_data()
    loss, gradients, forward = fast_loss_and_gradients(params, X, labels, residual)
    full_loss, full_grads, outputs, attention = full_gradients(params, X, labels, residual)
    assert abs(loss - full_loss) <= 1e-12 * abs(full_loss)
    assert relative(forward.outputs, outputs) < 1e-12
    assert relative(forward.probabilities, attention) < 1e-12
    assert set(gradients) == set(PARAMETER_NAMES) == set(full_grads)
    for name in PARAMETER_NAMES:
        assert np.linalg.norm(full_grads[name]) > 0 or not residual and name == "cls", name
        assert relative(gradients[name], full_grads[name]) < 1e-12, name


def test_a_wrong_gradient_is_caught():
    """The comparison can fail: a gradient off by one part in 1e9 is far outside 1e-12."""
    from verify.encoder.reference import full_gradients

    pytest.importorskip("torch")
    params = perturbed_parameters()
    X, labels = small_data()
    _, gradients, _ = fast_loss_and_gradients(params, X, labels, True)
    _, full_grads, _, _ = full_gradients(params, X, labels, True)
    assert relative(gradients["qkv"] * (1 + 1e-9), full_grads["qkv"]) > 1e-12


@pytest.mark.parametrize("residual", [True, False])
def test_fast_gradients_match_central_differences(residual):
    """Independent of torch: each parameter's gradient along a random direction equals
    the central difference of the loss (step 1e-5, error O(h^2))."""
    params = perturbed_parameters(seed=5)
    X, labels = small_data(seed=2)
    _, gradients, _ = fast_loss_and_gradients(params, X, labels, residual)
    rng = np.random.default_rng(0)
    for name in PARAMETER_NAMES:
        array = getattr(params, name)
        direction = rng.standard_normal(array.shape)
        original = array.copy()
        values = []
        for sign in (1.0, -1.0):
            array[...] = original + sign * 1e-5 * direction
            values.append(fast_loss_and_gradients(params, X, labels, residual)[0])
        array[...] = original
        numeric = (values[0] - values[1]) / 2e-5
        analytic = float(np.sum(gradients[name] * direction))
        assert abs(numeric - analytic) <= 1e-7 * max(abs(analytic), 1e-6), name


def test_fast_and_full_trajectories_agree():
    """Five GD steps of both implementations from the same start on generated data."""
    pytest.importorskip("torch")
    run = RunConfig.build(d=24, n=6, T=5, steps=5, test_size=7, mu_norm=6.0, seed=4)
    results = {}
    for model in ("fast", "full"):
        settings = EncoderSettings(mlp_dim=10, model=model, log_every=1, test_every=1)
        results[model] = train_encoder(EncoderConfig(run, settings))
    fast, full = results["fast"], results["full"]
    assert fast.steps == full.steps == [0, 1, 2, 3, 4, 5]
    for name, array in fast.parameters.items():
        assert relative(array, getattr(full.parameters, name)) < 1e-12, name
    for row_fast, row_full in zip(fast.history, full.history, strict=True):
        for key, value in row_fast.items():
            assert value == pytest.approx(row_full[key], rel=1e-10, abs=1e-12), key
    start = encoder_parameters(EncoderConfig(run, EncoderSettings(mlp_dim=10)))
    assert relative(fast.parameters.cls, start.cls) > 1e-4  # the parameters did train
