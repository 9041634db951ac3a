"""Converters of quantized ONNX models: the QDQ format (QuantizeLinear,
DequantizeLinear, DynamicQuantizeLinear) and the operator format
(MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, and the
com.microsoft ops onnxruntime's quantization tools emit: QLinearAdd,
QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
MatMulIntegerToFloat, DynamicQuantizeMatMul).

Each becomes graph ops with ONNX's arithmetic, written out:
    dequantize  (x - zero_point) * scale in f32, given in the scale's type
    quantize    saturate(round_half_even(x / scale) + zero_point)
(graph.cast saturates float -> integer). An integer product is a widening
graph.matmul of the operands minus their zero points, held in i16 (an 8-bit
value minus an 8-bit zero point always fits), accumulated in i32; a QLinear
op requantizes that sum with a_scale * b_scale / y_scale. Scales and zero
points are per tensor, per channel along `axis`, or per block of
`block_size` elements along it. Quantized values are 8- or 16-bit, 4- or
2-bit integers (saturated to their range), or float8/float4 (x / scale
rounded to the format, saturated unless `saturate` = 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness, TensorType
from xdsl.ir import Attribute, SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.element_types import element_type
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, reshape, saturated
from graphcompiler.frontends.onnx.ops_window import (
    _kernel,
    _pad_spatial,
    _slice_axis,
    _spatial_rank,
    _window,
    convolution,
    pool,
)
from graphcompiler.ir.narrow_floats import FORMATS

MICROSOFT = "com.microsoft"
f32 = Float32Type()
i16, i32 = IntegerType(16), IntegerType(32)
_QUANTIZED = {"i8", "ui8", "i16", "ui16", "i4", "ui4", "i2", "ui2", *FORMATS}
"""Element types a quantized tensor may have (their graph spelling)."""
_QUANTIZED_NAMES = "i8, u8, i16, u16, i4, u4, i2, u2, float8 or float4"


def _cast(node: Node, value: SSAValue, element: Attribute) -> SSAValue:
    if value.type.element_type == element:
        return value
    return node.make("cast", [value], TensorType(element, value.type.get_shape()))


def _quantized_input(node: Node, index: int, what: str) -> SSAValue:
    value = node.value(index)
    element = value.type.element_type
    if str(element) not in _QUANTIZED:
        raise node.error(
            f"{what} has element type {element}; quantized values are {_QUANTIZED_NAMES}"
        )
    return value


def _along(node: Node, parameter: SSAValue, rank: int, axis: int, what: str) -> SSAValue:
    """A scale or zero point shaped to broadcast against a rank-`rank` tensor:
    one value, or one per index of dim `axis` (per-channel)."""
    shape = parameter.type.get_shape()
    if len(shape) == 0 or list(shape) == [1]:
        return reshape(node, parameter, [])
    if len(shape) != 1:
        raise node.error(
            f"{what} has shape {list(shape)}: one value, or one per channel (block-wise "
            "parameters need block_size)"
        )
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    return reshape(node, parameter, [shape[0]] + [1] * (rank - axis - 1))


def _along_blocks(
    node: Node, parameter: SSAValue, shape: list[int], axis: int, what: str, block: int
) -> SSAValue:
    """A block-wise scale or zero point (one per `block` indices of dim
    `axis`) repeated to `shape`: each value `block` times along `axis`."""
    rank, dims = len(shape), list(parameter.type.get_shape())
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    blocks = -(-shape[axis] // block)
    expected = shape[:axis] + [blocks] + shape[axis + 1 :]
    if dims != expected:
        raise node.error(f"{what} has shape {dims}, expected {expected} (block_size {block})")
    element = parameter.type.element_type
    repeated = node.make(
        "broadcast_to",
        [reshape(node, parameter, dims[: axis + 1] + [1] + dims[axis + 1 :])],
        TensorType(element, dims[: axis + 1] + [block] + dims[axis + 1 :]),
    )
    flat = reshape(node, repeated, dims[:axis] + [blocks * block] + dims[axis + 1 :])
    if blocks * block == shape[axis]:
        return flat
    return node.make(
        "slice", [flat], TensorType(element, shape),
        starts=[0] * rank, ends=shape, steps=[1] * rank,
    )  # fmt: skip


def _parameter(node: Node, index: int, shape: list[int], what: str, block: int) -> SSAValue | None:
    """Input `index` (a scale or zero point; None when absent) shaped to
    broadcast against a tensor of `shape`, along attribute `axis`."""
    if not node.has_input(index):
        return None
    axis = int(node.attr("axis", 1))
    if block:
        return _along_blocks(node, node.value(index), shape, axis, what, block)
    return _along(node, node.value(index), len(shape), axis, what)


def _block_size(node: Node) -> int:
    block = int(node.attr("block_size", 0))
    if block < 0:
        raise node.error(f"block_size {block} is negative")
    return block


def dequantize(node: Node, x: SSAValue, scale: SSAValue, zero: SSAValue | None) -> SSAValue:
    """(x - zero) * scale, given in the scale's float type but computed in
    f32: f16 would round x - zero of 16-bit values (onnxruntime widens
    too). An i32 x subtracts its zero point in i32, where it is exact.
    Scale and zero are already broadcastable."""
    element = scale.type.element_type
    values = x
    if zero is not None and x.type.element_type == i32:
        values, zero = node.make("sub", [x, zero]), None
    values = _cast(node, values, f32)
    if zero is not None:
        values = node.make("sub", [values, _cast(node, zero, f32)])
    return _cast(node, node.make("mul", [values, _cast(node, scale, f32)]), element)


def quantize(
    node: Node,
    x: SSAValue,
    scale: SSAValue | None,
    zero: SSAValue | None,
    element: Attribute,
    saturate: bool = True,
) -> SSAValue:
    """saturate(round(x / scale) + zero) as `element`, computed in f32 (f16
    and bf16 inputs too); no scale: x is already divided. A float8 or
    float4 `element` rounds x / scale + zero to its format instead (and
    saturates only with `saturate`)."""
    values = _cast(node, x, f32)
    if scale is not None:
        values = node.make("div", [values, _cast(node, scale, f32)])
    fmt = FORMATS.get(str(element))
    if fmt is None:
        values = node.make("round", [values])
    if zero is not None:
        values = node.make("add", [values, _cast(node, zero, f32)])
    if fmt is not None:
        return _cast(node, saturated(node, values, fmt.max_value) if saturate else values, element)
    if element.width.data < 8:  # graph.cast wraps to 4 and 2 bits: saturate first
        unsigned = element.signedness.data == Signedness.UNSIGNED
        low = 0 if unsigned else -(1 << (element.width.data - 1))
        high = (1 << element.width.data) - 1 if unsigned else -low - 1
        values = node.make("clamp", [values], min=float(low), max=float(high))
    return _cast(node, values, element)


def _output_element(node: Node, zero_index: int) -> Attribute:
    if node.has_input(zero_index):
        element = node.input_type(zero_index).element_type
    else:
        element = element_type(node.attr("output_dtype", 0) or TensorProto.UINT8, node.where)
    if str(element) not in _QUANTIZED:
        raise node.error(f"quantizing to {element} is not supported ({_QUANTIZED_NAMES})")
    return element


@converter("DequantizeLinear")
def _dequantize_linear(node: Node) -> list:
    block = _block_size(node)
    x = node.value(0)
    if str(x.type.element_type) not in _QUANTIZED | {"i32"}:
        raise node.error(
            f"x has element type {x.type.element_type}; {_QUANTIZED_NAMES} or i32 expected"
        )
    output_dtype = node.attr("output_dtype", 0)
    if output_dtype and element_type(output_dtype, node.where) != node.input_type(1).element_type:
        raise node.unsupported_attribute("output_dtype", "it differs from x_scale's type")
    shape = list(x.type.get_shape())
    scale = _parameter(node, 1, shape, "x_scale", block)
    zero = _parameter(node, 2, shape, "x_zero_point", block)
    return [dequantize(node, x, scale, zero)]


@converter("QuantizeLinear")
def _quantize_linear(node: Node) -> list:
    block = _block_size(node)
    saturate = node.require_attr("saturate", [0, 1], 1)  # float8 only
    node.require_attr("precision", [0], 0)
    x = node.value(0)
    shape = list(x.type.get_shape())
    element = _output_element(node, 2)
    scale = _parameter(node, 1, shape, "y_scale", block)
    zero = _parameter(node, 2, shape, "y_zero_point", block)
    return [quantize(node, x, scale, zero, element, bool(saturate))]


def dynamic_quantization(node: Node, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """DynamicQuantizeLinear: u8 values, their f32 scale and f32 zero point
    (a whole number), from the range of x widened to hold 0."""
    x = _cast(node, x, f32)
    axes = list(range(len(x.type.get_shape())))
    zero = node.scalar(0.0, x)
    high = node.make("maximum", [node.make("reduce_max", [x], axes=axes, keep_dims=False), zero])
    low = node.make("minimum", [node.make("reduce_min", [x], axes=axes, keep_dims=False), zero])
    spread = node.make("sub", [high, low])
    empty = node.make("equal", [spread, zero])
    spread = node.make("select", [empty, node.scalar(1.0, x), spread])
    scale = node.make("div", [spread, node.scalar(255.0, x)])
    shift = node.make("sub", [zero, node.make("div", [low, scale])])
    zero_point = node.make("round", [node.make("clamp", [shift], min=0.0, max=255.0)])
    values = quantize(node, x, scale, zero_point, IntegerType(8, Signedness.UNSIGNED))
    return values, scale, zero_point


@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(node: Node) -> list:
    if not graph.is_float(node.input_type(0).element_type):
        raise node.error(f"x has element type {node.input_type(0).element_type}, expected f32")
    values, scale, zero_point = dynamic_quantization(node, node.value(0))
    return [values, scale, _cast(node, zero_point, values.type.element_type)]


# --- integer products ------------------------------------------------------------------


def _centered(node: Node, x: SSAValue, zero: SSAValue | None, element: Attribute) -> SSAValue:
    """x - zero as `element` (zero already broadcastable)."""
    values = _cast(node, x, element)
    return values if zero is None else node.make("sub", [values, _cast(node, zero, element)])


def _zero_along(node: Node, index: int, rank: int, axis: int, what: str) -> SSAValue | None:
    if not node.has_input(index):
        return None
    return _along(node, node.value(index), rank, axis, what)


def integer_matmul(
    node: Node, a: SSAValue, b: SSAValue, a_zero: SSAValue | None, b_zero: SSAValue | None
) -> SSAValue:
    """sum_k (a - a_zero)(b - b_zero) in i32: a widening matmul of i16
    operands. a_zero is one value or one per row of a; b_zero one value or
    one per column of b."""
    a_rank, b_rank = len(a.type.get_shape()), len(b.type.get_shape())
    if a_rank < 2 or b_rank < 2:
        raise node.error("integer matmul operands need rank 2 or more")
    if a_zero is not None and a_zero.type.get_shape() and list(a_zero.type.get_shape()) != [1]:
        a_zero = _along(node, a_zero, a_rank, a_rank - 2, "a_zero_point")
    else:
        a_zero = None if a_zero is None else reshape(node, a_zero, [])
    if b_zero is not None:
        b_zero = _along(node, b_zero, b_rank, b_rank - 1, "b_zero_point")
    shape_a, shape_b = a.type.get_shape(), b.type.get_shape()
    result = TensorType(i32, [*_batch(node, shape_a, shape_b), shape_a[-2], shape_b[-1]])
    operands = [_centered(node, a, a_zero, i16), _centered(node, b, b_zero, i16)]
    return node.make("matmul", operands, result)


def _batch(node: Node, a: tuple, b: tuple) -> list[int]:
    return list(np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2])))


def _requantize(
    node: Node, acc: SSAValue, multiplier: SSAValue, zero: SSAValue | None, element: Attribute
) -> SSAValue:
    scaled = node.make("mul", [_cast(node, acc, f32), multiplier])
    return quantize(node, scaled, None, zero, element)


def _product_scale(node: Node, *scales: SSAValue, divide: SSAValue | None = None) -> SSAValue:
    scale = _cast(node, scales[0], f32)
    for other in scales[1:]:
        scale = node.make("mul", [scale, _cast(node, other, f32)])
    return scale if divide is None else node.make("div", [scale, _cast(node, divide, f32)])


@converter("MatMulInteger")
def _matmul_integer(node: Node) -> list:
    a, b = _quantized_input(node, 0, "A"), _quantized_input(node, 1, "B")
    a_zero = node.value(2) if node.has_input(2) else None
    b_zero = node.value(3) if node.has_input(3) else None
    return [integer_matmul(node, a, b, a_zero, b_zero)]


def _rows_scale(node: Node, scale: SSAValue, rank: int) -> SSAValue:
    """A per-row scale of a matmul's A as [M, 1]."""
    return _along(node, scale, rank, rank - 2, "a_scale")


