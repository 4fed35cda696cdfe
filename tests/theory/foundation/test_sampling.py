"""The one sampler of the data model (:mod:`theory.foundation.sampling`).

``verify.sim.data.generate`` and ``initial_weights`` assemble their arrays from it; here they
are compared, byte for byte, with a construction written out from NumPy alone (the
simulator's draws as they were before the sampler moved into theory: four streams spawned
from the seed, the flips drawn per class, the signal added per token position, W0 drawn
whole). The comparison is independent of NumPy's version only as far as the generators
are: both sides call the same ``SeedSequence``, ``default_rng`` and distribution methods, so
a change of NumPy's streams moves both alike. The stage-1 Monte Carlo draws its tokens and
then W0 from one generator with the same functions, in the order it always used (its tests'
outcomes depend on that order).
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.foundation.data_model import DataModel, Training, noisy_count
from theory.foundation.sampling import exact_flips
from theory.stage1.sampling import draw_initial_state
from verify.sim.config import RunConfig
from verify.sim.data import generate, initial_weights

CASES = [
    {"d": 50, "n": 10, "T": 4, "mu_norm": 3.0},
    {"d": 30, "n": 7, "T": 5, "eta": 0.3, "mu_norm": 2.0},
    {"d": 40, "n": 12, "T": 8, "flip": "bernoulli", "eta": 0.2},
    {"d": 600, "n": 6, "T": 3, "init": "gaussian"},
    {"d": 20, "n": 9, "T": 6, "rho": 0.3, "sigma_eps": 0.5, "test_size": 33},
]
SEEDS = (0, 7, 12345)


def reference_labels(rng: np.random.Generator, model: DataModel) -> tuple[np.ndarray, np.ndarray]:
    """Balanced true labels (the odd sample positive) and the flipped set."""
    n = model.n
    y_clean = np.where(np.arange(n) < (n + 1) // 2, 1, -1).astype(np.int64)
    if model.flip == "bernoulli":
        return y_clean, rng.random(n) < model.eta
    flips = noisy_count(n, model.eta)
    positives, negatives = np.flatnonzero(y_clean == 1), np.flatnonzero(y_clean == -1)
    first = min((flips + 1) // 2, positives.size)
    second = min(flips - first, negatives.size)
    flipped = np.zeros(n, dtype=bool)
    flipped[rng.choice(positives, size=first, replace=False)] = True
    flipped[rng.choice(negatives, size=second, replace=False)] = True
    return y_clean, flipped


def reference_tokens(
    rng: np.random.Generator, y: np.ndarray, model: DataModel
) -> tuple[np.ndarray, np.ndarray]:
    """sigma z plus each token's signal, position by position and class by class."""
    X = rng.standard_normal((y.size, model.T, model.d)) * model.sigma_eps
    for t, code in enumerate(model.position_groups):
        group = model.groups[code]
        for label, first, second in (
            (1, group.own, group.opposite),
            (-1, group.opposite, group.own),
        ):
            X[y == label, t, 0] += first * model.mu_norm
            X[y == label, t, 1] += second * model.mu_norm
    return X, y


def reference_data(config: RunConfig, order: tuple[int, int, int, int] = (0, 1, 2, 3)) -> dict:
    """Every array of ``generate(config)`` and ``initial_weights(config)``, from NumPy alone
    (``order``: which spawned stream serves training, test, W0 and the flips)."""
    m = config.model
    children = np.random.SeedSequence(config.seed).spawn(4)
    train, test, init, flips = (np.random.default_rng(children[i]) for i in order)
    y_clean, flipped = reference_labels(flips, m)
    X_train, _ = reference_tokens(train, y_clean, m)
    size = config.recording.test_size
    X_test, y_test = reference_tokens(test, np.where(np.arange(size) < (size + 1) // 2, 1, -1), m)
    s = config.init_scale
    if config.training.init == "uniform":
        W0 = init.uniform(-s, s, (m.d, m.d))
    else:
        W0 = s * init.standard_normal((m.d, m.d))
    nu = np.zeros(m.d)
    nu[0], nu[1] = m.gamma0 / m.mu_norm, -m.gamma0 / m.mu_norm
    return {
        "X_train": X_train,
        "y_train": np.where(flipped, -y_clean, y_clean),
        "y_clean": y_clean,
        "X_test": X_test,
        "y_test": y_test.astype(np.int64),
        "nu": nu,
        "W0": W0,
    }


def simulator_data(config: RunConfig, reuse_noise: bool = False) -> dict:
    data = generate(config, reuse_noise=reuse_noise)
    arrays = {key: getattr(data, key) for key in ("X_train", "y_train", "y_clean", "X_test")}
    return {**arrays, "y_test": data.y_test, "nu": data.nu, "W0": initial_weights(config)}


def same_bytes(left: dict, right: dict) -> bool:
    return left.keys() == right.keys() and all(
        left[k].dtype == right[k].dtype
        and left[k].shape == right[k].shape
        and left[k].tobytes() == right[k].tobytes()
        for k in left
    )


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", SEEDS)
def test_generate_is_the_independent_construction_byte_for_byte(case, seed):
    config = RunConfig.build(seed=seed, **case)
    expected = reference_data(config)
    assert same_bytes(simulator_data(config), expected)
    assert same_bytes(simulator_data(config, reuse_noise=True), expected)


def test_the_comparison_sees_a_change_of_streams():
    """The same construction with the training and test streams swapped is another draw."""
    config = RunConfig.build(seed=3, **CASES[0])
    assert not same_bytes(simulator_data(config), reference_data(config, order=(1, 0, 2, 3)))


@pytest.mark.parametrize("init", ["uniform", "gaussian"])
def test_the_stage1_monte_carlo_draws_tokens_then_w0_from_one_generator(init):
    model, training = DataModel(d=60, n=8, T=6, mu_norm=4.0, eta=0.25), Training(init=init)
    state = draw_initial_state(model, training, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    y_star = np.where(np.arange(model.n) < model.n // 2, 1, -1)
    tokens, _ = reference_tokens(rng, y_star, model)
    s = training.scale(model.d)
    W0 = (
        rng.uniform(-s, s, (model.d, model.d))
        if init == "uniform"
        else s * rng.standard_normal((model.d, model.d))
    )
    assert state.tokens.tobytes() == tokens.tobytes() and state.W.tobytes() == W0.tobytes()
    flipped = state.y != state.ystar  # the first noisy_count / 2 of each class
    assert np.flatnonzero(flipped).tolist() == [0, 4]


def test_exact_flips_take_half_from_each_class_the_odd_one_positive():
    y = np.array([1, 1, 1, -1, -1, -1])
    assert np.flatnonzero(exact_flips(y, 3)).tolist() == [0, 1, 3]
    drawn = exact_flips(y, 3, np.random.default_rng(0))
    assert int(drawn[y == 1].sum()) == 2 and int(drawn[y == -1].sum()) == 1
