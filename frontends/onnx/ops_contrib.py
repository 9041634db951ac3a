"""Converters of the fused transformer ops onnxruntime's transformer
optimizer (and `optimum-cli ... --optimize O1` and above) writes into
models: SkipLayerNormalization, SkipSimplifiedLayerNormalization, Gelu,
BiasGelu, FastGelu, QuickGelu, EmbedLayerNormalization, Attention,
MultiHeadAttention and RotaryEmbedding (com.microsoft), and
SimplifiedLayerNormalization (RMS norm, which onnxruntime registers in the
default domain).

Each is the graph ops it fuses, so the compiler's own fusions apply:
- the norms: the residual sum (input + skip + bias), then graph.layer_norm
  or graph.rms_norm over the last axis; the statistics outputs (mean,
  inverse standard deviation) in f32 where a model reads them;
- EmbedLayerNormalization: the word, position and segment rows gathered
  and summed, then graph.layer_norm; its mask_index output counts each
  row's ones;
- the GELUs: graph.gelu's erf or tanh form of input + bias;
- Attention (BERT's: one projection to q, k and v) and MultiHeadAttention:
  head split, q kᵀ * scale + mask, softmax, x v, head merge, which the
  attention rule turns into one graph.attention read in place; masks in
  onnxruntime's forms (valid lengths, ends and starts, 0/1 per key or per
  query and key) and attention_bias; the past inputs are refused by name;
- RotaryEmbedding: the rotated halves (or even and odd features) of each
  head from the caches gathered at the positions.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _broadcast, _float_input, cast, converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis

MICROSOFT = "com.microsoft"

i32 = IntegerType(32)

SKIP_NORM_EPSILON = 1e-12
"""onnxruntime's default epsilon of the Skip*Normalization ops (kDefaultSkipLayerNormEpsilon)."""


def _wanted(node: Node, index: int) -> bool:
    return len(node.proto.output) > index and bool(node.proto.output[index])


def _plus(node: Node, x: SSAValue, index: int) -> SSAValue:
    """x + input `index` (broadcast), or x where the input is omitted."""
    return node.make("add", [x, node.value(index)]) if node.has_input(index) else x


def _statistics(node: Node, x: SSAValue, axis: int, epsilon: float, centred: bool) -> list:
    """(mean, 1 / sqrt(variance + epsilon)) over axes axis.., in f32, the
    normalized dims kept as 1; for an RMS norm the mean of squares is used."""
    wide = cast(node, x, Float32Type())
    axes = list(range(axis, len(x.type.get_shape())))
    mean = node.make("reduce_mean", [wide], axes=axes, keep_dims=True)
    spread = node.make("sub", [wide, mean]) if centred else wide
    variance = node.make("reduce_mean", [node.make("square", [spread])], axes=axes, keep_dims=True)
    inverse = node.make("rsqrt", [node.make("add", [variance, node.scalar(epsilon, variance)])])
    return [mean, inverse]


def _normalize(node: Node, x: SSAValue, simplified: bool, epsilon: float, axis: int) -> SSAValue:
    """layer_norm or rms_norm of x over axes axis.., scale input 2 (1 for
    SimplifiedLayerNormalization), bias input 3 for layer_norm."""
    shape = list(x.type.get_shape()[axis:])
    scale_index = 1 if node.op_type == "SimplifiedLayerNormalization" else 2
    scale = _broadcast(node, node.value(scale_index), shape)
    if simplified:
        return node.make("rms_norm", [x, scale], axis=axis, epsilon=epsilon)
    if node.has_input(3):
        bias = _broadcast(node, node.value(3), shape)
    else:
        bias = node.importer.constant_value(np.zeros(shape), x.type.element_type, node.label)
    return node.make("layer_norm", [x, scale, bias], axis=axis, epsilon=epsilon)


