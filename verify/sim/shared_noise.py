r"""The data of :func:`verify.sim.data.generate`, bit for bit, reusing the Gaussian noise
between runs that differ only in :math:`\|\mu\|` or :math:`\rho`.

A token is :math:`x = \sigma_\epsilon z + c\,\mu` with :math:`z \sim N(0, I_d)` drawn
from the seed's streams and :math:`c \in \{1, \rho, 0\}` set by its group; :math:`z`,
the labels and the flipped set do not depend on :math:`\|\mu\|` or :math:`\rho`. A sweep
over :math:`\|\mu\|` at fixed :math:`(d, n, \text{seed})` therefore needs the noise only
once: drawing :math:`1000 \times 8 \times d` test normals is the largest cost of a
1000-step run at large :math:`d`. The noise of the last configuration is kept (one entry
per process); ``tests/test_reproduce.py`` proves the result equal to ``generate``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from verify.sim.config import RunConfig
from verify.sim.data import (
    Dataset,
    balanced_labels,
    head_vector,
    noisy_mask,
    random_streams,
    signal_vectors,
    token_groups,
)
from verify.sim.data import add_signals as data_add_signals


def noise_key(config: RunConfig) -> RunConfig:
    """The configuration with every field that does not affect the noise at its default."""
    return RunConfig(seed=config.seed, d=config.d, n=config.n, T=config.T,
                     n_relevant=config.n_relevant, n_weak_aligned=config.n_weak_aligned,
                     n_weak_opposite=config.n_weak_opposite, sigma_eps=config.sigma_eps,
                     test_size=config.test_size, eta=config.eta, flip=config.flip)


@lru_cache(maxsize=1)
def _noise(key: RunConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:math:`\\sigma_\\epsilon z` for training and test tokens, and the flipped set."""
    streams = random_streams(key.seed)
    y_clean = balanced_labels(key.n)
    train = streams["train"].standard_normal((key.n, key.T, key.d))
    train *= key.sigma_eps
    flipped = noisy_mask(y_clean, key, streams["flips"])
    test = streams["test"].standard_normal((key.test_size, key.T, key.d))
    test *= key.sigma_eps
    for array in (train, test, flipped):
        array.setflags(write=False)
    return train, test, flipped


def add_signals(noise: np.ndarray, y_star: np.ndarray, config: RunConfig) -> np.ndarray:
    """A copy of ``noise`` with each group's signal added (:func:`verify.sim.data.add_signals`)."""
    return data_add_signals(noise.copy(), y_star, config)


def generate_reusing_noise(config: RunConfig) -> Dataset:
    """Exactly :func:`verify.sim.data.generate` (config), with the noise drawn at most once
    per noise key in this process."""
    train_noise, test_noise, flipped = _noise(noise_key(config))
    y_clean = balanced_labels(config.n)
    y_train = np.where(flipped, -y_clean, y_clean)
    y_test = balanced_labels(config.test_size)
    mu_plus, mu_minus = signal_vectors(config)
    return Dataset(X_train=add_signals(train_noise, y_clean, config), y_train=y_train,
                   y_clean=y_clean, X_test=add_signals(test_noise, y_test, config),
                   y_test=y_test, nu=head_vector(config), groups=token_groups(config),
                   mu_plus=mu_plus, mu_minus=mu_minus)


__all__ = ["generate_reusing_noise", "noise_key", "add_signals"]
