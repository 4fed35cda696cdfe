r"""The last layer evaluated for the [CLS] token only, from cached inputs, with the head on top.

The classifier reads only the [CLS] output, so only the [CLS] row of the last
layer's attention matters. For head :math:`h` with query :math:`q_h = W_Q^{h}
x_0 + b_Q^{h}` and keys :math:`k_{h,t} = W_K^{h} x_t + b_K^{h}`,

.. math::

   q_h^\top k_{h,t} = x_t^\top \big( (W_K^{h})^\top q_h \big) + q_h^\top b_K^{h},

so one ``D``-vector :math:`u_h = (W_K^{h})^\top q_h` per head replaces the key
projection of every token: an epoch costs :math:`O(N H T D)` instead of
:math:`O(N T D^2)`. The values depend only on frozen weights and are computed
once per run. The result is the model's own [CLS] output (tested against the
full forward pass); the sub-modules used are the model's, so the trained query
and key live in the model itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from verify.realworld.backbones import LastLayerInputs


@dataclass
class PreparedInputs:
    """Frozen, per-run quantities: the key-side inputs, the values, the residual, the mask."""

    keys_input: torch.Tensor  # [N, T, D]: what the query/key projections read
    values: torch.Tensor  # [N, T, D]: value projections (frozen)
    residual: torch.Tensor  # [N, D]: the [CLS] hidden state entering the layer
    token_mask: torch.Tensor  # [N, T]

    def __len__(self) -> int:
        return self.keys_input.shape[0]


def _is_vision(layer: nn.Module) -> bool:
    return hasattr(layer, "norm1")


def _projections(layer: nn.Module) -> tuple[nn.Linear, nn.Linear, nn.Linear]:
    if _is_vision(layer):
        return layer.attention.q_proj, layer.attention.k_proj, layer.attention.v_proj
    attention = layer.attention.self
    return attention.query, attention.key, attention.value


class CLSReadout(nn.Module):
    """Logits and [CLS] attention of ``backbone`` + linear head, from the last layer's inputs."""

    def __init__(self, backbone, num_classes: int) -> None:
        super().__init__()
        self.layer = backbone.last_layer
        self.final_norm = getattr(backbone.model, "layernorm", None)
        self.num_heads = backbone.num_heads
        width = (
            self.layer.mlp.fc1.in_features
            if _is_vision(self.layer)
            else self.layer.attention.self.query.in_features
        )
        self.head = nn.Linear(width, num_classes)

    @torch.no_grad()
    def prepare(self, inputs: LastLayerInputs) -> PreparedInputs:
        hidden = inputs.hidden
        keys_input = self.layer.norm1(hidden) if _is_vision(self.layer) else hidden
        _, _, value = _projections(self.layer)
        return PreparedInputs(keys_input, value(keys_input), hidden[:, 0], inputs.token_mask)

    def attention(self, prepared: PreparedInputs) -> torch.Tensor:
        """[CLS] attention probabilities ``[N, H, T]`` (padding gets exactly 0)."""
        query, key, _ = _projections(self.layer)
        n, _, width = prepared.keys_input.shape
        head_width = width // self.num_heads
        q = query(prepared.keys_input[:, 0]).view(n, self.num_heads, head_width)
        key_weight = key.weight.view(self.num_heads, head_width, width)
        u = torch.einsum("nhe,hed->nhd", q, key_weight)
        offset = torch.einsum("nhe,he->nh", q, key.bias.view(self.num_heads, head_width))
        scores = torch.einsum("ntd,nhd->nht", prepared.keys_input, u) + offset[..., None]
        scores = scores / math.sqrt(head_width)
        scores = scores.masked_fill(~prepared.token_mask[:, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)

    def cls_output(self, prepared: PreparedInputs, attention: torch.Tensor) -> torch.Tensor:
        n, tokens, width = prepared.values.shape
        values = prepared.values.view(n, tokens, self.num_heads, width // self.num_heads)
        context = torch.einsum("nht,nthe->nhe", attention, values).reshape(n, width)
        layer = self.layer
        if _is_vision(layer):
            hidden = prepared.residual + layer.layer_scale1(layer.attention.o_proj(context))
            hidden = hidden + layer.layer_scale2(layer.mlp(layer.norm2(hidden)))
            return self.final_norm(hidden)
        attended = layer.attention.output.LayerNorm(
            layer.attention.output.dense(context) + prepared.residual
        )
        return layer.output.LayerNorm(layer.output.dense(layer.intermediate(attended)) + attended)

    def forward(self, prepared: PreparedInputs) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits ``[N, C]`` and [CLS] attention ``[N, H, T]``."""
        attention = self.attention(prepared)
        return self.head(self.cls_output(prepared, attention)), attention