@converter("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", domain=MICROSOFT)
def _skip_normalization(node: Node) -> list:
    """Outputs: the normalized sum, mean, inverse std, the sum itself
    (which the next block's residual reads)."""
    simplified = node.op_type == "SkipSimplifiedLayerNormalization"
    x = _float_input(node)
    total = _plus(node, node.make("add", [x, node.value(1)]), 3 if simplified else 4)
    if list(total.type.get_shape()) != list(x.type.get_shape()):
        raise node.error("skip and bias must broadcast to the input's shape")
    epsilon = float(node.attr("epsilon", SKIP_NORM_EPSILON))
    axis = len(x.type.get_shape()) - 1
    results = [_normalize(node, total, simplified, epsilon, axis), None, None, total]
    if _wanted(node, 1) or _wanted(node, 2):
        results[1:3] = _statistics(node, total, axis, epsilon, centred=not simplified)
    return results[: max(1, len(node.proto.output))]


@converter("EmbedLayerNormalization", domain=MICROSOFT)
def _embed_layer_normalization(node: Node) -> list:
    """BERT's embeddings (input 0's word rows + the positions' rows, from
    position_ids or 0..S-1, + the segments' rows where given), layer-normed
    over the hidden dim; outputs: the normalized sum, mask_index (each
    row's count of mask == 1, as onnxruntime counts; 0 without a mask)
    and the sum itself."""
    ids, words, positions = node.value(0), node.value(2), node.value(3)
    batch, length = _shape_of(node, ids, 2, "input_ids")
    hidden = _shape_of(node, words, 2, "word_embedding")[1]
    total = node.make("gather", [words, ids], axis=0)
    if node.has_input(8):
        total = node.make("add", [total, node.make("gather", [positions, node.value(8)], axis=0)])
    elif _shape_of(node, positions, 2, "position_embedding")[0] < length:
        raise node.error(f"position_embedding has fewer rows than the {length} positions")
    else:
        total = node.make("add", [total, _slice_axis(node, positions, 0, 0, length)])
    if node.has_input(1) and node.has_input(4):
        total = node.make(
            "add", [total, node.make("gather", [node.value(4), node.value(1)], axis=0)]
        )
    if list(total.type.get_shape()) != [batch, length, hidden]:
        raise node.error(f"the embeddings do not sum to [{batch}, {length}, {hidden}]")
    gamma, beta = (_broadcast(node, node.value(i), [hidden]) for i in (5, 6))
    epsilon = float(node.attr("epsilon", SKIP_NORM_EPSILON))
    node.attr("mask_index_type")  # a type hint: the count is what onnxruntime's CPU kernel gives
    results = [node.make("layer_norm", [total, gamma, beta], axis=2, epsilon=epsilon), None, total]
    if _wanted(node, 1):
        if node.has_input(7):
            ones = node.make("equal", [node.value(7), node.scalar(1, node.value(7))])
            counted = node.make("reduce_sum", [cast(node, ones, i32)], axes=[1], keep_dims=False)
        else:
            counted = node.importer.constant_value(np.zeros(batch), i32, node.label)
        results[1] = counted
    return results[: max(1, len(node.proto.output))]


def _shape_of(node: Node, value: SSAValue, rank: int, what: str) -> list[int]:
    shape = list(value.type.get_shape())
    if len(shape) != rank:
        raise node.error(f"{what} must be of rank {rank}, not {len(shape)}")
    return shape


@converter("SimplifiedLayerNormalization")
def _simplified_layer_normalization(node: Node) -> list:
    """onnxruntime's RMS norm: X / sqrt(mean(X^2) + epsilon) * scale over
    axes axis..; outputs Y and the inverse RMS."""
    node.require_attr("stash_type", [1], 1)
    x = _float_input(node)
    rank = len(x.type.get_shape())
    axis = int(node.attr("axis", -1))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    epsilon = float(node.attr("epsilon", 1e-5))
    y = _normalize(node, x, True, epsilon, axis % rank)
    if _wanted(node, 1):
        return [y, _statistics(node, x, axis % rank, epsilon, centred=False)[1]]
    return [y]


