"""Cache of what the frozen backbone computes, once per example.

The backbone below the last layer is frozen, so the hidden states entering the
last layer never change; nor does the pre-trained model's output row that the
head phase reads. Both are computed once for a pool of examples and stored in
``<cache>/features/<dataset>-[head-]<key>.pt``, keyed by the backbone's identity
(weights' checksum and preprocessing, special tokens included), the data set and
the examples. Files are written atomically; a corrupt or mismatching file is
recomputed. Computing a cache is announced on stderr before it starts, with its size and
an estimate of its time (from the first few examples), and followed by a progress bar
(images) or a line every half minute (text, head features).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from verify.output.files import atomic_write_bytes
from verify.realworld.assets import cache_directory
from verify.realworld.backbones import LastLayerInputs
from verify.runtime.progress import progress_iter

CHUNK = 256
DIRECTORY_ENVIRONMENT_VARIABLE = "BENIGN_ATTENTION_FEATURES"


def feature_directory() -> Path:
    """``$BENIGN_ATTENTION_FEATURES`` or ``<cache>/features``."""
    configured = os.environ.get(DIRECTORY_ENVIRONMENT_VARIABLE)
    return Path(configured) if configured else cache_directory() / "features"


FORMAT_VERSION = 2  # bump when the backbones' code changes what the cached states are


def cache_key(identity: dict, data, indices: np.ndarray) -> str:
    """SHA-256 of the backbone's identity, the format version, the example indices and the
    selected examples' content (so a changed loader or data file can never reuse old states)."""
    payload = json.dumps(
        {"backbone": identity, "dataset": data.name, "format": FORMAT_VERSION}, sort_keys=True
    ).encode()
    digest = hashlib.sha256(payload)
    digest.update(np.ascontiguousarray(indices, dtype=np.int64).tobytes())
    if isinstance(data.inputs, list):
        for index in indices:
            digest.update(data.inputs[int(index)].encode("utf-8") + b"\0")
    else:
        digest.update(np.ascontiguousarray(data.inputs[np.asarray(indices)]).tobytes())
    return digest.hexdigest()[:20]


def _load(path: Path, rows: int) -> dict[str, torch.Tensor] | None:
    """The tensors stored at ``path`` if it is readable and holds ``rows`` examples."""
    if not path.is_file():
        return None
    try:
        stored = torch.load(path, weights_only=True)
    except (OSError, RuntimeError, KeyError, EOFError, ValueError, pickle.UnpicklingError):
        stored = None
    if stored is not None and all(t.shape[0] == rows for t in stored.values()):
        return stored
    path.unlink(missing_ok=True)  # unreadable or not these examples: recompute
    return None


def _store(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    buffer = io.BytesIO()
    torch.save({k: v.contiguous() for k, v in tensors.items()}, buffer)
    atomic_write_bytes(path, buffer.getvalue())


#: Examples timed before a cache is computed, for the announced estimate.
PROBE = 16
#: Seconds between the lines that say a cache is still being computed.
HEARTBEAT_SECONDS = 30.0


def announce(what: str, data, indices: np.ndarray, path: Path, compute_probe) -> float:
    """Say, before computing a cache, what it holds, where, its size and an estimate of
    its time; both come from computing the first :data:`PROBE` examples
    (``compute_probe(probe_indices)`` returns their tensors). Returns the estimate."""
    count = len(indices)
    probe = np.arange(min(PROBE, count))
    started = time.perf_counter()
    tensors = compute_probe(probe)
    seconds = (time.perf_counter() - started) * count / max(len(probe), 1)
    size = sum(t[0].numel() * t.element_size() for t in tensors) * count
    print(
        f"caching {what} of {count} {data.name} examples into {path} (once per data set and "
        f"backbone): about {size / 2**20:.0f} MiB, estimated {seconds / 60:.1f} min here",
        file=sys.stderr,
        flush=True,
    )
    return seconds


@contextlib.contextmanager
def heartbeat(what: str, estimate: float, enabled: bool) -> Iterator[None]:
    """While the block runs, a line every :data:`HEARTBEAT_SECONDS` with the time spent
    and the estimate (when ``enabled``)."""
    done = threading.Event()
    started = time.perf_counter()

    def beat() -> None:
        while not done.wait(HEARTBEAT_SECONDS):
            spent = time.perf_counter() - started
            print(
                f"still caching {what}: {spent / 60:.1f} of about {estimate / 60:.1f} min",
                file=sys.stderr,
                flush=True,
            )

    thread = threading.Thread(target=beat, daemon=True)
    if enabled:
        thread.start()
    try:
        yield
    finally:
        done.set()


def cached_last_layer_inputs(
    backbone, data, indices: np.ndarray, progress: bool = False
) -> LastLayerInputs:
    """The last layer's inputs for ``data[indices]``, from the cache or computed and cached
    (announced first, with its size and an estimate)."""
    path = feature_directory() / f"{data.name}-{cache_key(backbone.identity, data, indices)}.pt"
    stored = _load(path, len(indices))
    if stored is not None and stored["hidden"].shape[:2] == stored["token_mask"].shape:
        return LastLayerInputs(stored["hidden"], stored["token_mask"])
    subset = data.subset(indices)
    what = "the frozen backbone's last-layer inputs"
    estimate = announce(
        what,
        data,
        indices,
        path,
        lambda probe: [backbone.last_layer_inputs(subset.subset(probe)).hidden],
    )
    with heartbeat(what, estimate, progress and data.modality == "text"):
        inputs = _last_layer_inputs(backbone, data, subset, indices, progress)
    _store(path, {"hidden": inputs.hidden, "token_mask": inputs.token_mask})
    return inputs


def _last_layer_inputs(backbone, data, subset, indices: np.ndarray, progress: bool):
    if data.modality == "text":  # one tokenisation: every chunk padded to the pool's length
        inputs = backbone.last_layer_inputs(subset)
    else:
        chunks = []
        for start in progress_iter(
            range(0, len(indices), CHUNK), f"cache {data.name}", "chunk", enabled=progress
        ):
            chunks.append(
                backbone.last_layer_inputs(
                    subset.subset(np.arange(start, min(start + CHUNK, len(indices))))
                )
            )
        inputs = LastLayerInputs(
            torch.cat([c.hidden for c in chunks]), torch.cat([c.token_mask for c in chunks])
        )
    return inputs


def cached_head_features(
    backbone, data, indices: np.ndarray, progress: bool = False
) -> torch.Tensor:
    """The pre-trained model's output row read by the head (token 0, after the final norm
    for vision) for ``data[indices]`` ``[N, D]``, from the cache or computed and cached
    (announced first, with its size and an estimate)."""
    key = cache_key({**backbone.identity, "output": "token-0"}, data, indices)
    path = feature_directory() / f"{data.name}-head-{key}.pt"
    stored = _load(path, len(indices))
    if stored is not None:
        return stored["features"]
    subset = data.subset(indices)
    what = "the pre-trained model's output rows"
    estimate = announce(
        what, data, indices, path, lambda probe: [backbone.cls_output(subset.subset(probe))]
    )
    with heartbeat(what, estimate, progress):
        features = backbone.cls_output(subset)
    _store(path, {"features": features})
    return features
