"""The paper's synthetic data model (spec 01, section 2) and external-data loading.

Token groups, in order along each sequence (positions do not matter for the model,
which is permutation-equivariant over tokens):

* ``R`` (relevant): :math:`\\mu_{y^*} + \\epsilon`,
* ``W+`` (weakly relevant, aligned): :math:`\\rho \\mu_{y^*} + \\epsilon`,
* ``W-`` (weakly relevant, opposite): :math:`\\rho \\mu_{-y^*} + \\epsilon`,
* ``I`` (irrelevant): :math:`\\epsilon`,

with :math:`\\epsilon \\sim N(0, \\sigma_\\epsilon^2 I_d)` iid and
:math:`\\mu_{+1} = \\|\\mu\\| e_1`, :math:`\\mu_{-1} = \\|\\mu\\| e_2`.
Observed labels are :math:`y = -y^*` on the noisy set and :math:`y = y^*` elsewhere.
The test set is clean and drawn from its own random stream, independent of training.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from verify.output.files import atomic_write_bytes
from verify.sim.config import ConfigError, RunConfig

#: Group codes and names, in sequence order.
RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE, IRRELEVANT = 0, 1, 2, 3
GROUP_NAMES = ("R", "W+", "W-", "I")

#: Order of the independent random streams spawned from the seed.
_STREAMS = ("train", "test", "init", "flips")


@dataclass(frozen=True)
class Dataset:
    """Training and test data plus the fixed head.

    ``groups[t]`` is the group code of token position ``t`` (same for every sequence).
    ``y_clean`` holds the true labels :math:`y^*` (``None`` when unknown, e.g. loaded data).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    y_clean: np.ndarray | None
    X_test: np.ndarray
    y_test: np.ndarray
    nu: np.ndarray
    groups: np.ndarray
    mu_plus: np.ndarray | None = None
    mu_minus: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.X_train.shape[0]

    @property
    def T(self) -> int:
        return self.X_train.shape[1]

    @property
    def d(self) -> int:
        return self.X_train.shape[2]

    @property
    def noisy(self) -> np.ndarray:
        """Boolean mask of the training samples whose observed label is flipped."""
        if self.y_clean is None:
            return np.zeros(self.n, dtype=bool)
        return self.y_train != self.y_clean

    @cached_property
    def train_scores(self) -> np.ndarray:
        r"""Token scores :math:`\gamma_{i,t} = \langle x_{i,t}, \nu \rangle`, shape (n, T)."""
        return self.X_train @ self.nu

    @cached_property
    def test_scores(self) -> np.ndarray:
        return self.X_test @ self.nu


def random_streams(seed: int) -> dict[str, np.random.Generator]:
    """Independent generators for training data, test data, initialisation and flips."""
    children = np.random.SeedSequence(seed).spawn(len(_STREAMS))
    return {name: np.random.default_rng(child) for name, child in zip(_STREAMS, children,
                                                                       strict=True)}


def token_groups(config: RunConfig) -> np.ndarray:
    """Group code of each of the T token positions."""
    return np.repeat(
        np.array([RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE, IRRELEVANT]),
        [config.n_relevant, config.n_weak_aligned, config.n_weak_opposite,
         config.n_irrelevant],
    )