@converter("Gelu", "BiasGelu", domain=MICROSOFT)
def _gelu(node: Node) -> list:
    """x * Phi(x) of input 0 (+ input 1 for BiasGelu), the erf form."""
    return [node.make("gelu", [_plus(node, _float_input(node), 1)], approximate="none")]


@converter("FastGelu", domain=MICROSOFT)
def _fast_gelu(node: Node) -> list:
    """GELU's tanh form of input 0 (+ the optional bias, input 1)."""
    return [node.make("gelu", [_plus(node, _float_input(node), 1)], approximate="tanh")]


@converter("QuickGelu", domain=MICROSOFT)
def _quick_gelu(node: Node) -> list:
    """x * sigmoid(alpha * x) (alpha 1.702 by default)."""
    x = _float_input(node)
    alpha = float(node.attr("alpha", 1.702))
    scaled = node.make("mul", [x, node.scalar(alpha, x)])
    return [node.make("mul", [x, node.make("sigmoid", [scaled])])]


# --- Attention and MultiHeadAttention --------------------------------------------------


def _heads(node: Node, x: SSAValue, heads: int) -> SSAValue:
    """[B, S, N * h] -> [B, N, S, h] (the head split the attention rule reads in place)."""
    batch, length, width = x.type.get_shape()
    if width % heads:
        raise node.error(f"hidden size {width} is not a multiple of num_heads {heads}")
    split = reshape(node, x, [batch, length, heads, width // heads])
    return node.make("transpose", [split], perm=[0, 2, 1, 3])


def _key_mask(node: Node, index: int, batch: int, queries: int, keys: int, fill: SSAValue):
    """The additive mask of input `index` ([B, 1, 1 or S, T]: 0 where
    attended, `fill` where not), in onnxruntime's forms: [B] valid lengths,
    [2B] ends then starts, [B, T] 0/1, [B, S, T] 0/1; a [B or 1, 1] dummy
    masks nothing. None where the input is omitted."""
    if not node.has_input(index):
        return None
    mask = node.value(index)
    shape = list(mask.type.get_shape())
    positions = node.importer.constant_value(np.arange(keys).reshape(1, keys), i32, node.label)
    if shape in ([batch], [2 * batch]):
        ends = reshape(node, _slice_axis(node, mask, 0, 0, batch), [batch, 1])
        masked = node.make("greater_equal", [positions, cast(node, ends, i32)])
        if shape == [2 * batch]:
            starts = reshape(node, _slice_axis(node, mask, 0, batch, batch), [batch, 1])
            early = node.make("less", [positions, cast(node, starts, i32)])
            masked = node.make("logical_or", [masked, early])
        masked = reshape(node, masked, [batch, 1, 1, keys])
    elif shape in ([batch, 1], [1, 1]) and keys != 1:
        return None
    elif shape in ([batch, keys], [batch, queries, keys]):
        zero = node.scalar(0, mask)
        masked = node.make("less_equal", [mask, zero])
        masked = reshape(node, masked, [batch, 1, *([queries] if len(shape) == 3 else [1]), keys])
    else:
        raise node.error(f"mask of shape {shape} is not supported (batch {batch}, keys {keys})")
    return node.make("select", [masked, fill, node.scalar(0.0, fill)])


def _scaled_dot_product(node, q, k, v, heads: int, mask_index: int, bias_index: int) -> SSAValue:
    """softmax(q kᵀ * scale + mask) v for [B, S, N * h] q, k, v; the result
    [B, S, N * hv]. Masked keys get mask_filter_value (-10000) added, so a
    row masked whole weighs its keys by their scores; future keys
    (unidirectional) get -inf, as in onnxruntime's CPU kernels."""
    batch, queries, width = q.type.get_shape()
    keys = k.type.get_shape()[1]
    scale = float(node.attr("scale", 0.0)) or 1.0 / math.sqrt(width // heads)
    fill = node.scalar(float(node.attr("mask_filter_value", -10000.0)), q)
    qh, kh, vh = (_heads(node, x, heads) for x in (q, k, v))
    scores = node.make("matmul", [qh, kh], transpose_b=True)
    scores = node.make("mul", [scores, node.scalar(scale, scores)])
    terms = [_key_mask(node, mask_index, batch, queries, keys, fill)]
    if node.attr("unidirectional", 0):
        future = np.triu(np.ones((queries, keys), bool), k=keys - queries + 1)
        causal = np.where(future, -np.inf, 0.0)
        terms.append(node.importer.constant_value(causal, q.type.element_type, node.label))
    if node.has_input(bias_index):
        terms.append(node.value(bias_index))
    for term in terms:
        if term is not None:
            scores = node.make("add", [scores, term])
    probabilities = node.make("softmax", [scores], axis=-1)
    context = node.make("matmul", [probabilities, vh])
    merged = node.make("transpose", [context], perm=[0, 2, 1, 3])
    heads_out, values = merged.type.get_shape()[2:]
    return reshape(node, merged, [batch, queries, heads_out * values])


def _refuse(node: Node, indices: dict[int, str], attributes: dict[str, object]) -> None:
    """One located error for the inputs and attribute values not supported."""
    for index, what in indices.items():
        if node.has_input(index):
            raise node.error(f"{what} (input {index}) is not supported")
    for name, allowed in attributes.items():
        node.require_attr(name, [allowed], allowed)


@converter("Attention", domain=MICROSOFT)
def _packed_attention(node: Node) -> list:
    """onnxruntime's BERT attention: input [B, S, Hin] x weights [Hin, Q + K
    + V] (+ bias) split into q, k, v (qkv_hidden_sizes, equal thirds by
    default), then multi-head attention with mask_index and attention_bias."""
    _refuse(
        node,
        {4: "past", 6: "past_sequence_length"},
        {"do_rotary": 0, "past_present_share_buffer": 0},
    )
    node.attr("rotary_embedding_dim")
    heads = int(node.attr("num_heads"))
    x = _float_input(node)
    projected = _plus(node, node.make("matmul", [x, node.value(1)]), 2)
    total = projected.type.get_shape()[-1]
    sizes = list(node.attr("qkv_hidden_sizes", [total // 3] * 3))
    if sum(sizes) != total or sizes[0] != sizes[1]:
        raise node.error(f"qkv_hidden_sizes {sizes} do not split {total} into q, k (equal) and v")
    starts = [0, sizes[0], sizes[0] + sizes[1]]
    q, k, v = (_slice_axis(node, projected, 2, s, n) for s, n in zip(starts, sizes, strict=True))
    if len(node.proto.output) > 1 and node.proto.output[1]:
        raise node.error("output 'present' is not supported")
    return [_scaled_dot_product(node, q, k, v, heads, 3, 5)]


@converter("MultiHeadAttention", domain=MICROSOFT)
def _multi_head_attention(node: Node) -> list:
    """query, key, value [B, S or L, N * h] (+ bias [3 * N * h]), with
    key_padding_mask and attention_bias; packed or pre-split forms and the
    past inputs are refused."""
    _refuse(node, {6: "past_key", 7: "past_value", 8: "past_sequence_length"}, {})
    heads = int(node.attr("num_heads"))
    q = _float_input(node)
    if not node.has_input(1) or not node.has_input(2):
        raise node.error("packed query, key and value are not supported (give key and value)")
    k, v = node.value(1), node.value(2)
    if any(len(x.type.get_shape()) != 3 for x in (q, k, v)):
        raise node.error("query, key and value must be [batch, sequence, hidden]")
    if node.has_input(3):
        widths = [x.type.get_shape()[2] for x in (q, k, v)]
        starts = [0, widths[0], widths[0] + widths[1]]
        bias = node.value(3)
        q, k, v = (
            node.make("add", [x, _slice_axis(node, bias, 0, s, w)])
            for x, s, w in zip((q, k, v), starts, widths, strict=True)
        )
    if any(n for n in node.proto.output[1:]):
        raise node.error("outputs 'present_key' and 'present_value' are not supported")
    return [_scaled_dot_product(node, q, k, v, heads, 4, 5)]


# --- RotaryEmbedding ----------------------------------------------------------------


@converter("RotaryEmbedding", domain=MICROSOFT)
def _rotary_embedding(node: Node) -> list:
    """Rotate the first rotary_embedding_dim features of each head by the
    cos and sin caches at the positions (position_ids [B, S], or [1]: an
    offset of 0, 1, ...): halves (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos),
    or even and odd features with `interleaved`. Input [B, S, N * h] (with
    num_heads) or [B, N, S, h]."""
    node.require_attr("is_packed_batching", [0], 0)
    node.require_attr("scale", [1.0], 1.0)
    x = _float_input(node)
    shape = list(x.type.get_shape())
    if len(shape) == 4:
        batch, _, length, head = shape
        heads_axis = 1
        grid = x
    elif len(shape) == 3:
        batch, length, width = shape
        heads = int(node.attr("num_heads", 0)) or None
        rotary = int(node.attr("rotary_embedding_dim", 0))
        heads = heads or (width // rotary if rotary else None)
        if not heads or width % heads:
            raise node.error(f"num_heads must divide the hidden size {width}")
        head = width // heads
        heads_axis = 2
        grid = reshape(node, x, [batch, length, heads, head])
    else:
        raise node.error(f"input of rank {len(shape)} is not supported (3 or 4)")
    rotary = int(node.attr("rotary_embedding_dim", 0)) or head
    if rotary > head or rotary % 2:
        raise node.error(f"rotary_embedding_dim {rotary} must be even and at most {head}")
    cos, sin = (_at_positions(node, i, batch, length, rotary // 2, heads_axis) for i in (2, 3))
    if node.attr("interleaved", 0):
        first, second = (_slice_axis(node, grid, 3, s, rotary // 2, 2) for s in (0, 1))
    else:
        first, second = (_slice_axis(node, grid, 3, s, rotary // 2) for s in (0, rotary // 2))
    new_first = node.make("sub", [node.make("mul", [first, cos]), node.make("mul", [second, sin])])
    new_second = node.make("add", [node.make("mul", [first, sin]), node.make("mul", [second, cos])])
    if node.attr("interleaved", 0):
        pairs = [reshape(node, v, [*v.type.get_shape(), 1]) for v in (new_first, new_second)]
        woven = node.make("concat", pairs, axis=4)
        rotated = reshape(node, woven, [*woven.type.get_shape()[:3], rotary])
    else:
        rotated = node.make("concat", [new_first, new_second], axis=3)
    if rotary < head:
        rotated = node.make(
            "concat", [rotated, _slice_axis(node, grid, 3, rotary, head - rotary)], axis=3
        )
    return [reshape(node, rotated, shape)]


def _at_positions(node, index: int, batch: int, length: int, half: int, heads_axis: int):
    """Cache input `index` [max positions, half] gathered at the positions,
    shaped to broadcast over the heads: [B, S, 1, half] or [B, 1, S, half]."""
    cache = node.value(index)
    positions = node.value(1)
    if list(positions.type.get_shape()) == [1]:
        steps = node.importer.constant_value(
            np.arange(length), positions.type.element_type, node.label
        )
        positions = reshape(node, node.make("add", [steps, positions]), [1, length])
    if list(cache.type.get_shape())[1:] != [half]:
        raise node.error(f"cos and sin caches must be [positions, {half}]")
    gathered = node.make("gather", [cache, positions], axis=0)
    rows = gathered.type.get_shape()[0]
    layout = [rows, length, 1, half] if heads_axis == 2 else [rows, 1, length, half]
    return reshape(node, gathered, layout)