@converter("QLinearMatMul")
def _qlinear_matmul(node: Node) -> list:
    a, b = _quantized_input(node, 0, "a"), _quantized_input(node, 3, "b")
    acc = integer_matmul(node, a, b, node.value(2), node.value(5))
    rank_a, rank_b = len(a.type.get_shape()), len(b.type.get_shape())
    a_scale = _rows_scale(node, node.value(1), rank_a)
    b_scale = _along(node, node.value(4), rank_b, rank_b - 1, "b_scale")
    multiplier = _product_scale(node, a_scale, b_scale, divide=node.value(6))
    return [
        _requantize(
            node, acc, multiplier, reshape(node, node.value(7), []), _output_element(node, 7)
        )
    ]


EXACT_F32_TERMS = (1 << 24) // (255 * 255)
"""Products of 8-bit values minus their zero points (|v| <= 255) summed in
f32 stay exact integers while a sum has at most this many terms (258)."""


def _integer_conv(node: Node, x_zero: int, w_zero: int, bias: int | None) -> SSAValue:
    """The i32 convolution of (x - x_zero) and (w - w_zero), plus the i32
    bias (per output channel); inputs at indices x_zero/w_zero/bias. Sums of
    up to EXACT_F32_TERMS products run as an f32 convolution (exact, and on
    the f32 kernels: depthwise, small channel counts); longer ones as an
    im2col and a widening integer matmul (exact, on the i16-pair kernels)."""
    x, weight = _quantized_input(node, 0, "x"), _quantized_input(node, 3 if bias else 1, "w")
    rank = len(x.type.get_shape())
    if rank not in (3, 4, 5):
        raise node.error(f"x has rank {rank}; quantized convolutions are 1-D, 2-D or 3-D")
    node.attr("kernel_shape")
    kernel = weight.type.get_shape()[2:]
    strides, dilations, pads = _window(node, node.shape(0)[2:], kernel)
    groups = int(node.attr("group", 1))
    x = _centered(node, x, _zero_along(node, x_zero, rank, 1, "x_zero_point"), i16)
    weight = _centered(node, weight, _zero_along(node, w_zero, rank, 0, "w_zero_point"), i16)
    terms = weight.type.get_shape()[1] * math.prod(kernel)
    if terms <= EXACT_F32_TERMS:
        x, weight = _cast(node, x, f32), _cast(node, weight, f32)
        result = convolution(node, x, weight, strides, dilations, pads, groups)
    elif groups == 1 and rank == 4:
        result = _im2col_matmul(node, x, weight, strides, dilations, pads)
    elif groups == 1 and rank == 3:  # a 1-D convolution is a 2-D one over one row
        (n, c, length), (o, i, k) = x.type.get_shape(), weight.type.get_shape()
        result = _im2col_matmul(
            node, reshape(node, x, [n, c, 1, length]), reshape(node, weight, [o, i, 1, k]),
            [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]],
        )  # fmt: skip
        result = reshape(node, result, [n, o, result.type.get_shape()[3]])
    else:
        x, weight = _cast(node, x, i32), _cast(node, weight, i32)
        result = convolution(node, x, weight, strides, dilations, pads, groups)
    result = _cast(node, result, i32)
    if bias is not None and node.has_input(bias):
        channels = node.shape(bias)[0]
        bias_value = reshape(node, node.value(bias), [channels] + [1] * (rank - 2))
        result = node.make("add", [result, bias_value])
    return result


