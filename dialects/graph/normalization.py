"""Normalizations (layer_norm, rms_norm, instance_norm, batch_norm) and
attention."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    HasAxis,
    HasEpsilon,
    _fmt,
    _require_float,
    _require_same_element_type,
    _shape,
    bool_value,
    broadcast_shapes,
    f32_attr,
    int_value,
    normalize_axis,
)


def _check_parameter_shape(
    cls: type[GraphOp], types: Sequence[TensorType], index: int, expected: Sequence[int]
) -> None:
    if _shape(types[index]) != list(expected):
        raise VerifyException(
            f"{cls.operand_role(index)} has shape {_fmt(_shape(types[index]))}, expected "
            f"{_fmt(expected)}"
        )


@irdl_op_definition
class LayerNormOp(HasAxis, HasEpsilon, GraphOp):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta, with mean and variance
    over the dims axis..rank-1; gamma and beta have the shape of those dims.
    Compiled: per block (64 vectors per accumulator) the mean, then the centred sum of
    squares (f32 vector partial sums), blocks merged with Chan's formula in
    f64: as accurate as numpy's float32 (max error ~4e-6 against float64 on
    2^20 values around 100).

    The variance is the biased one (divided by the element count, as in
    PyTorch and ONNX LayerNormalization); operands are in the order input,
    gamma (scale), beta (bias); epsilon defaults to 1e-5.

    Example:

        %y = graph.layer_norm %x, %gamma, %beta {epsilon = 1.0e-06 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.layer_norm"
    input = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        for index in (1, 2):
            _check_parameter_shape(cls, operand_types, index, shape[axis:])
        return operand_types[0]


@irdl_op_definition
class RmsNormOp(HasAxis, HasEpsilon, GraphOp):
    """x / sqrt(mean(x**2) + epsilon) * scale, the mean over the dims
    axis..rank-1 (ONNX RMSNormalization, T5/LLaMA's RMSNorm); scale has the
    shape of those dims; `axis` defaults to -1, `epsilon` to 1e-5. Compiled
    with layer_norm's row moments (f64 mean and variance; mean(x**2) =
    variance + mean**2); NaN or inf in a row makes the row NaN, as numpy.

    Example:

        %y = graph.rms_norm %x, %scale : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.rms_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $scale attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        _check_parameter_shape(cls, operand_types, 1, shape[axis:])
        return operand_types[0]


@irdl_op_definition
class InstanceNormOp(HasEpsilon, GraphOp):
    """(x - mean) / sqrt(var + epsilon) * scale[c] + bias[c] for input
    [N, C, D1, ...], mean and (biased) variance over D1, ... per (n, c)
    (ONNX InstanceNormalization); scale and bias are [C]; `epsilon` defaults
    to 1e-5. Compiled with layer_norm's row moments (f64); NaN or inf in a
    slice makes the slice NaN, as numpy.

    Example:

        %y = graph.instance_norm %x, %scale, %bias : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8x8xf32>
    """

    name = "graph.instance_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        if len(shape) < 3:
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}, expected at least 3 "
                "([N, C, D1, ...])"
            )
        for index in (1, 2):
            _check_parameter_shape(cls, operand_types, index, [shape[1]])
        return operand_types[0]


