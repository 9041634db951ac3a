"""The parts of a dequantized 8-bit value, as the ONNX importer writes
DequantizeLinear (cast to f32, minus the zero point cast to f32, times the
scale), for the rewrites that compute on the integers instead
(integer_matmul.py, integer_conv.py)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph

f32, i16 = Float32Type(), IntegerType(16)
_EIGHT_BIT = ("i8", "ui8")


@dataclass
class Dequantized:
    """A value that is (quantized - zero) * scale, with its parts."""

    quantized: SSAValue
    zero: SSAValue | None
    scale: SSAValue


def _owner(value: SSAValue, kind: type) -> Operation | None:
    return value.owner if isinstance(value.owner, kind) else None


def _integer_source(value: SSAValue) -> SSAValue | None:
    """x where value = cast(x) from an integer type of at most 16 bits."""
    cast = _owner(value, graph.CastOp)
    if cast is None:
        return None
    element = cast.input.type.element_type
    if not isinstance(element, IntegerType) or not 1 < element.width.data <= 16:
        return None
    return cast.input


def dequantized(value: SSAValue) -> Dequantized | None:
    """The parts of an f32 `value` that dequantizes an 8-bit tensor."""
    if value.type.element_type != f32:
        return None
    mul = _owner(value, graph.MulOp)
    if mul is None:
        return None
    for centered, scale in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
        zero = None
        sub = _owner(centered, graph.SubOp)
        if sub is not None:
            zero = _integer_source(sub.rhs)
            centered = sub.lhs if zero is not None else centered
            if zero is None:
                continue
        quantized = _integer_source(centered)
        if quantized is not None and str(quantized.type.element_type) in _EIGHT_BIT:
            return Dequantized(quantized, zero, scale)
    return None


def shape_of(value: SSAValue | None) -> list[int]:
    """The value's shape ([] for None: an absent zero point)."""
    return [] if value is None else list(value.type.get_shape())


def one_value(value: SSAValue | None) -> bool:
    """Whether `value` holds one element (or is absent)."""
    return all(size == 1 for size in shape_of(value))


def centered_i16(rewriter_ops: list, part: Dequantized) -> SSAValue:
    """quantized - zero (or quantized) in i16: exact for 8-bit values and
    zero points; the ops are appended to `rewriter_ops`."""

    def add(op: Operation) -> SSAValue:
        rewriter_ops.append(op)
        return op.results[0]

    shape = shape_of(part.quantized)
    values = add(graph.CastOp.build_from([part.quantized], TensorType(i16, shape)))
    if part.zero is None:
        return values
    zero = add(graph.CastOp.build_from([part.zero], TensorType(i16, shape_of(part.zero))))
    return add(graph.SubOp.build_from([values, zero]))


def scaled_product(
    ops: list[Operation],
    product: Operation,
    a_scale: SSAValue,
    b_scale: SSAValue,
    b_scale_shape: list[int] | None,
) -> SSAValue:
    """The f32 value of an integer product (matmul or convolution) of two
    dequantized operands: its i32 sum times a_scale * b_scale (B's scale
    reshaped to `b_scale_shape` first, where given, to line up with the
    result). The product and the ops made are appended to `ops`."""

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    if b_scale_shape is not None:
        b_scale = add(graph.ReshapeOp.build_from([b_scale], TensorType(f32, b_scale_shape)))
    total = add(product)
    shape = list(total.type.get_shape())
    widened = add(graph.CastOp.build_from([total], TensorType(f32, shape)))
    scale = add(graph.MulOp.build_from([a_scale, b_scale]))
    return add(graph.MulOp.build_from([widened, scale]))


def dequantize(ops: list[Operation], parts: Dequantized, values: SSAValue) -> SSAValue:
    """(values - zero) * scale in f32, for 8-bit `values` moved or pooled
    from `parts.quantized` (a rewrite that runs on the bytes dequantizes
    after); the ops are appended to `ops`."""

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    shape = shape_of(values)
    result = add(graph.CastOp.build_from([values], TensorType(f32, shape)))
    if parts.zero is not None:
        zero = add(graph.CastOp.build_from([parts.zero], TensorType(f32, shape_of(parts.zero))))
        result = add(graph.SubOp.build_from([result, zero]))
    return add(graph.MulOp.build_from([result, parts.scale]))
