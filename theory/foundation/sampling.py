r"""The one sampler of the data model (NumPy only): streams, labels, flips, tokens, :math:`W_0`.

A token of group :math:`g` is :math:`x = \sigma_\epsilon z + c_g\mu_{y^*} + c'_g\mu_{-y^*}`
with :math:`z \sim N(0, I_d)` (the token-group table of :mod:`theory.foundation.data_model`)
and :math:`\mu_{+1} = \|\mu\| e_1`, :math:`\mu_{-1} = \|\mu\| e_2`; observed labels are
:math:`y = -y^*` on the flipped set and :math:`y = y^*` elsewhere; :math:`W_0` has iid
entries, uniform on :math:`(-s, s)` or :math:`N(0, s^2)`. Every draw takes its generator as
an argument: the simulator (:mod:`verify.sim.data`) gives each part its own stream of
:func:`random_streams`, the stage-1 Monte Carlo (:mod:`theory.stage1.sampling`) one stream
for everything. The noise :math:`z`, the labels and the flipped set do not depend on
:math:`\|\mu\|` or :math:`\rho`.

The model variants draw from streams appended after the base four (a child of
``SeedSequence.spawn`` is fixed by its index, so the base streams' numbers do not change):
``rho``, the per-example :math:`\rho_i \sim U[\rho - s, \rho + s]` (training set, then test
set; nothing is drawn when :math:`s = 0`); ``head``, the one-step head's :math:`\nu_0` and
then its separate head set; ``readout``, the FFN readout's directions and offsets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.foundation.validation import require
from theory.variants.ffn import OFFSET_RANGE, FFNReadout
from theory.variants.kernels import one_step_update

#: Order of the independent random streams spawned from a seed (the variants' streams come
#: after the base four, whose numbers they leave as they were).
STREAMS = ("train", "test", "init", "flips", "rho", "head", "readout")


def random_streams(seed: int) -> dict[str, np.random.Generator]:
    """Independent generators for training data, test data, initialisation and flips, and
    for the variants: per-example rho, the one-step head, the FFN readout."""
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {
        name: np.random.default_rng(child) for name, child in zip(STREAMS, children, strict=True)
    }


def position_groups(model: DataModel) -> np.ndarray:
    """Group code of each of the T token positions."""
    return np.array(model.position_groups, dtype=np.int64)


def signal_vectors(model: DataModel) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\mu_{+1} = \|\mu\| e_1` and :math:`\mu_{-1} = \|\mu\| e_2`."""
    mu_plus, mu_minus = np.zeros(model.d), np.zeros(model.d)
    mu_plus[0] = mu_minus[1] = model.mu_norm
    return mu_plus, mu_minus


def head_vector(model: DataModel) -> np.ndarray:
    r"""The fixed head :math:`\nu = s_\nu (\mu_{+1} - \mu_{-1}) / (\sqrt2 \|\mu\|^2)`."""
    nu = np.zeros(model.d)
    nu[0], nu[1] = model.gamma0 / model.mu_norm, -model.gamma0 / model.mu_norm
    return nu


