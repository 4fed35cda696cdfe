"""Speed by construction in the real-world protocol: one training epoch, three ways.

For the same examples and the same trainable query/key, one forward + backward of

1. the whole backbone from its raw input (what fine-tuning without a cache costs),
2. the model's own last layer on cached hidden states (every token's row), and
3. :class:`verify.realworld.readout.LastLayer` (only the query row, one key-side
   vector per head instead of a key projection per token),

timed in one process, reported as ratios against (3). The three give the same
[CLS] logits (tests/test_realworld_models.py). Run: ``python benchmarks/realworld_readout.py``
(needs the realworld extra and the fetched assets).
"""

from __future__ import annotations

import json
import time

import numpy as np
import torch

from verify.realworld.backbones import ImageBackbone, TextBackbone
from verify.realworld.datasets import load_dataset
from verify.realworld.readout import Heads, LastLayer


def best_of(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(backbone, data, examples: int) -> dict[str, float]:
    subset = data.subset(np.arange(examples))
    last = LastLayer(backbone)
    width = (
        backbone.last_layer.mlp.fc1.in_features
        if data.modality == "image"
        else backbone.model.config.hidden_size
    )
    head = torch.nn.Linear(width, data.num_classes)
    heads = Heads(head.weight.detach()[None], head.bias.detach()[None])
    labels = torch.as_tensor(subset.labels)
    query, key = backbone.query_key()
    for parameter in backbone.model.parameters():
        parameter.requires_grad_(parameter is query.weight or parameter is key.weight)
    cached = backbone.last_layer_inputs(subset)
    prepared = last.prepare(cached).select(torch.arange(examples)[None])
    weights = last.pretrained_query_key()
    for tensor in weights.tensors():
        tensor.requires_grad_(True)

    def whole_backbone():
        if data.modality == "text":
            out = backbone.model(**backbone.tokens(list(subset.inputs))).last_hidden_state[:, 0]
        else:
            out = backbone.model(pixel_values=backbone.pixels(subset.inputs)).pooler_output
        torch.nn.functional.cross_entropy(head(out), labels).backward()

    def last_layer_all_tokens():
        mask = cached.token_mask
        if data.modality == "text":
            extended = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
            out = backbone.last_layer(cached.hidden, attention_mask=extended)
            out = (out[0] if isinstance(out, tuple) else out)[:, 0]
        else:
            out = backbone.last_layer(cached.hidden)
            out = backbone.model.layernorm(out[0] if isinstance(out, tuple) else out)[:, 0]
        torch.nn.functional.cross_entropy(head(out), labels).backward()

    def cls_readout():
        logits, _ = last(weights, heads, prepared)
        torch.nn.functional.cross_entropy(logits[0], labels).backward()

    seconds = {
        name: best_of(function)
        for name, function in (
            ("whole_backbone", whole_backbone),
            ("last_layer_all_tokens", last_layer_all_tokens),
            ("cls_readout", cls_readout),
        )
    }
    return {
        **seconds,
        "examples": examples,
        "tokens": int(cached.hidden.shape[1]),
        "ratio_whole_backbone": seconds["whole_backbone"] / seconds["cls_readout"],
        "ratio_last_layer": seconds["last_layer_all_tokens"] / seconds["cls_readout"],
    }


def main() -> None:
    torch.manual_seed(0)
    results = {
        "text (MiniLM, rotten-tomatoes)": measure(
            TextBackbone(), load_dataset("rotten-tomatoes"), 200
        ),
        "image (DINOv2-small, mnist)": measure(ImageBackbone(), load_dataset("mnist"), 200),
        "threads": torch.get_num_threads(),
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
