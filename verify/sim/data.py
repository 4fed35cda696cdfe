r"""The paper's synthetic data, drawn from a seed, and external data loaded from ``.npz``.

The draws are the theory's one sampler of the data model
(:mod:`theory.foundation.sampling`: a token of group :math:`g` is
:math:`x = \sigma_\epsilon z + c_g\mu_{y^*} + c'_g\mu_{-y^*}`, :math:`z \sim N(0, I_d)`,
:math:`y = -y^*` on the flipped set); this module assembles a :class:`Dataset` from them.
Four independent random streams are spawned from the seed: training noise, test noise
(the test set is clean and shares nothing with training), :math:`W(0)`, and the flips;
the model variants draw from three more, only when they are on (so the base model's
numbers do not change): each example's :math:`\rho_i` (training set, then test set), the
one-step head (:math:`\nu_0`, then its separate head set) and the FFN readout.

The noise :math:`z`, the labels and the flipped set do not depend on :math:`\|\mu\|` or
:math:`\rho`, so a sweep over them at fixed :math:`(d, n, T, \text{seed})` can draw the
noise once: ``generate(config, reuse_noise=True)`` keeps the last draw in the process
and gives bit for bit the same data as a fresh draw.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from theory.foundation import sampling
from theory.foundation.data_model import GROUP_NAMES
from theory.foundation.sampling import (
    STREAMS,
    add_signals,
    balanced_labels,
    example_rhos,
    ffn_readout,
    head_vector,
    noisy_mask,
    one_step_head,
    position_groups,
    random_streams,
    signal_part,
    signal_vectors,
    token_noise,
)
from theory.foundation.validation import InvalidParameter, require
from theory.variants.ffn import FFNReadout
from verify.output.files import atomic_write_bytes
from verify.runtime.threads import Job
from verify.sim.config import RunConfig

RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE, IRRELEVANT = range(4)


@dataclass(frozen=True)
class Dataset:
    r"""Training and test data plus the fixed head.

    ``groups[t]`` is the group code of token position ``t`` (the same for every sequence);
    ``y_clean`` holds the true labels :math:`y^*` (``None`` when unknown, e.g. loaded data).
    The variants' draws: ``rho_train`` (each training example's :math:`\rho_i`, ``None``
    without spread), ``nu`` is the one-step head when there is one (``nu_start`` its random
    start :math:`\nu_0`), ``readout`` the FFN readout (``None``: the linear head).
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
    source: str = field(default="generated", compare=False)
    rho_train: np.ndarray | None = None
    nu_start: np.ndarray | None = None
    readout: FFNReadout | None = None

    @property
    def n(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def T(self) -> int:
        return int(self.X_train.shape[1])

    @property
    def d(self) -> int:
        return int(self.X_train.shape[2])

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

    @cached_property
    def train_projections(self) -> np.ndarray | None:
        r"""The FFN readout's :math:`Bx_{i,t}` of the training tokens, (n, T, m), or ``None``."""
        return None if self.readout is None else self.readout.projections(self.X_train)

    @cached_property
    def test_projections(self) -> np.ndarray | None:
        """The same for the test tokens."""
        return None if self.readout is None else self.readout.projections(self.X_test)


def draw_noise(config: RunConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r""":math:`\sigma_\epsilon z` for the training and the test tokens, and the flipped set."""
    m = config.model
    streams = random_streams(config.seed)
    train = token_noise(streams["train"], m.n, m)
    flipped = noisy_mask(balanced_labels(m.n), m, streams["flips"])
    test = token_noise(streams["test"], config.recording.test_size, m)
    return train, test, flipped


@lru_cache(maxsize=1)
def _reused_noise(noise_config: RunConfig) -> tuple[np.ndarray, ...]:
    arrays = draw_noise(noise_config)
    for array in arrays:
        array.setflags(write=False)
    return arrays


def generate(config: RunConfig, reuse_noise: bool = False) -> Dataset:
    r"""Draw the training set (with label noise), an independent clean test set, and nu.

    ``reuse_noise``: keep the last noise draw in this process and reuse it while only
    :math:`\|\mu\|`, :math:`\rho` or the training settings change (same numbers)."""
    m = config.model
    if reuse_noise:
        train, test, flipped = (array.copy() for array in _reused_noise(noise_config(config)))
    else:
        train, test, flipped = draw_noise(config)
    y_clean = balanced_labels(m.n)
    y_test = balanced_labels(config.recording.test_size)
    mu_plus, mu_minus = signal_vectors(m)
    streams = random_streams(config.seed)
    rho_train = example_rhos(streams["rho"], m.n, m)
    X_train = add_signals(train, y_clean, m, rho_train)
    y_train = np.where(flipped, -y_clean, y_clean)
    rho_test = example_rhos(streams["rho"], y_test.shape[0], m)
    nu, nu_start = drawn_head(config, streams["head"], X_train, y_train)
    return Dataset(
        X_train=X_train,
        y_train=y_train,
        y_clean=y_clean,
        X_test=add_signals(test, y_test, m, rho_test),
        y_test=y_test,
        nu=nu,
        groups=position_groups(m),
        mu_plus=mu_plus,
        mu_minus=mu_minus,
        rho_train=rho_train,
        nu_start=nu_start,
        readout=ffn_readout(streams["readout"], m) if m.readout == "ffn" else None,
    )


def drawn_head(
    config: RunConfig, rng: np.random.Generator, X_train: np.ndarray, y_train: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    r"""The head the attention starts with, and the one-step head's random start: the fixed
    head :math:`\nu` (a trained head starts there too) and ``None``, or the one-step head
    :math:`\nu_1` and :math:`\nu_0` (:func:`theory.foundation.sampling.one_step_head`, from
    the ``head`` stream ``rng``, with the step of :func:`theory.variants.head.head_step`)."""
    m, training = config.model, config.training
    if training.head != "one-step":
        return head_vector(m), None
    from theory.variants.head import head_step  # SymPy, for the derivation records

    step = head_step(m, training)
    assert step is not None
    head = one_step_head(rng, m, training, X_train, y_train, step)
    return head.nu, head.nu0


@lru_cache(maxsize=1024)
def noise_config(config: RunConfig) -> RunConfig:
    """``config`` with every field the noise does not depend on at its default (cache key;
    remembered, since a batch asks for it several times a run and building a validated
    configuration costs a few milliseconds)."""
    m = config.model
    return RunConfig.build(
        seed=config.seed,
        d=m.d,
        n=m.n,
        T=m.T,
        sigma_eps=m.sigma_eps,
        test_size=config.recording.test_size,
        eta=m.eta,
        flip=m.flip,
    )


def initial_weight_blocks(
    config: RunConfig, block_rows: int = 512
) -> Iterator[tuple[slice, np.ndarray]]:
    """Rows of :math:`W(0)` in blocks, drawn from the ``init`` stream in row order
    (:func:`theory.foundation.sampling.initial_weight_blocks`: the reduced engine never
    holds the whole d x d matrix, the dense engine sees the identical matrix)."""
    rng = random_streams(config.seed)["init"]
    return sampling.initial_weight_blocks(
        rng, config.model.d, config.init_scale, config.training.init, block_rows
    )


def initial_weights(config: RunConfig) -> np.ndarray:
    """The full :math:`W(0)` (d x d)."""
    rng = random_streams(config.seed)["init"]
    return sampling.initial_weights(rng, config.model.d, config.init_scale, config.training.init)


# -- external data ---------------------------------------------------------------------

REQUIRED_ARRAYS = ("X_train", "y_train", "X_test", "y_test")
#: Bytes of an archive member read (and checksummed) at a time.
READ_CHUNK = 1 << 24
#: Fixed part of a zip member's local header; the name and the extra field follow it.
LOCAL_HEADER = struct.Struct("<4s22xHH")


@dataclass(frozen=True)
class StoredMember:
    """An ``.npy`` member read straight into its array, with what its CRC-32 is checked
    against: the checksum of its header bytes (the array's bytes follow them)."""

    member: zipfile.ZipInfo
    array: np.ndarray
    header_crc: int

    def check(self) -> None:
        """``zipfile.BadZipFile`` unless the member's CRC-32 is the archive's, as
        ``numpy.load`` checks it (the checksum releases the interpreter lock)."""
        data = memoryview(self.array.reshape(-1, order="A").view(np.uint8).data)
        checksum = self.header_crc
        for first in range(0, len(data), READ_CHUNK):
            checksum = zlib.crc32(data[first : first + READ_CHUNK], checksum)
        if checksum != self.member.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {self.member.filename!r}")


def _stored_array(stream: io.BufferedReader, member: zipfile.ZipInfo) -> StoredMember | None:
    """One uncompressed ``.npy`` member read straight into its array (one copy; its
    checksum checked by :meth:`StoredMember.check`); ``None`` when the member is
    compressed or is not a plain numeric array (``numpy.load`` then reads it, and says why
    not)."""
    if member.compress_type != zipfile.ZIP_STORED or not member.filename.endswith(".npy"):
        return None
    stream.seek(member.header_offset)
    signature, name_length, extra_length = LOCAL_HEADER.unpack(stream.read(LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        return None
    start = stream.seek(member.header_offset + LOCAL_HEADER.size + name_length + extra_length)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = {
            (1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0,
        }[version]
        shape, fortran_order, dtype = read_header(stream)
    except (ValueError, KeyError):
        return None
    header = stream.tell() - start
    if dtype.hasobject or header + math.prod(shape) * dtype.itemsize != member.file_size:
        return None
    array = np.empty(shape, dtype=dtype, order="F" if fortran_order else "C")
    stream.seek(start)
    header_crc = zlib.crc32(stream.read(header))
    view = memoryview(array.reshape(-1, order="A").view(np.uint8).data)
    for first in range(0, array.nbytes, READ_CHUNK):
        chunk = view[first : first + READ_CHUNK]
        if stream.readinto(chunk) != len(chunk):
            raise EOFError(f"{member.filename} ends early")
    return StoredMember(member, array, header_crc)


def _read_stored(path: Path) -> list[StoredMember] | None:
    """Every member of an ``.npz`` written by ``numpy.savez`` (no compression), each read
    once from the file into its array; ``None`` when a member needs ``numpy.load``."""
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
    stored = []
    with open(path, "rb") as stream:
        for member in members:
            read = _stored_array(stream, member)
            if read is None:
                return None
            stored.append(read)
    return stored


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` archive, every checksum checked; any problem reading it
    is an :class:`~theory.foundation.validation.InvalidParameter` naming ``data_from``."""
    arrays, check = read_npz_checked_later(path)
    check()
    return arrays


def read_npz_checked_later(
    path: str | Path,
) -> tuple[dict[str, np.ndarray], Callable[[], None]]:
    """:func:`read_npz` with the checksums of the members read straight into their arrays
    computed in a background thread while the caller checks the arrays' shapes and values:
    the arrays are not to be used before ``check()`` (which waits for it, and raises the
    same :class:`~theory.foundation.validation.InvalidParameter` as :func:`read_npz`)
    returns."""
    shown = str(path)
    path = Path(path)
    require(path.exists(), "data_from", shown, "an existing .npz file (no such file)")
    require(path.is_file(), "data_from", shown, "an .npz file (this is a directory)")
    with open(path, "rb") as stream:
        magic = stream.read(6)
    require(
        magic != b"\x93NUMPY",
        "data_from",
        shown,
        "an .npz archive (this is a single .npy array; save with numpy.savez)",
    )
    require(
        magic[:4] == b"PK\x03\x04",
        "data_from",
        shown,
        "an .npz archive written by numpy.savez (this file is not a zip archive)",
    )
    with _read_errors(shown):
        stored = _read_stored(path)
        if stored is None:
            return _load(path, shown), lambda: None
    checksums = Job(_check_all, stored)

    def check() -> None:
        with _read_errors(shown):
            checksums.result()

    return {read.member.filename[: -len(".npy")]: read.array for read in stored}, check


def _check_all(stored: list[StoredMember]) -> None:
    for read in stored:
        read.check()


def _load(path: Path, shown: str) -> dict[str, np.ndarray]:
    """Every array of the archive through ``numpy.load`` (which checks the checksums)."""
    loaded = np.load(path, allow_pickle=False)
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise InvalidParameter(
            "data_from",
            shown,
            "an .npz archive (this is a single .npy array; save with numpy.savez)",
        )
    with loaded as archive:
        return {key: np.asarray(archive[key]) for key in archive.files}


@contextmanager
def _read_errors(shown: str) -> Iterator[None]:
    """Any problem reading the archive as an
    :class:`~theory.foundation.validation.InvalidParameter` naming ``data_from``."""
    try:
        yield
    except InvalidParameter:
        raise
    except ValueError as error:
        if "pickle" in str(error).lower():
            raise InvalidParameter(
                "data_from",
                shown,
                "an .npz archive of numeric arrays (it holds object arrays, which are not loaded)",
            ) from None
        raise InvalidParameter(
            "data_from", shown, f"an .npz archive readable by numpy.load ({error})"
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        raise InvalidParameter(
            "data_from", shown, f"a readable .npz archive ({type(error).__name__}: {error})"
        ) from None


def all_finite(values: np.ndarray) -> bool:
    """Whether every entry is finite: a NaN or an infinity makes the sum non-finite, so a
    finite sum settles it in one pass; only a sum that overflows needs the entrywise test."""
    if values.dtype.kind != "f":
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        if math.isfinite(float(np.sum(values, dtype=np.float64))):
            return True
    return bool(np.isfinite(values).all())


def _array(arrays: dict[str, np.ndarray], key: str, ndim: int, shape_text: str) -> np.ndarray:
    value = arrays[key]
    require(
        value.dtype.kind in "biuf", f"data_from:{key}", f"dtype {value.dtype}", "a numeric array"
    )
    require(
        value.ndim == ndim,
        f"data_from:{key}",
        f"shape {value.shape}",
        f"an array of shape {shape_text}",
    )
    require(
        all_finite(value),
        f"data_from:{key}",
        "non-finite entries",
        "finite numbers only",
    )
    return value


def npz_shape(arrays: dict[str, np.ndarray]) -> tuple[int, int, int, int]:
    """``(n, T, d, test_size)`` of external data, after checking the arrays' presence,
    types and shapes (every problem is an
    :class:`~theory.foundation.validation.InvalidParameter`)."""
    for key in REQUIRED_ARRAYS:
        require(
            key in arrays,
            "data_from",
            f"arrays {sorted(arrays)}",
            f"an archive holding {', '.join(REQUIRED_ARRAYS)} (missing {key})",
        )
    n, T, d = _array(arrays, "X_train", 3, "(n, T, d)").shape
    test = _array(arrays, "X_test", 3, f"(m, {T}, {d})")
    require(
        test.shape[1:] == (T, d),
        "data_from:X_test",
        f"shape {test.shape}",
        f"an array of shape (m, {T}, {d})",
    )
    return int(n), int(T), int(d), int(test.shape[0])


def dataset_from_arrays(
    arrays: dict[str, np.ndarray], config: RunConfig, source: str
) -> tuple[Dataset, np.ndarray | None]:
    """External data as a :class:`Dataset` (token groups from ``config``) and ``W0`` or
    ``None``. ``config``'s (n, T, d, test_size) must be the arrays' (:func:`npz_shape`)."""
    n, T, d, m = npz_shape(arrays)

    def labels(key: str, count: int) -> np.ndarray:
        values = _array(arrays, key, 1, f"({count},)")
        require(
            values.shape == (count,),
            f"data_from:{key}",
            f"shape {values.shape}",
            f"an array of shape ({count},)",
        )
        require(
            bool(np.all(np.isin(values, (-1, 1)))),
            f"data_from:{key}",
            "other values",
            "labels -1 and +1 only",
        )
        return values.astype(np.int64)

    nu = arrays.get("nu")
    nu = head_vector(config.model) if nu is None else _array(arrays, "nu", 1, f"({d},)")
    require(nu.shape == (d,), "data_from:nu", f"shape {nu.shape}", f"an array of shape ({d},)")
    W0 = arrays.get("W0")
    if W0 is not None:
        W0 = np.asarray(_array(arrays, "W0", 2, f"({d}, {d})"), dtype=np.float64)
        require(
            W0.shape == (d, d), "data_from:W0", f"shape {W0.shape}", f"an array of shape ({d}, {d})"
        )
    dataset = Dataset(
        X_train=np.asarray(arrays["X_train"], dtype=np.float64),
        y_train=labels("y_train", n),
        y_clean=labels("y_clean", n) if "y_clean" in arrays else None,
        X_test=np.asarray(arrays["X_test"], dtype=np.float64),
        y_test=labels("y_test", m),
        nu=nu.astype(np.float64),
        groups=position_groups(config.model),
        source=source,
    )
    return dataset, W0


def save_npz(path: str | Path, dataset: Dataset, W0: np.ndarray | None = None) -> None:
    """Write a dataset (and optionally W0) in the format :func:`read_npz` reads."""
    arrays = {
        "X_train": dataset.X_train,
        "y_train": dataset.y_train,
        "X_test": dataset.X_test,
        "y_test": dataset.y_test,
        "nu": dataset.nu,
    }
    if dataset.y_clean is not None:
        arrays["y_clean"] = dataset.y_clean
    if W0 is not None:
        arrays["W0"] = W0
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    atomic_write_bytes(Path(path), buffer.getvalue())


__all__ = [
    "Dataset",
    "GROUP_NAMES",
    "RELEVANT",
    "WEAK_ALIGNED",
    "WEAK_OPPOSITE",
    "IRRELEVANT",
    "generate",
    "draw_noise",
    "noisy_mask",
    "add_signals",
    "signal_part",
    "signal_vectors",
    "head_vector",
    "balanced_labels",
    "position_groups",
    "random_streams",
    "STREAMS",
    "initial_weights",
    "initial_weight_blocks",
    "read_npz",
    "read_npz_checked_later",
    "npz_shape",
    "dataset_from_arrays",
    "save_npz",
]