def _im2col_matmul(node: Node, x: SSAValue, weight: SSAValue, strides, dilations, pads):
    """conv2d as pixel rows [N, OH*OW, KH*KW*C] (one strided slice of the
    padded input, channels last, per filter tap) times the weights
    [O, KH*KW*C], a widening matmul. Channels go last once, on the input:
    transposing the columns instead moved KH*KW times the data."""
    (n, c, h, w), (o, _, kh, kw) = x.type.get_shape(), weight.type.get_shape()
    x = _pad_spatial(node, x, pads[:2], pads[2:])
    out_h = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    out_w = (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    if out_h <= 0 or out_w <= 0:
        raise node.error("the window does not fit the input")
    x = node.make("transpose", [x], perm=[0, 2, 3, 1])  # [N, H, W, C]
    taps = []
    for i in range(kh):
        rows = _slice_axis(node, x, 1, i * dilations[0], out_h, strides[0])
        for j in range(kw):
            taps.append(_slice_axis(node, rows, 2, j * dilations[1], out_w, strides[1]))
    columns = taps[0] if len(taps) == 1 else node.make("concat", taps, axis=3)
    pixels = reshape(node, columns, [n, out_h * out_w, kh * kw * c])
    weights = node.make("transpose", [weight], perm=[0, 2, 3, 1])  # [O, KH, KW, C]
    weights = reshape(node, weights, [o, kh * kw * c])
    product = node.make(
        "matmul", [pixels, weights], TensorType(i32, [n, out_h * out_w, o]), transpose_b=True
    )
    product = node.make("transpose", [product], perm=[0, 2, 1])
    return reshape(node, product, [n, o, out_h, out_w])


@converter("ConvInteger")
def _conv_integer(node: Node) -> list:
    return [_integer_conv(node, 2, 3, None)]


@converter("QLinearConv")
def _qlinear_conv(node: Node) -> list:
    acc = _integer_conv(node, 2, 5, 8)
    rank = len(acc.type.get_shape())
    w_scale = _along(node, node.value(4), rank, 1, "w_scale")  # one per output channel
    multiplier = _product_scale(
        node, reshape(node, node.value(1), []), w_scale, divide=node.value(6)
    )
    return [
        _requantize(
            node, acc, multiplier, reshape(node, node.value(7), []), _output_element(node, 7)
        )
    ]


# --- onnxruntime's contrib ops ------------------------------------------------------------


def _matmul_to_float(
    node: Node, a_values: SSAValue, a_zero, a_scale: SSAValue, b_index: int, b_scale_index: int,
    b_zero_index: int, bias_index: int,
) -> SSAValue:  # fmt: skip
    b = _quantized_input(node, b_index, "B")
    b_zero = node.value(b_zero_index) if node.has_input(b_zero_index) else None
    acc = integer_matmul(node, a_values, b, a_zero, b_zero)
    rank_b = len(b.type.get_shape())
    b_scale = _along(node, node.value(b_scale_index), rank_b, rank_b - 1, "b_scale")
    result = node.make("mul", [_cast(node, acc, f32), _product_scale(node, a_scale, b_scale)])
    if node.has_input(bias_index):
        result = node.make("add", [result, node.value(bias_index)])
    return result


@converter("MatMulIntegerToFloat", domain=MICROSOFT)
def _matmul_integer_to_float(node: Node) -> list:
    a = _quantized_input(node, 0, "A")
    a_zero = node.value(4) if node.has_input(4) else None
    a_scale = _rows_scale(node, node.value(2), len(a.type.get_shape()))
    return [_matmul_to_float(node, a, a_zero, a_scale, 1, 3, 5, 6)]


@converter("DynamicQuantizeMatMul", domain=MICROSOFT)
def _dynamic_quantize_matmul(node: Node) -> list:
    values, scale, zero_point = dynamic_quantization(node, node.value(0))
    return [_matmul_to_float(node, values, zero_point, scale, 1, 2, 3, 4)]


def _dequantized(node: Node, index: int) -> SSAValue:
    """Input `index` dequantized with the per-tensor scale and zero point
    at index + 1 and index + 2 (the QLinear* contrib ops' layout)."""
    x = _quantized_input(node, index, f"input #{index}")
    zero = reshape(node, node.value(index + 2), []) if node.has_input(index + 2) else None
    return dequantize(node, x, _cast(node, reshape(node, node.value(index + 1), []), f32), zero)


def _requantized(node: Node, value: SSAValue, scale_index: int, like: int) -> SSAValue:
    zero = (
        reshape(node, node.value(scale_index + 1), []) if node.has_input(scale_index + 1) else None
    )
    element = zero.type.element_type if zero else node.input_type(like).element_type
    return quantize(node, value, reshape(node, node.value(scale_index), []), zero, element)


def _qlinear(
    float_op: Callable[[Node, list[SSAValue]], SSAValue], inputs: tuple[int, ...], out: int
):
    """A contrib QLinear op: dequantize `inputs`, apply `float_op`, quantize
    with the scale at `out` (and zero point at out + 1)."""

    def convert(node: Node) -> list:
        values = [_dequantized(node, index) for index in inputs]
        return [_requantized(node, float_op(node, values), out, inputs[0])]

    return convert


def _global_average(node: Node, values: list[SSAValue]) -> SSAValue:
    node.require_attr("channels_last", [0], 0)
    rank = len(values[0].type.get_shape())
    return node.make("reduce_mean", values, axes=list(range(2, rank)), keep_dims=True)


def _average_pool(node: Node, values: list[SSAValue]) -> SSAValue:
    node.require_attr("channels_last", [0], 0)
    _spatial_rank(node, values[0])
    return pool(node, values[0], "avg", _kernel(node), bool(node.attr("count_include_pad", 0)))


def _softmax(node: Node, values: list[SSAValue]) -> SSAValue:
    """opset < 13 (the `opset` attribute) flattens from `axis`; 13+ is one axis."""
    axis = int(node.attr("axis", -1))
    if int(node.attr("opset", 13)) >= 13:
        return node.make("softmax", values, axis=axis)
    shape = values[0].type.get_shape()
    axis %= len(shape)
    rows = reshape(node, values[0], [math.prod(shape[:axis]), math.prod(shape[axis:])])
    return reshape(node, node.make("softmax", [rows], axis=1), shape)


_CONTRIB = {
    "QLinearAdd": (lambda node, v: node.make("add", v), (0, 3), 6),
    "QLinearMul": (lambda node, v: node.make("mul", v), (0, 3), 6),
    "QLinearSigmoid": (lambda node, v: node.make("sigmoid", v), (0,), 3),
    "QLinearLeakyRelu": (
        lambda node, v: node.make("leaky_relu", v, alpha=float(node.attr("alpha", 0.01))), (0,), 3,
    ),
    "QLinearGlobalAveragePool": (_global_average, (0,), 3),
    "QLinearAveragePool": (_average_pool, (0,), 3),
    "QLinearSoftmax": (_softmax, (0,), 3),
}  # fmt: skip
for _name, (_op, _inputs, _out) in _CONTRIB.items():
    converter(_name, domain=MICROSOFT)(_qlinear(_op, _inputs, _out))


@converter("QLinearConcat", domain=MICROSOFT)
def _qlinear_concat(node: Node) -> list:
    """Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input."""
    if node.num_inputs < 5 or (node.num_inputs - 2) % 3:
        raise node.error("expects Y_scale, Y_zero_point and (X, scale, zero point) triples")
    values = [_dequantized(node, index) for index in range(2, node.num_inputs, 3)]
    joined = node.make("concat", values, axis=int(node.attr("axis")))
    return [_requantized(node, joined, 0, 2)]


@converter("QGemm", domain=MICROSOFT)
def _qgemm(node: Node) -> list:
    """alpha * A' B' (+ C, i32 at scale a_scale * b_scale), requantized with
    y_scale and y_zero_point when given, else f32."""
    a, b = _quantized_input(node, 0, "A"), _quantized_input(node, 3, "B")
    if node.attr("transA", 0):
        a = node.make("transpose", [a], perm=[1, 0])
    transposed = bool(node.attr("transB", 0))
    b_zero = node.value(5) if node.has_input(5) else None
    if transposed:
        b = node.make("transpose", [b], perm=[1, 0])
    acc = integer_matmul(node, a, b, node.value(2) if node.has_input(2) else None, b_zero)
    if node.has_input(6):
        acc = node.make("add", [acc, _cast(node, node.value(6), i32)])
    columns = acc.type.get_shape()[-1]
    b_scale = node.value(4)
    if b_scale.type.get_shape() and math.prod(b_scale.type.get_shape()) > 1:
        b_scale = reshape(node, b_scale, [columns])
    else:
        b_scale = reshape(node, b_scale, [])
    scale = _product_scale(node, reshape(node, node.value(1), []), b_scale)
    scale = node.make("mul", [scale, node.scalar(float(node.attr("alpha", 1.0)), scale)])
    if not node.has_input(7):
        return [node.make("mul", [_cast(node, acc, f32), scale])]
    multiplier = node.make("div", [scale, _cast(node, reshape(node, node.value(7), []), f32)])
    zero = reshape(node, node.value(8), []) if node.has_input(8) else None
    element = zero.type.element_type if zero else a.type.element_type
    return [_requantize(node, acc, multiplier, zero, element)]
