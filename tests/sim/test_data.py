import numpy as np
import pytest

from theory.foundation.data_model import noisy_count
from theory.foundation.validation import InvalidParameter
from verify.sim.config import RunConfig
from verify.sim.data import (
    IRRELEVANT,
    RELEVANT,
    WEAK_ALIGNED,
    WEAK_OPPOSITE,
    dataset_from_arrays,
    generate,
    initial_weight_blocks,
    initial_weights,
    npz_shape,
    read_npz,
    read_npz_checked_later,
    save_npz,
)


def small(**changes):
    return RunConfig.build(**{"d": 40, "n": 10, "T": 6, "test_size": 30, "mu_norm": 4.0, **changes})


def test_groups_signals_and_head():
    config = small(n_relevant=2, n_weak_aligned=1, n_weak_opposite=2)
    data = generate(config)
    assert list(data.groups) == [
        RELEVANT,
        RELEVANT,
        WEAK_ALIGNED,
        WEAK_OPPOSITE,
        WEAK_OPPOSITE,
        IRRELEVANT,
    ]
    assert np.isclose(np.linalg.norm(data.nu), 1 / config.model.mu_norm)
    assert np.isclose(data.mu_plus @ data.nu, 1 / np.sqrt(2))
    assert np.isclose(data.mu_minus @ data.nu, -1 / np.sqrt(2))
    # The signal coordinates carry the group means: R tokens of class +1 sit near mu_+.
    positive = data.y_clean == 1
    mean_R = data.X_train[positive][:, 0, :2].mean(axis=0)
    assert mean_R[0] > 2 and abs(mean_R[1]) < 2


@pytest.mark.parametrize(
    ("n", "eta", "flips"),
    [
        (20, 0.2, 4),
        (10, 0.3, 3),
        (7, 0.1, 1),
        (20, 0.0, 0),
        (1, 0.49, 0),
        (5, 0.49, 2),
        (90, 0.35, 32),
        (10, 0.25, 3),
        (7, 0.05, 0),
    ],
)
def test_exact_flips_round_to_nearest_half_from_each_class(n, eta, flips):
    assert noisy_count(n, eta) == flips
    data = generate(small(n=n, eta=eta))
    noisy = data.noisy
    assert noisy.sum() == flips
    assert abs(int(noisy[data.y_clean == 1].sum()) - int(noisy[data.y_clean == -1].sum())) <= 1
    assert np.all(data.y_train[noisy] == -data.y_clean[noisy])


@pytest.mark.parametrize(("n", "eta"), [(2, 0.25), (4, 0.45), (6, 0.42)])
def test_exact_noise_reaching_half_the_labels_is_rejected(n, eta):
    with pytest.raises(InvalidParameter, match="^eta=.* is invalid: allowed a rate whose"):
        small(n=n, eta=eta)


def test_bernoulli_draw_flipping_half_is_rejected():
    rejected = 0
    for seed in range(40):
        try:
            generate(small(n=2, eta=0.45, flip="bernoulli", seed=seed))
        except InvalidParameter as error:
            assert "realised noisy fraction" in str(error)
            rejected += 1
    assert 0 < rejected < 40


def test_reusing_noise_gives_the_same_data():
    for mu in (3.0, 7.0, 3.0):
        config = small(mu_norm=mu, rho=0.2)
        fresh, reused = generate(config), generate(config, reuse_noise=True)
        np.testing.assert_array_equal(fresh.X_train, reused.X_train)
        np.testing.assert_array_equal(fresh.X_test, reused.X_test)
        np.testing.assert_array_equal(fresh.y_train, reused.y_train)


def test_bernoulli_flip_rate():
    rates = [
        generate(small(n=400, eta=0.2, flip="bernoulli", seed=s)).noisy.mean() for s in range(5)
    ]
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
    bound = 1 / np.sqrt(config.model.d)
    assert np.all(np.abs(whole) < bound)
    gaussian = initial_weights(small(d=50, init="gaussian", init_scale=0.3))
    assert 0.25 < gaussian.std() < 0.35


