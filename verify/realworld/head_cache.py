r"""Cache of the head phase: each seed's head, stored by what it depends on.

The head (phase 1) reads nothing but the head pool's features (the pre-trained
model's output row, fixed because the backbone is frozen), their clean labels, the
number of classes, the pre-trained pooler when the protocol trains it, the settings
its fit uses (:func:`head_settings`) and, for the Adam fit, the seed. A fitted head
is stored at ``<features directory>/heads/<dataset>-<key>.pt``, ``key`` the SHA-256
of all of these (features, labels and pooler by content) with the format version,
the PyTorch version and thread count. So it is fit once per (data set, seed, head
settings), whatever the n, noise levels or attention-phase settings of the groups
that read it, across processes and calls; reading it back gives the same tensors bit
for bit. The L-BFGS head draws nothing at random: one entry serves every seed. Files
are written atomically; an unreadable one is refitted.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
from pathlib import Path
from typing import Any

import torch

from verify.output.files import atomic_write_bytes
from verify.realworld.features import feature_directory
from verify.realworld.protocols import Protocol
from verify.realworld.readout import Heads

FORMAT_VERSION = 1
#: The settings each head fit reads (the rest of the protocol never reaches phase 1).
FIT_SETTINGS = {
    "lbfgs": ("head_fit", "head_examples", "head_l2", "head_iterations"),
    "adam": (
        "head_fit",
        "head_examples",
        "head_pooler",
        "head_epochs",
        "head_learning_rate",
        "head_batch_size",
    ),
}


def head_settings(protocol: Protocol) -> dict[str, Any]:
    """The protocol's settings that its head fit reads."""
    return {name: getattr(protocol, name) for name in FIT_SETTINGS[protocol.head_fit]}


def seeded(protocol: Protocol) -> bool:
    """Whether the head depends on the seed (the Adam fit draws its init and batch order)."""
    return protocol.head_fit == "adam"


def head_directory() -> Path:
    return feature_directory() / "heads"


def head_key(
    dataset: str,
    settings: dict[str, Any],
    seed: int | None,
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    pooler: tuple[torch.Tensor, ...] = (),
) -> str:
    """SHA-256 (first 20 hex digits) of everything a head depends on (module docstring)."""
    payload = {
        "dataset": dataset,
        "settings": settings,
        "seed": seed,
        "classes": num_classes,
        "format": FORMAT_VERSION,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "shapes": [list(t.shape) for t in (features, labels, *pooler)],
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode())
    for tensor in (features, labels, *pooler):
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()[:20]


def head_path(dataset: str, key: str) -> Path:
    return head_directory() / f"{dataset}-{key}.pt"


def load_head(path: Path) -> tuple[Heads, dict[str, Any]] | None:
    """The one-member head stored at ``path`` and what its fit recorded, or None."""
    if not path.is_file():
        return None
    try:
        stored = torch.load(path, weights_only=True)
        tensors = [stored.get(name) for name in ("weight", "bias", "pooler_weight", "pooler_bias")]
        info = json.loads(stored["info"])
    except (OSError, RuntimeError, KeyError, EOFError, ValueError, pickle.UnpicklingError):
        path.unlink(missing_ok=True)  # unreadable: refit
        return None
    return Heads(*tensors), info


def store_head(path: Path, heads: Heads, info: dict[str, Any]) -> None:
    """Store a one-member head and its fit's record atomically."""
    tensors = {"weight": heads.classifier_weight, "bias": heads.classifier_bias}
    if heads.pooler_weight is not None:
        tensors |= {"pooler_weight": heads.pooler_weight, "pooler_bias": heads.pooler_bias}
    buffer = io.BytesIO()
    torch.save(
        {**{k: v.detach().contiguous() for k, v in tensors.items()}, "info": json.dumps(info)},
        buffer,
    )
    atomic_write_bytes(path, buffer.getvalue())
