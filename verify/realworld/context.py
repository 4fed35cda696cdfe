"""What every run on one data set shares, loaded once per process: the backbone, the data,
the pools and their cached inputs.

The training pool and the test set are held as the last layer's prepared inputs
(:class:`~verify.realworld.readout.PreparedInputs`); the head pool only as the
pre-trained model's output row (``[N, D]``), which is all the head phase reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from verify.realworld.backbones import backbone_for
from verify.realworld.config import GroupConfig
from verify.realworld.datasets import load_dataset, split_pools
from verify.realworld.features import cached_head_features, cached_last_layer_inputs
from verify.realworld.readout import LastLayer, PreparedInputs


@dataclass
class Context:
    backbone: Any
    last: LastLayer
    data: Any
    pools: Any
    train: PreparedInputs
    test: PreparedInputs
    head_features: torch.Tensor  # [head pool, D]
    labels: dict[str, torch.Tensor]  # "train" / "test" / "head" -> clean labels of the pool

    @property
    def num_classes(self) -> int:
        return self.data.num_classes


_CONTEXTS: dict[tuple, Context] = {}


def context_key(config: GroupConfig) -> tuple:
    layout = config.layout
    return (
        config.dataset,
        layout.test_size,
        layout.train_pool,
        layout.head_pool_max,
        layout.pool_seed,
        config.backbone_options,
    )


def context_for(config: GroupConfig, progress: bool = False) -> Context:
    """The context of ``config``'s data set and preprocessing (loaded once per process)."""
    key = context_key(config)
    if key not in _CONTEXTS:
        _CONTEXTS[key] = _load_context(config, progress)
    return _CONTEXTS[key]


def _load_context(config: GroupConfig, progress: bool) -> Context:
    layout = config.layout
    data = load_dataset(config.dataset)
    backbone = backbone_for(data, **dict(config.backbone_options))
    for parameter in backbone.model.parameters():
        parameter.requires_grad_(False)
    pools = split_pools(
        len(data.labels),
        layout.test_size,
        layout.train_pool,
        layout.head_pool_max,
        layout.pool_seed,
    )
    last = LastLayer(backbone)
    prepared = {
        name: last.prepare(cached_last_layer_inputs(backbone, data, getattr(pools, name), progress))
        for name in ("train", "test")
    }
    labels = {
        name: torch.as_tensor(np.asarray(data.labels)[getattr(pools, name)])
        for name in ("train", "test", "head")
    }
    return Context(
        backbone,
        last,
        data,
        pools,
        prepared["train"],
        prepared["test"],
        cached_head_features(backbone, data, pools.head),
        labels,
    )


def release_contexts() -> None:
    """Forget every loaded context (the feature cache on disk stays)."""
    _CONTEXTS.clear()
