import numpy as np
import pytest

from verify.sim.config import ConfigError, RunConfig
from verify.sim.data import (
    IRRELEVANT,
    RELEVANT,
    WEAK_ALIGNED,
    WEAK_OPPOSITE,
    exact_flip_count,
    generate,
    initial_weight_blocks,
    initial_weights,
    load_npz,
    save_npz,
)


def small(**changes):
    return RunConfig(**{"d": 40, "n": 10, "T": 6, "test_size": 30, "mu_norm": 4.0, **changes})


def test_groups_signals_and_head():
    config = small(n_relevant=2, n_weak_aligned=1, n_weak_opposite=2)
    data = generate(config)
    assert list(data.groups) == [RELEVANT, RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE,
                                 WEAK_OPPOSITE, IRRELEVANT]
    assert np.isclose(np.linalg.norm(data.nu), 1 / config.mu_norm)
    assert np.isclose(data.mu_plus @ data.nu, 1 / np.sqrt(2))
    assert np.isclose(data.mu_minus @ data.nu, -1 / np.sqrt(2))
    # The signal coordinates carry the group means: R tokens of class +1 sit near mu_+.
    positive = data.y_clean == 1
    mean_R = data.X_train[positive][:, 0, :2].mean(axis=0)
    assert mean_R[0] > 2 and abs(mean_R[1]) < 2


@pytest.mark.parametrize(("n", "eta", "flips"), [(20, 0.2, 4), (10, 0.3, 3), (7, 0.1, 1),
                                                  (20, 0.0, 0)])
def test_exact_flips_half_from_each_class(n, eta, flips):
    assert exact_flip_count(n, eta) == flips
    data = generate(small(n=n, eta=eta))
    noisy = data.noisy
    assert noisy.sum() == flips
    assert abs(int(noisy[data.y_clean == 1].sum()) - int(noisy[data.y_clean == -1].sum())) <= 1
    assert np.all(data.y_train[noisy] == -data.y_clean[noisy])


def test_bernoulli_flip_rate():
    rates = [generate(small(n=400, eta=0.2, flip="bernoulli", seed=s)).noisy.mean()
             for s in range(5)]
    assert abs(np.mean(rates) - 0.2) < 0.03


def test_same_seed_same_data_and_test_set_independent_of_training():
    a, b = generate(small(seed=7)), generate(small(seed=7))
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    assert not np.array_equal(generate(small(seed=8)).X_train, a.X_train)
    # The public code reuses the training seed for the test set; here no test token
    # repeats a training token's noise.
    train_noise = a.X_train[..., 2:].reshape(-1, 38)
    test_noise = a.X_test[..., 2:].reshape(-1, 38)
    correlation = np.abs(train_noise @ test_noise.T) / 38
    assert correlation.max() < 0.9


def test_weight_blocks_match_one_draw():
    config = small(d=50)
    whole = np.concatenate([block for _, block in initial_weight_blocks(config, block_rows=7)])
    np.testing.assert_array_equal(whole, initial_weights(config))
    bound = 1 / np.sqrt(config.d)
    assert np.all(np.abs(whole) < bound)
    gaussian = initial_weights(small(d=50, init="gaussian", init_scale=0.3))
    assert 0.25 < gaussian.std() < 0.35


def test_npz_round_trip_and_errors(tmp_path):
    config = small()
    data = generate(config)
    W0 = initial_weights(config)
    path = tmp_path / "data.npz"
    save_npz(path, data, W0)
    loaded, loaded_W0 = load_npz(path, config)
    np.testing.assert_array_equal(loaded.X_train, data.X_train)
    np.testing.assert_array_equal(loaded.y_clean, data.y_clean)
    np.testing.assert_array_equal(loaded_W0, W0)
    with pytest.raises(ConfigError, match="does not match"):
        load_npz(path, small(d=41))
    with pytest.raises(ConfigError, match="no such file"):
        load_npz(tmp_path / "missing.npz", config)
    np.savez(tmp_path / "bad.npz", X_train=data.X_train, y_train=data.y_train * 2,
             X_test=data.X_test, y_test=data.y_test)
    with pytest.raises(ConfigError, match="y_train must hold only"):
        load_npz(tmp_path / "bad.npz", config)