@irdl_op_definition
class AttentionOp(GraphOp):
    """Scaled dot-product attention over the last two dims:
    softmax(query x keyᵀ * scale + mask, over keys) x value, with query
    [..., Sq, D], key [..., Sk, D] (or [..., D, Sk] with `key_transposed`),
    value [..., Sk, Dv], an optional additive mask broadcasting to
    [..., Sq, Sk], batch dims broadcasting like matmul's. Made by the
    `attention` rewrite rule from matmul -> scale -> [+ mask] -> softmax ->
    matmul. Compiled as one kernel (online softmax over key blocks, the
    Sq x Sk scores never stored whole); a row whose scores are all -inf, or
    that holds +inf or NaN, is NaN as in softmax. Accuracy: the scores and
    products accumulate in f32 in a different order than the unfused ops
    (about 1e-6 relative for D, Sk up to 1024).

    `sequence_major` names the operands (of "query", "key", "value") and
    "result" laid out [..., S, H, D] instead of [..., H, S, D]: the last
    batch dim (the heads) after the sequence, as projections write them.
    The `attention` rule reads exporters' head-split transposes this way
    and writes the head merge so, so neither is a copy.

    Grouped-query attention: the key's and the value's heads (their last
    batch dim) may divide the query's, Hq = g * Hkv; query head i then reads
    key and value head i // g, as ONNX's Attention and Llama-style models'
    repeat_kv define it. The `attention` rule folds exporters' repeat
    (reshape -> expand -> reshape) into it, so the key and value are read
    once per group, not copied g times.

    With `zero_nan_probabilities`, probabilities the softmax makes NaN are 0
    instead (torch's scaled_dot_product_attention, as exported, follows its
    softmax with where(isnan(p), 0, p)): such a row is sum_k 0 * value_k,
    0 where the values are finite and NaN where a key's value is inf or NaN.

    Example:

        %o = graph.attention %q, %k, %v {scale = 0.125 : f32} : (tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32>
    """

    name = "graph.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    scale = prop_def(FloatAttr, default_value=f32_attr(1.0))
    key_transposed = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    zero_nan_probabilities = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    sequence_major = prop_def(ArrayAttr[StringAttr], default_value=ArrayAttr([]))
    assembly_format = (
        "$query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)"
    )

    @property
    def scale_value(self) -> float:
        """`scale`: the factor of the scores."""
        return self.scale.value.data

    @property
    def key_is_transposed(self) -> bool:
        """`key_transposed`: key is [..., D, Sk]."""
        return bool(self.key_transposed.value.data)

    @property
    def zeroes_nan_probabilities(self) -> bool:
        """`zero_nan_probabilities`: a row the softmax makes NaN weighs every value by 0."""
        return bool(self.zero_nan_probabilities.value.data)

    def is_sequence_major(self, role: str) -> bool:
        """Is `role` ("query", "key", "value", "result") [..., S, H, D]?"""
        return role in _sequence_major_roles(self.properties)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shapes = [_shape(t) for t in operand_types]
        sequence_major = _sequence_major_roles(properties)
        for index, shape in enumerate(shapes[:3]):
            least = 3 if ATTENTION_ROLES[index] in sequence_major else 2
            if len(shape) < least:
                raise VerifyException(
                    f"{cls.operand_role(index)} has rank {len(shape)}, expected at least {least}"
                )
            if ATTENTION_ROLES[index] in sequence_major:
                shapes[index] = swap_heads_and_sequence(shape)
        if "key" in sequence_major and bool_value(properties, "key_transposed"):
            raise VerifyException("a sequence-major key cannot be key_transposed")
        (sq, d), (sk, dv) = shapes[0][-2:], shapes[2][-2:]
        key = shapes[1][-2:][::-1] if bool_value(properties, "key_transposed") else shapes[1][-2:]
        if key != [sk, d]:
            raise VerifyException(
                f"{cls.operand_role(1)} has {_fmt(key)} keys x features, expected {_fmt([sk, d])} "
                f"from the query's features and the value's keys"
            )
        roles = [cls.operand_role(i) for i in range(3)]
        batches = [s[:-2] for s in shapes[:3]]
        for index in (1, 2):  # grouped heads broadcast like the query's heads
            if head_groups(shapes[0], shapes[index]) > 1:
                batches[index] = [*batches[index][:-1], shapes[0][-3]]
        batch = broadcast_shapes(batches, roles)
        if len(shapes) == 4:
            scores = [*batch, sq, sk]
            if broadcast_shapes([shapes[3], scores], [cls.operand_role(3), "the scores"]) != scores:
                raise VerifyException(
                    f"{cls.operand_role(3)} of shape {_fmt(shapes[3])} does not broadcast to the "
                    f"scores' shape {_fmt(scores)}"
                )
        if "result" in sequence_major:
            if not batch:
                raise VerifyException("a sequence-major result needs a heads dim")
            return TensorType(operand_types[0].element_type, [*batch[:-1], sq, batch[-1], dv])
        return TensorType(operand_types[0].element_type, [*batch, sq, dv])


ATTENTION_ROLES = ("query", "key", "value", "result")
"""graph.attention's tensors by role, in `sequence_major`'s words."""


def swap_heads_and_sequence(shape: Sequence[int]) -> list[int]:
    """[..., H, S, D] <-> [..., S, H, D]."""
    return [*shape[:-3], shape[-2], shape[-3], shape[-1]]


def head_groups(query: Sequence[int], operand: Sequence[int]) -> int:
    """How many query heads share each head of a key or value (shapes
    [..., H, S, D]): g where the query has g * H heads, g > 1, H > 1;
    else 1 (equal heads, or numpy broadcasting)."""
    if len(query) < 3 or len(operand) < 3:
        return 1
    heads, shared = query[-3], operand[-3]
    if shared <= 1 or heads <= shared or heads % shared:
        return 1
    return heads // shared


def _sequence_major_roles(properties) -> set[str]:
    value = properties.get("sequence_major")
    roles = [name.data for name in value.data] if isinstance(value, ArrayAttr) else []
    unknown = [role for role in roles if role not in ATTENTION_ROLES]
    if unknown or len(set(roles)) != len(roles):
        raise VerifyException(
            f"sequence_major {roles} must name each of {', '.join(ATTENTION_ROLES)} at most once"
        )
    return set(roles)


@irdl_op_definition
class BatchNormOp(HasEpsilon, GraphOp):
    """Inference batch norm over channel dim 1:
    (x - mean) / sqrt(var + epsilon) * scale + bias; element-wise, in this
    order (a few ulp).

    Operands in ONNX BatchNormalization's order: input [N, C, ...], then
    scale, bias, mean, var, each of shape [C] (PyTorch's
    `F.batch_norm(x, running_mean, running_var, weight, bias)` orders them
    differently); epsilon defaults to 1e-5.

    Example:

        %y = graph.batch_norm %x, %scale, %bias, %mean, %var : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
    """

    name = "graph.batch_norm"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    epsilon = prop_def(FloatAttr, default_value=f32_attr(1e-5))
    assembly_format = (
        "$input `,` $scale `,` $bias `,` $mean `,` $var attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        if len(shape) < 2:
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}, expected at least 2"
            )
        for index in range(1, 5):
            _check_parameter_shape(cls, operand_types, index, [shape[1]])
        return operand_types[0]
