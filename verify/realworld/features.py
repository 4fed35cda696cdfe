"""Cache of the hidden states entering the last layer, computed once per example.

The backbone below the last layer is frozen, so these states never change: they
are computed once for a pool of examples and stored in
``<cache>/features/<dataset>-<key>.pt``, keyed by the backbone's identity
(weights' checksum and preprocessing), the data set and the example indices.
Files are written atomically; a corrupt or mismatching file is recomputed.
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


def cached_last_layer_inputs(
    backbone, data, indices: np.ndarray, progress: bool = False
) -> LastLayerInputs:
    """The last layer's inputs for ``data[indices]``, from the cache or computed and cached."""
    key = cache_key(backbone.identity, data, indices)
    path = feature_directory() / f"{data.name}-{key}.pt"
    if path.is_file():
        try:
            stored = torch.load(path, weights_only=True)
            hidden, mask = stored["hidden"], stored["token_mask"]
            readable = True
        except (OSError, RuntimeError, KeyError, EOFError, ValueError):
            readable = False
        if (
            readable
            and hidden.shape[0] == len(indices) == mask.shape[0]
            and hidden.shape[:2] == mask.shape
        ):
            return LastLayerInputs(hidden, mask)
        path.unlink(missing_ok=True)  # unreadable or not these examples: recompute
    subset = data.subset(indices)
    if data.modality == "text":  # one tokenisation: every chunk padded to the pool's length
        inputs = backbone.last_layer_inputs(subset)
    else:
        from tqdm.auto import tqdm

        chunks = []
        for start in tqdm(
            range(0, len(indices), CHUNK),
            desc=f"cache {data.name}",
            disable=not progress,
            unit="chunk",
        ):
            chunks.append(
                backbone.last_layer_inputs(
                    subset.subset(np.arange(start, min(start + CHUNK, len(indices))))
                )
            )
        inputs = LastLayerInputs(
            torch.cat([c.hidden for c in chunks]), torch.cat([c.token_mask for c in chunks])
        )
    buffer = io.BytesIO()
    torch.save({"hidden": inputs.hidden.contiguous(), "token_mask": inputs.token_mask}, buffer)
    atomic_write_bytes(path, buffer.getvalue())
    return inputs
