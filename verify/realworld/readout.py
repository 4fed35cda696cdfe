r"""The last layer evaluated for its query row only, for many independent runs at once.

The classifier reads one output row of the last layer: token 0 (the [CLS] token,
or without special tokens the first word piece). Only that row of the attention
matters. For head :math:`h` with query :math:`q_h = W_Q^{h} x_0 + b_Q^{h}` and
keys :math:`k_{h,t} = W_K^{h} x_t + b_K^{h}`,

.. math::

   q_h^\top k_{h,t} = x_t^\top \big( (W_K^{h})^\top q_h \big) + q_h^\top b_K^{h},

so one ``D``-vector :math:`u_h = (W_K^{h})^\top q_h` per head replaces the key
projection of every token (an epoch costs :math:`O(N H T D)` instead of
:math:`O(N T D^2)`), and the key bias term, the same for every token of a row,
cancels in the softmax: it is neither used nor trained. Values, the residual and
everything after the attention are frozen.

*Members*: ``M`` runs with their own query/key weights (``[M, D, D]``) and heads
are evaluated together. They are arranged as ``G`` data groups of ``E`` members
(``m = g E + e``); the members of a group read the same examples (``x`` has
shape ``[G, B, T, D]``), e.g. the noise levels of one seed, which share the
training subset and the batch order and differ in their labels. The members never
mix: each member's logits depend only on its own weights and examples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from verify.realworld.backbones import LastLayerInputs


@dataclass
class PreparedInputs:
    """Frozen per-example quantities of a pool: key-side inputs, values, residual, mask."""

    keys_input: torch.Tensor  # [N, T, D]: what the query/key projections read
    values: torch.Tensor  # [N, H, T, D/H]: value projections (frozen), per head
    residual: torch.Tensor  # [N, D]: the query-row hidden state entering the layer
    token_mask: torch.Tensor  # [N, T]

    def __len__(self) -> int:
        return self.keys_input.shape[0]

    def chunks(self, size: int) -> list[PreparedInputs]:
        """Consecutive examples, ``size`` at a time, each as one group ``[1, B, ...]`` (views,
        no copy)."""
        return [
            PreparedInputs(
                *(t[start : start + size][None] for t in self.tensors()),
            )
            for start in range(0, len(self), size)
        ]

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (self.keys_input, self.values, self.residual, self.token_mask)

    def select(self, index: torch.Tensor) -> PreparedInputs:
        """Examples ``index`` (any shape ``S``): tensors of shape ``S + (...)``."""
        return PreparedInputs(
            self.keys_input[index], self.values[index], self.residual[index], self.token_mask[index]
        )


@dataclass
class QueryKey:
    """Trainable query weights and biases and key weights of ``M`` members."""

    query_weight: torch.Tensor  # [M, D, D] (in, out): q = x W + b, nn.Linear's weight transposed
    query_bias: torch.Tensor  # [M, D]
    key_weight: torch.Tensor  # [M, D, D] (out, in), as nn.Linear's weight

    def tensors(self) -> list[torch.Tensor]:
        return [self.query_weight, self.query_bias, self.key_weight]

    def __len__(self) -> int:
        return self.query_weight.shape[0]


@dataclass
class Heads:
    """Per-member head: optional pooler ``tanh(P x + p)``, then the classifier ``W x + c``."""

    classifier_weight: torch.Tensor  # [M, C, D]
    classifier_bias: torch.Tensor  # [M, C]
    pooler_weight: torch.Tensor | None = None  # [M, D, D]
    pooler_bias: torch.Tensor | None = None  # [M, D]

    def tensors(self) -> list[torch.Tensor]:
        pooler = [] if self.pooler_weight is None else [self.pooler_weight, self.pooler_bias]
        return pooler + [self.classifier_weight, self.classifier_bias]

    def repeat(self, times: int) -> Heads:
        """Each member's head ``times`` times in a row (members ``m t`` to ``m t + t - 1``)."""
        return Heads(
            *(
                None if t is None else t.repeat_interleave(times, dim=0)
                for t in (
                    self.classifier_weight,
                    self.classifier_bias,
                    self.pooler_weight,
                    self.pooler_bias,
                )
            )
        )

    def first(self) -> Heads:
        """The first member's head."""
        return self.member(0)

    def member(self, index: int) -> Heads:
        """Member ``index``'s head, as one member."""
        return Heads(
            *(
                None if t is None else t[index : index + 1]
                for t in (
                    self.classifier_weight,
                    self.classifier_bias,
                    self.pooler_weight,
                    self.pooler_bias,
                )
            )
        )

    @staticmethod
    def stack(parts: list[Heads]) -> Heads:
        """The members of ``parts`` in order, as one set of heads."""
        names = ("classifier_weight", "classifier_bias", "pooler_weight", "pooler_bias")
        columns = [[getattr(part, name) for part in parts] for name in names]
        return Heads(*(None if c[0] is None else torch.cat(c) for c in columns))

    def __call__(self, features: torch.Tensor) -> torch.Tensor:
        """Logits ``[M, B, C]`` of features ``[M, B, D]``."""
        if self.pooler_weight is not None:
            features = torch.tanh(
                torch.baddbmm(
                    self.pooler_bias[:, None], features, self.pooler_weight.transpose(1, 2)
                )
            )
        return torch.baddbmm(
            self.classifier_bias[:, None], features, self.classifier_weight.transpose(1, 2)
        )


