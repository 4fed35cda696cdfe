"""Cache of what the frozen backbone computes, once per example.

The backbone below the last layer is frozen, so the hidden states entering the
last layer never change; nor does the pre-trained model's output row that the
head phase reads. Both are computed once for a pool of examples and stored in
``<cache>/features/<dataset>-[head-]<key>.pt``, keyed by the backbone's identity
(weights' checksum and preprocessing, special tokens included), the data set and
the examples. Files are written atomically; a corrupt or mismatching file is
recomputed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
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
    except (OSError, RuntimeError, KeyError, EOFError, ValueError):
        stored = None
    if stored is not None and all(t.shape[0] == rows for t in stored.values()):
        return stored
    path.unlink(missing_ok=True)  # unreadable or not these examples: recompute
    return None


def _store(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    buffer = io.BytesIO()
    torch.save({k: v.contiguous() for k, v in tensors.items()}, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def cached_last_layer_inputs(
    backbone, data, indices: np.ndarray, progress: bool = False
) -> LastLayerInputs:
    """The last layer's inputs for ``data[indices]``, from the cache or computed and cached."""
    path = feature_directory() / f"{data.name}-{cache_key(backbone.identity, data, indices)}.pt"
    stored = _load(path, len(indices))
    if stored is not None and stored["hidden"].shape[:2] == stored["token_mask"].shape:
        return LastLayerInputs(stored["hidden"], stored["token_mask"])
    subset = data.subset(indices)
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
    _store(path, {"hidden": inputs.hidden, "token_mask": inputs.token_mask})
    return inputs


def cached_head_features(backbone, data, indices: np.ndarray) -> torch.Tensor:
    """The pre-trained model's output row read by the head (token 0, after the final norm
    for vision) for ``data[indices]`` ``[N, D]``, from the cache or computed and cached."""
    key = cache_key({**backbone.identity, "output": "token-0"}, data, indices)
    path = feature_directory() / f"{data.name}-head-{key}.pt"
    stored = _load(path, len(indices))
    if stored is not None:
        return stored["features"]
    features = backbone.cls_output(data.subset(indices))
    _store(path, {"features": features})
    return features