def balanced_labels(count: int) -> np.ndarray:
    """Labels +1 for the first ceil(count/2) samples, -1 for the rest."""
    labels = -np.ones(count, dtype=np.int64)
    labels[: (count + 1) // 2] = 1
    return labels


def exact_flips(
    y_clean: np.ndarray, flips: int, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Which of the labels ``y_clean`` (+-1) are flipped: ``flips`` of them, half from each
    class (the odd one from the positive class), uniformly within each class; without a
    generator, the first of each class (the same in law: a class's samples are
    exchangeable)."""
    mask = np.zeros(y_clean.shape[0], dtype=bool)
    positives, negatives = np.flatnonzero(y_clean == 1), np.flatnonzero(y_clean == -1)
    from_positive = min((flips + 1) // 2, positives.size)
    from_negative = min(flips - from_positive, negatives.size)
    if rng is None:
        mask[positives[:from_positive]] = True
        mask[negatives[:from_negative]] = True
        return mask
    mask[rng.choice(positives, size=from_positive, replace=False)] = True
    mask[rng.choice(negatives, size=from_negative, replace=False)] = True
    return mask


def noisy_mask(y_clean: np.ndarray, model: DataModel, rng: np.random.Generator) -> np.ndarray:
    r"""Which training labels are flipped.

    ``exact``: :func:`theory.foundation.data_model.noisy_count` flips (:math:`n\eta`
    rounded), half from each class (the odd one from the positive class), uniformly within
    each class (:func:`exact_flips`). ``bernoulli``: each label flips with probability
    :math:`\eta`; a draw that flips half the labels or more is an error (the labels would
    carry no information).
    """
    n = y_clean.shape[0]
    if model.flip == "bernoulli":
        drawn = np.asarray(rng.random(n) < model.eta)
        require(
            2 * int(drawn.sum()) < n,
            "eta",
            model.eta,
            f"a rate whose realised noisy fraction stays below 1/2 (this seed flips "
            f"{int(drawn.sum())} of {n} labels)",
        )
        return drawn
    return exact_flips(y_clean, model.noisy_count, rng)


def example_rhos(rng: np.random.Generator, count: int, model: DataModel) -> np.ndarray | None:
    r"""Each example's :math:`\rho_i \sim U[\rho - s, \rho + s]` (``count`` draws from
    ``rng``), or ``None`` when the spread s is 0 (nothing is drawn: every example has
    :math:`\rho`)."""
    if model.rho_spread == 0:
        return None
    return rng.uniform(model.rho - model.rho_spread, model.rho + model.rho_spread, count)


def signal_part(y_star: np.ndarray, model: DataModel, rhos: np.ndarray | None = None) -> np.ndarray:
    r"""The tokens' signal on the signal directions :math:`(e_1, e_2)`, shape (m, T, 2): a
    token of group :math:`g` carries :math:`c_g\mu_{y^*} + c'_g\mu_{-y^*}`, with
    :math:`\mu_{+1} = \|\mu\| e_1` and :math:`\mu_{-1} = \|\mu\| e_2`; ``rhos`` (m,) gives
    each example its own :math:`\rho_i` in the weakly relevant groups (``None``: the
    model's :math:`\rho` for all)."""
    if rhos is None:
        own = np.array([model.groups[code].own for code in model.position_groups])
        opposite = np.array([model.groups[code].opposite for code in model.position_groups])
    else:
        codes = np.array(model.position_groups)
        own = (codes == 0) + rhos[:, None] * (codes == 1)
        opposite = rhos[:, None] * (codes == 2)
    positive = (y_star == 1)[:, None]
    part = np.empty((y_star.shape[0], model.T, 2))
    part[..., 0] = np.where(positive, own, opposite) * model.mu_norm
    part[..., 1] = np.where(positive, opposite, own) * model.mu_norm
    return part


def add_signals(
    X: np.ndarray, y_star: np.ndarray, model: DataModel, rhos: np.ndarray | None = None
) -> np.ndarray:
    """Add each token's signal (:func:`signal_part`) to the noise ``X`` (m, T, d) in place."""
    X[..., :2] += signal_part(y_star, model, rhos)
    return X


def token_noise(rng: np.random.Generator, count: int, model: DataModel) -> np.ndarray:
    r""":math:`\sigma_\epsilon z` for ``count`` sequences, shape (count, T, d), drawn from
    ``rng`` in C order."""
    noise = rng.standard_normal((count, model.T, model.d))
    noise *= model.sigma_eps
    return noise


def initial_weight_blocks(
    rng: np.random.Generator, d: int, scale: float, init: str, block_rows: int = 512
) -> Iterator[tuple[slice, np.ndarray]]:
    """Rows of :math:`W_0` (d x d, ``init`` ``uniform`` or ``gaussian`` with scale s) in
    blocks of ``block_rows``, drawn from ``rng`` in row order.

    Drawing block by block consumes the stream exactly as one (d, d) draw does, so a
    caller never needs the whole d x d matrix while one that concatenates the blocks sees
    the identical matrix.
    """
    for start in range(0, d, block_rows):
        stop = min(start + block_rows, d)
        if init == "uniform":
            block = rng.uniform(-scale, scale, size=(stop - start, d))
        else:
            block = scale * rng.standard_normal((stop - start, d))
        yield slice(start, stop), block


def initial_weights(rng: np.random.Generator, d: int, scale: float, init: str) -> np.ndarray:
    """The whole :math:`W_0` (d x d) of :func:`initial_weight_blocks`."""
    W0 = np.empty((d, d))
    for rows, block in initial_weight_blocks(rng, d, scale, init):
        W0[rows] = block
    return W0


def head_init_std(model: DataModel, training: Training) -> float:
    r"""The one-step head's initial entry scale s: ``head_init_scale``, or
    :math:`0.1\,s_\nu/(\|\mu\|\sqrt d)` (:math:`\|\nu_0\| \approx 0.1\|\nu\|`, a tenth of
    the fixed head's norm)."""
    if training.head_init_scale is not None:
        return training.head_init_scale
    return 0.1 * model.nu_norm / np.sqrt(model.d)


def clean_examples(
    rng: np.random.Generator, count: int, model: DataModel
) -> tuple[np.ndarray, np.ndarray]:
    r"""``count`` clean examples of the data model from one generator: the tokens (noise,
    then each example's :math:`\rho_i` when the spread is positive) and the balanced labels."""
    y = balanced_labels(count)
    noise = token_noise(rng, count, model)
    return add_signals(noise, y, model, example_rhos(rng, count, model)), y


@dataclass(frozen=True)
class OneStepHead:
    r"""The one-step head: the random start :math:`\nu_0`, the head :math:`\nu_1` after the
    step, the step :math:`\alpha_\nu` and the size m of the set it used."""

    nu0: np.ndarray
    nu: np.ndarray
    step: float
    size: int


def one_step_head(
    rng: np.random.Generator,
    model: DataModel,
    training: Training,
    X_train: np.ndarray,
    y_train: np.ndarray,
    step: float,
) -> OneStepHead:
    r""":math:`\nu_1 = \nu_0 + \alpha_\nu\frac1m\sum_j w(y_j\nu_0^\top\bar x_j)y_j\bar x_j`
    (:func:`theory.variants.kernels.one_step_update`, the training loss), from
    :math:`\nu_0` with entries :math:`N(0, s^2)` (:func:`head_init_std`) drawn first from
    ``rng`` (the ``head`` stream), on the training set ``X_train, y_train`` (``head_n`` = 0)
    or on ``head_n`` clean examples drawn next from ``rng``. ``step`` is
    :math:`\alpha_\nu` (:func:`theory.variants.head.head_step` gives the default)."""
    nu0 = head_init_std(model, training) * rng.standard_normal(model.d)
    if training.head_n:
        tokens, labels = clean_examples(rng, training.head_n, model)
    else:
        tokens, labels = X_train, y_train
    nu = one_step_update(nu0, tokens.mean(axis=1), labels, step, training.loss)
    return OneStepHead(nu0, nu, step, int(labels.shape[0]))


def ffn_readout(rng: np.random.Generator, model: DataModel) -> FFNReadout:
    r"""The FFN readout around the fixed head (:class:`theory.variants.ffn.FFNReadout`):
    from ``rng`` (the ``readout`` stream) the P = m/2 directions (standard normals,
    (P, d - 2)), then the P offsets, uniform on
    :data:`theory.variants.ffn.OFFSET_RANGE`."""
    pairs = model.hidden_width // 2
    normals = rng.standard_normal((pairs, model.d - 2))
    offsets = rng.uniform(*OFFSET_RANGE, pairs)
    return FFNReadout.build(head_vector(model), model.gamma0, model.sigma_eps, normals, offsets)


__all__ = [
    "STREAMS",
    "random_streams",
    "position_groups",
    "signal_vectors",
    "head_vector",
    "balanced_labels",
    "exact_flips",
    "noisy_mask",
    "example_rhos",
    "signal_part",
    "add_signals",
    "token_noise",
    "initial_weight_blocks",
    "initial_weights",
    "head_init_std",
    "clean_examples",
    "OneStepHead",
    "one_step_head",
    "ffn_readout",
]