def is_vision(layer: nn.Module) -> bool:
    return hasattr(layer, "norm1")


def projections(layer: nn.Module) -> tuple[nn.Linear, nn.Linear, nn.Linear]:
    """The layer's query, key and value projections."""
    if is_vision(layer):
        return layer.attention.q_proj, layer.attention.k_proj, layer.attention.v_proj
    attention = layer.attention.self
    return attention.query, attention.key, attention.value


class LastLayer:
    """The frozen parts of a backbone's last layer, evaluated for many members."""

    def __init__(self, backbone) -> None:
        self.layer = backbone.last_layer
        self.final_norm = getattr(backbone.model, "layernorm", None)
        self.num_heads = backbone.num_heads
        self.pooler = getattr(backbone.model, "pooler", None)  # text: dense + tanh

    @torch.no_grad()
    def prepare(self, inputs: LastLayerInputs) -> PreparedInputs:
        hidden = inputs.hidden
        keys_input = self.layer.norm1(hidden) if is_vision(self.layer) else hidden
        value = projections(self.layer)[2](keys_input)
        n, tokens, width = value.shape
        heads = value.view(n, tokens, self.num_heads, width // self.num_heads).transpose(1, 2)
        return PreparedInputs(keys_input, heads.contiguous(), hidden[:, 0], inputs.token_mask)

    def pretrained_query_key(self) -> QueryKey:
        """The layer's own query and key weights as one member."""
        query, key, _ = projections(self.layer)
        return QueryKey(
            query.weight.detach().T[None].contiguous(),
            query.bias.detach()[None].clone(),
            key.weight.detach()[None].clone(),
        )

    def attention(self, weights: QueryKey, batch: PreparedInputs) -> torch.Tensor:
        """Query-row attention probabilities ``[G, B, E, H, T]`` (padding gets exactly 0)."""
        groups, size, tokens, width = batch.keys_input.shape
        members = len(weights) // groups
        heads, head_width = self.num_heads, width // self.num_heads
        first = batch.keys_input[:, None, :, 0]  # [G, 1, B, D]
        query = torch.matmul(first, weights.query_weight.reshape(groups, members, width, width))
        query = query + weights.query_bias.reshape(groups, members, 1, width)  # [G, E, B, D]
        query = query.view(groups, members, size, heads, head_width).transpose(2, 3)
        query = query.reshape(groups, members * heads, size, head_width)
        key = weights.key_weight.reshape(groups, members * heads, head_width, width)
        u = torch.matmul(query, key)  # [G, E*H, B, D]: (W_K^h)^T q_h
        u = u.transpose(1, 2).reshape(groups * size, members * heads, width)
        scores = torch.bmm(u, batch.keys_input.view(groups * size, tokens, width).transpose(1, 2))
        scores = (scores / math.sqrt(head_width)).view(groups, size, members, heads, tokens)
        scores = scores.masked_fill(~batch.token_mask[:, :, None, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)

    def outputs(self, attention: torch.Tensor, batch: PreparedInputs) -> torch.Tensor:
        """The query row's layer output ``[G*E, B, D]`` (final norm included for vision)."""
        groups, size, members, heads, tokens = attention.shape
        values = batch.values  # [G, B, H, T, f]
        mixed = torch.matmul(attention.permute(0, 1, 3, 2, 4), values)  # [G, B, H, E, f]
        context = mixed.permute(0, 3, 1, 2, 4).reshape(groups, members, size, -1)
        residual = batch.residual[:, None]  # [G, 1, B, D]
        layer = self.layer
        if is_vision(layer):
            hidden = residual + layer.layer_scale1(layer.attention.o_proj(context))
            hidden = hidden + layer.layer_scale2(layer.mlp(layer.norm2(hidden)))
            out = self.final_norm(hidden)
        else:
            attended = layer.attention.output.LayerNorm(
                layer.attention.output.dense(context) + residual
            )
            out = layer.output.LayerNorm(
                layer.output.dense(layer.intermediate(attended)) + attended
            )
        return out.reshape(groups * members, size, -1)

    def __call__(
        self, weights: QueryKey, heads: Heads, batch: PreparedInputs
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits ``[M, B, C]`` and attention ``[G, B, E, H, T]`` of a batch ``[G, B, ...]``."""
        attention = self.attention(weights, batch)
        return heads(self.outputs(attention, batch)), attention


def max_attention(attention: torch.Tensor) -> torch.Tensor:
    """Per member ``[M]``: the query row's largest attention probability, averaged over the
    examples and heads."""
    groups, size, members, heads, tokens = attention.shape
    return attention.amax(dim=-1).mean(dim=(1, 3)).reshape(groups * members)