def signal_vectors(config: RunConfig) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\mu_{+1} = \|\mu\| e_1` and :math:`\mu_{-1} = \|\mu\| e_2`."""
    mu_plus = np.zeros(config.d)
    mu_minus = np.zeros(config.d)
    mu_plus[0] = config.mu_norm
    mu_minus[1] = config.mu_norm
    return mu_plus, mu_minus


def head_vector(config: RunConfig) -> np.ndarray:
    r"""The fixed head :math:`\nu = s_\nu (\mu_{+1} - \mu_{-1}) / (\sqrt2 \|\mu\|^2)`,
    so :math:`\|\nu\| = s_\nu / \|\mu\|` and
    :math:`\langle \mu_{\pm1}, \nu\rangle = \pm s_\nu/\sqrt2`.
    """
    mu_plus, mu_minus = signal_vectors(config)
    return config.nu_scale * (mu_plus - mu_minus) / (math.sqrt(2.0) * config.mu_norm**2)


def balanced_labels(count: int) -> np.ndarray:
    """Labels +1 for the first ceil(count/2) samples, -1 for the rest."""
    labels = -np.ones(count, dtype=np.int64)
    labels[: (count + 1) // 2] = 1
    return labels


def exact_flip_count(n: int, eta: float) -> int:
    r"""Number of flipped labels in ``exact`` mode: :math:`\lceil n\eta \rceil`
    (with a guard against floating-point round-up, e.g. 10 * 0.3)."""
    return int(math.ceil(n * eta - 1e-9))


def noisy_mask(y_clean: np.ndarray, config: RunConfig, rng: np.random.Generator) -> np.ndarray:
    """Which training labels are flipped.

    ``exact``: :math:`\\lceil n\\eta\\rceil` flips, half from each class (the odd one from
    the positive class), chosen uniformly within each class. ``bernoulli``: each label
    flips independently with probability :math:`\\eta`.
    """
    n = y_clean.shape[0]
    mask = np.zeros(n, dtype=bool)
    if config.flip == "bernoulli":
        return rng.random(n) < config.eta
    flips = exact_flip_count(n, config.eta)
    positives = np.flatnonzero(y_clean == 1)
    negatives = np.flatnonzero(y_clean == -1)
    from_positive = min((flips + 1) // 2, positives.size)
    from_negative = min(flips - from_positive, negatives.size)
    mask[rng.choice(positives, size=from_positive, replace=False)] = True
    mask[rng.choice(negatives, size=from_negative, replace=False)] = True
    return mask


def add_signals(X: np.ndarray, y_star: np.ndarray, config: RunConfig) -> np.ndarray:
    """Add each token group's signal to the noise ``X`` (n, T, d) in place; returns ``X``."""
    own = np.where(y_star == 1, 0, 1)  # coordinate of mu_{y*}
    other = 1 - own
    rows = np.arange(y_star.shape[0])
    for t, group in enumerate(token_groups(config)):
        if group == RELEVANT:
            X[rows, t, own] += config.mu_norm
        elif group == WEAK_ALIGNED:
            X[rows, t, own] += config.rho * config.mu_norm
        elif group == WEAK_OPPOSITE:
            X[rows, t, other] += config.rho * config.mu_norm
    return X


def sequences(y_star: np.ndarray, config: RunConfig, rng: np.random.Generator) -> np.ndarray:
    """Sequences of shape (len(y_star), T, d) for true labels ``y_star``."""
    X = rng.standard_normal((y_star.shape[0], config.T, config.d))
    X *= config.sigma_eps
    return add_signals(X, y_star, config)


def generate(config: RunConfig) -> Dataset:
    """Draw the training set (with label noise), an independent clean test set, and nu."""
    streams = random_streams(config.seed)
    y_clean = balanced_labels(config.n)
    X_train = sequences(y_clean, config, streams["train"])
    flipped = noisy_mask(y_clean, config, streams["flips"])
    y_train = np.where(flipped, -y_clean, y_clean)
    y_test = balanced_labels(config.test_size)
    X_test = sequences(y_test, config, streams["test"])
    mu_plus, mu_minus = signal_vectors(config)
    return Dataset(X_train=X_train, y_train=y_train, y_clean=y_clean, X_test=X_test,
                   y_test=y_test, nu=head_vector(config), groups=token_groups(config),
                   mu_plus=mu_plus, mu_minus=mu_minus)


def initial_weight_blocks(config: RunConfig, block_rows: int = 512
                          ) -> Iterator[tuple[slice, np.ndarray]]:
    """Rows of :math:`W(0)` in blocks, drawn from the ``init`` stream in row order.

    Drawing block by block consumes the stream exactly as one (d, d) draw does, so
    the reduced engine never needs the whole d x d matrix in memory while the dense
    engine (which concatenates the blocks) sees the identical matrix.
    """
    rng = random_streams(config.seed)["init"]
    scale = config.init_half_width
    for start in range(0, config.d, block_rows):
        stop = min(start + block_rows, config.d)
        if config.init == "uniform":
            block = rng.uniform(-scale, scale, size=(stop - start, config.d))
        else:
            block = scale * rng.standard_normal((stop - start, config.d))
        yield slice(start, stop), block


def initial_weights(config: RunConfig) -> np.ndarray:
    """The full :math:`W(0)` (d x d)."""
    W0 = np.empty((config.d, config.d))
    for rows, block in initial_weight_blocks(config):
        W0[rows] = block
    return W0


# -- external data ----------------------------------------------------------------

def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


def load_npz(path: str | Path, config: RunConfig) -> tuple[Dataset, np.ndarray | None]:
    """Load external data so another implementation can be compared on identical inputs.

    Arrays: ``X_train`` (n, T, d), ``y_train`` (n,), optional ``y_clean`` (n,),
    ``X_test`` (m, T, d), ``y_test`` (m,), optional ``W0`` (d, d) in the paper's
    convention (logits :math:`= X W_0^\\top p`), optional ``nu`` (d,). Token groups
    follow ``config``'s group sizes; ``config`` must agree with the arrays' n, T, d.
    Returns the dataset and ``W0`` (or ``None``: then ``config`` draws it).
    """
    path = Path(path)
    _require(path.is_file(), f"data_from={str(path)!r} is invalid: no such file")
    with np.load(path, allow_pickle=False) as archive:
        arrays = {key: np.asarray(archive[key]) for key in archive.files}
    for key in ("X_train", "y_train", "X_test", "y_test"):
        _require(key in arrays, f"data_from={str(path)!r} lacks required array {key!r}")
    X_train = arrays["X_train"].astype(np.float64)
    X_test = arrays["X_test"].astype(np.float64)
    _require(X_train.ndim == 3, f"X_train has shape {X_train.shape}: allowed (n, T, d)")
    n, T, d = X_train.shape
    _require(X_test.ndim == 3 and X_test.shape[1:] == (T, d),
             f"X_test has shape {X_test.shape}: allowed (m, {T}, {d})")
    _require((config.n, config.T, config.d) == (n, T, d),
             f"config (n, T, d) = {(config.n, config.T, config.d)} does not match "
             f"X_train's {(n, T, d)}")

    def labels(key: str, count: int) -> np.ndarray:
        values = arrays[key]
        _require(values.shape == (count,), f"{key} has shape {values.shape}: allowed ({count},)")
        _require(bool(np.all(np.isin(values, (-1, 1)))), f"{key} must hold only -1 and +1")
        return values.astype(np.int64)

    y_train = labels("y_train", n)
    y_test = labels("y_test", X_test.shape[0])
    y_clean = labels("y_clean", n) if "y_clean" in arrays else None
    nu = arrays.get("nu")
    if nu is None:
        nu = head_vector(config)
    _require(nu.shape == (d,), f"nu has shape {nu.shape}: allowed ({d},)")
    W0 = arrays.get("W0")
    if W0 is not None:
        _require(W0.shape == (d, d), f"W0 has shape {W0.shape}: allowed ({d}, {d})")
        W0 = W0.astype(np.float64)
    for key, value in (("X_train", X_train), ("X_test", X_test), ("nu", nu), ("W0", W0)):
        _require(value is None or bool(np.all(np.isfinite(value))),
                 f"{key} contains non-finite values")
    dataset = Dataset(X_train=X_train, y_train=y_train, y_clean=y_clean, X_test=X_test,
                      y_test=y_test, nu=nu.astype(np.float64), groups=token_groups(config))
    return dataset, W0


def save_npz(path: str | Path, dataset: Dataset, W0: np.ndarray | None = None) -> None:
    """Write a dataset (and optionally W0) in the format :func:`load_npz` reads."""
    arrays = {"X_train": dataset.X_train, "y_train": dataset.y_train, "X_test": dataset.X_test,
              "y_test": dataset.y_test, "nu": dataset.nu}
    if dataset.y_clean is not None:
        arrays["y_clean"] = dataset.y_clean
    if W0 is not None:
        arrays["W0"] = W0
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(Path(path), buffer.getvalue())