def test_npz_round_trip_and_errors(tmp_path):
    config = small()
    data = generate(config)
    W0 = initial_weights(config)
    path = tmp_path / "data.npz"
    save_npz(path, data, W0)
    arrays = read_npz(path)
    assert npz_shape(arrays) == (10, 6, 40, 30)
    loaded, loaded_W0 = dataset_from_arrays(arrays, config, str(path))
    np.testing.assert_array_equal(loaded.X_train, data.X_train)
    np.testing.assert_array_equal(loaded.y_clean, data.y_clean)
    np.testing.assert_array_equal(loaded_W0, W0)
    np.savez(
        tmp_path / "bad.npz",
        X_train=data.X_train,
        y_train=data.y_train * 2,
        X_test=data.X_test,
        y_test=data.y_test,
    )
    with pytest.raises(InvalidParameter, match="data_from:y_train=.*labels -1 and \\+1 only"):
        dataset_from_arrays(read_npz(tmp_path / "bad.npz"), config, "bad")


@pytest.mark.parametrize(
    "case", ["missing", "directory", "text", "npy", "two_d", "object", "lacking", "nan"]
)
def test_unreadable_external_data_is_an_input_error(tmp_path, case):
    data = generate(small())
    path = tmp_path / "data.npz"
    if case == "directory":
        path.mkdir()
    elif case == "text":
        path.write_text("not an archive")
    elif case == "npy":
        path = tmp_path / "data.npy"
        np.save(path, data.X_train)
    elif case == "two_d":
        np.savez(
            path,
            X_train=data.X_train[:, 0],
            y_train=data.y_train,
            X_test=data.X_test,
            y_test=data.y_test,
        )
    elif case == "object":
        np.savez(
            path,
            X_train=np.array([[1, "a"]], dtype=object),
            y_train=data.y_train,
            X_test=data.X_test,
            y_test=data.y_test,
        )
    elif case == "lacking":
        np.savez(path, X_train=data.X_train)
    elif case == "nan":
        bad = data.X_train.copy()
        bad[0, 0, 0] = np.nan
        np.savez(path, X_train=bad, y_train=data.y_train, X_test=data.X_test, y_test=data.y_test)
    with pytest.raises(InvalidParameter) as info:
        npz_shape(read_npz(path))
    assert info.value.name.startswith("data_from")
    assert " is invalid: allowed " in str(info.value)


def test_npz_members_are_read_as_numpy_reads_them(tmp_path):
    """Uncompressed members are read straight into their arrays (any dtype and order, the
    checksum checked); compressed archives go through numpy.load; both give numpy's arrays."""
    rng = np.random.default_rng(3)
    arrays = {
        "X_train": rng.standard_normal((3, 4, 5)).astype(np.float32),
        "fortran": np.asfortranarray(rng.standard_normal((6, 7))),
        "labels": np.array([1, -1, 1], dtype=np.int8),
        "empty": np.zeros((0, 4)),
    }
    for name, save in (("plain.npz", np.savez), ("packed.npz", np.savez_compressed)):
        save(tmp_path / name, **arrays)
        read = read_npz(tmp_path / name)
        with np.load(tmp_path / name) as expected:
            assert sorted(read) == sorted(expected.files)
            for key in expected.files:
                assert read[key].dtype == expected[key].dtype
                assert read[key].flags.f_contiguous == expected[key].flags.f_contiguous
                np.testing.assert_array_equal(read[key], expected[key])


def test_a_damaged_npz_member_is_refused(tmp_path):
    path = tmp_path / "data.npz"
    np.savez(path, X_train=np.arange(1000.0))
    raw = bytearray(path.read_bytes())
    raw[raw.index(np.arange(1000.0)[500:501].tobytes())] ^= 1  # one bit of one number
    path.write_bytes(bytes(raw))
    with pytest.raises(InvalidParameter, match="data_from=.*CRC"):
        read_npz(path)
    arrays, check = read_npz_checked_later(path)  # the checksum computed in the background
    assert arrays["X_train"].shape == (1000,)
    with pytest.raises(InvalidParameter, match="data_from=.*CRC.*X_train"):
        check()
    np.savez(path, X_train=np.arange(1000.0), y=np.ones(3, dtype=np.int8))
    arrays, check = read_npz_checked_later(path)
    check()  # intact: no error
    np.testing.assert_array_equal(arrays["X_train"], np.arange(1000.0))


def test_finiteness_is_decided_entrywise_when_the_sum_overflows():
    from verify.sim.data import all_finite

    assert all_finite(np.array([1e308, 1e308, -1e308]))
    assert not all_finite(np.array([1.0, np.nan]))
    assert not all_finite(np.array([1e308, 1e308, np.inf]))
    assert all_finite(np.array([1, 2], dtype=np.int64))
