"""graph-integer-matmul's convolutions (and max pools): a conv2d of dequantized 8-bit
operands (the QDQ format) becomes an integer convolution with the scales
applied to its sum, as the pass does for matmuls (integer_matmul.py):

    %y = conv2d (dequantize %qx), (dequantize %qw)        (%qw constant)
 -> %acc = conv2d (sub (cast %qx -> i16), %zx), (cast %qw -> i16) : -> i32
    %y   = mul (cast %acc -> f32), (mul %sx, %sw)          (%sw: [O, 1, 1])

with one scale and zero point for the input and one scale per output
channel (or one) for the weights. The second rewrite then convolves the
8-bit values themselves, u8 by s8 (`vpdpbusd`'s operands, four to a word),
where the weights are symmetric (s8 with zero point 0, what onnxruntime's
quantize_static makes, or u8 with 128, shifted to s8) and the input's zero
point is a constant:

    sum over taps of (x - zx) w = sum (x w) - zx sum w

where padding reads zx (the conv's `pad_value`), so that a padded tap
contributes (zx - zx) w = 0 as in the dequantized convolution, and the
second term is one constant per output channel. The sums are exact in i32.
An s8 input is shifted to u8 (x + 128, zx + 128). Only convolutions of
one group are rewritten: the byte-quad tiles (conv_blocked.py) take no
groups, and grouped ones (depthwise) stay f32, on the f32 kernels, so that
graph-block-layout can still block the whole network. Convolutions with other
weight zero points, an input zero point computed at run time (dynamic
quantization's ConvInteger) or per-channel input scales stay on i16
values, computed by a direct loop nest.

A max pool of a dequantized tensor pools the 8-bit values and dequantizes
after (rewrite_max_pool).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import substitute_if_typed
from graphcompiler.passes.graph.dequantized import (
    centered_i16,
    dequantize,
    dequantized,
    one_value,
    scaled_product,
    shape_of,
)
from graphcompiler.passes.graph.eight_bit_matmul import (
    RewriteOps,
    centered_bytes,
    constant_values,
)

i32 = IntegerType(32)
s8, u8 = IntegerType(8), IntegerType(8, Signedness.UNSIGNED)


def _per_output_channel(value: SSAValue | None, outputs: int) -> bool:
    """One value, or one per output channel ([O, 1, 1, 1] or [O])."""
    shape = shape_of(value)
    return one_value(value) or (shape[0] == outputs and all(size == 1 for size in shape[1:]))


def rewrite_dequantized(conv: graph.Conv2dOp) -> bool:
    """The first rewrite of the module doc; whether it applied."""
    if conv.group_count != 1:
        return False
    x, w = dequantized(conv.input), dequantized(conv.weight)
    if x is None or w is None or not isinstance(w.quantized.owner, graph.ConstantOp):
        return False
    outputs = conv.weight.type.get_shape()[0]
    if not (one_value(x.scale) and one_value(x.zero)):
        return False
    if not (_per_output_channel(w.scale, outputs) and _per_output_channel(w.zero, outputs)):
        return False
    ops: list[Operation] = []
    try:
        operands = [centered_i16(ops, x), centered_i16(ops, w)]
        shape = shape_of(conv.result)
        acc = graph.Conv2dOp.build_from(operands, TensorType(i32, shape), **conv.properties)
        # one weight scale per channel lies along the result's axis 1
        per_channel = None if one_value(w.scale) else [outputs, 1, 1]
        result = scaled_product(ops, acc, x.scale, w.scale, per_channel)
    except VerifyException:
        return False
    return substitute_if_typed(conv, ops, result)


def _constant_integer(value: SSAValue | None) -> int | None:
    """The one integer a constant `value` holds (constant_values), else None."""
    values = constant_values(value)
    if values is None or np.unique(values).size != 1:
        return None
    return int(values.flat[0])


def rewrite_eight_bit(conv: graph.Conv2dOp) -> bool:
    """The second rewrite of the module doc; whether it applied."""
    if conv.result.type.element_type != i32 or conv.padding_value or conv.group_count != 1:
        return False
    x_parts, w_parts = centered_bytes(conv.input, -3), centered_bytes(conv.weight, -3)
    if x_parts is None or w_parts is None:
        return False
    (x, zx), (w, zw) = x_parts, w_parts
    zero = 0 if zx is None else _constant_integer(zx)
    # s8 weights with zero point 0, or u8 ones with 128 (s8 weights shifted)
    weight_zero = {s8: 0, u8: 128}[w.type.element_type]
    if zw is None:
        symmetric = weight_zero == 0
    else:
        symmetric = _constant_integer(zw) == weight_zero
    if zero is None or not symmetric or not isinstance(w.owner, graph.ConstantOp):
        return False
    ops = RewriteOps()
    try:
        if x.type.element_type == s8:
            x, _ = ops.shift(x, None, 128, u8)
            zero += 128
        if w.type.element_type == u8:  # folds with the constant weights
            w, _ = ops.shift(w, None, -128, s8)
        share = None  # zx sum w per output channel, made first (as matmuls' terms)
        if zero:
            outputs = shape_of(w)[0]
            sums = ops.make("reduce_sum", [ops.cast(w, i32)], axes=[1, 2, 3], keep_dims=False)
            sums = ops.make("reshape", [sums], TensorType(i32, [outputs, 1, 1]))
            zero_value = ops.make("constant", [], value=np.array(zero, np.int32), dtype="i32")
            share = ops.make("mul", [zero_value, sums])
        acc = ops.make("conv2d", [x, w], conv.result.type, **{**_window(conv), "pad_value": zero})
        if share is not None:
            acc = ops.make("sub", [acc, share])
    except ValueError:
        return False
    return substitute_if_typed(conv, ops.ops, acc)


def _window(conv: graph.Conv2dOp) -> dict:
    """The convolution's window properties as Python values (create_op's)."""
    return {
        "strides": conv.window_strides,
        "padding": conv.window_padding,
        "dilations": conv.window_dilations,
        "groups": conv.group_count,
    }


def rewrite_max_pool(pool: graph.MaxPool2dOp) -> bool:
    """max_pool2d(dequantize(q)) -> dequantize(max_pool2d(q)) for a positive
    constant scale (one, and one zero point): dequantizing is increasing,
    so it commutes with a max (padding never wins either way). The pool
    then moves bytes, and the layer before it hands it u8 (ResNet's stem
    passed f32 through a reorder and the pool)."""
    parts = dequantized(pool.input)
    if parts is None or not (one_value(parts.scale) and one_value(parts.zero)):
        return False
    scales = constant_values(parts.scale)
    if scales is None or not np.all(scales > 0):
        return False
    shape = shape_of(pool.result)
    quantized = parts.quantized
    try:
        pooled = graph.MaxPool2dOp.build_from(
            [quantized], TensorType(quantized.type.element_type, shape), **pool.properties
        )
        ops: list[Operation] = [pooled]
        value = dequantize(ops, parts, pooled.result)
    except VerifyException:
        return False
    return substitute_if_typed(pool, ops, value)
