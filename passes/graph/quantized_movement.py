"""Part of graph-integer-matmul: data movement on the 8-bit values of a
QDQ model instead of on their dequantized f32.

Exporters put QuantizeLinear/DequantizeLinear pairs around every reshape and
transpose (a QDQ BERT's head split: dequantize, reshape, quantize,
dequantize, transpose, quantize, ...), so the moves ran on f32, four times
the bytes, with a requantization after each. Two rewrites undo that, as
onnxruntime's QDQ propagation does:

    transpose/reshape(dequantize(q))  ->  dequantize(transpose/reshape(q))
    quantize(dequantize(q, s, z), s, z)  ->  q

The first holds for one scale and zero point (a move does not look at the
values); the second is exact: (q - z) * s / s is within 1e-5 of the integer
q - z for |q - z| <= 255 and a normal, finite s, so rounding gives it back
and the saturating cast keeps it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import substitute_if_typed
from graphcompiler.passes.graph.dequantized import dequantize, dequantized, one_value, shape_of
from graphcompiler.passes.graph.eight_bit_matmul import constant_values

MOVES = (graph.TransposeOp, graph.ReshapeOp)
SMALLEST_SCALE, LARGEST_SCALE = 1e-30, 1e30
"""Scales for which (q - z) * s / s rounds back to q - z (normal, and no
overflow for |q - z| <= 255)."""


def rewrite_move(move: Operation) -> bool:
    """transpose/reshape of a dequantized value -> the move of its 8-bit
    values, dequantized after; whether it did."""
    parts = dequantized(move.operands[0])
    if parts is None or not (one_value(parts.scale) and one_value(parts.zero)):
        return False
    shape = shape_of(move.results[0])
    ops: list[Operation] = []
    try:
        moved_type = TensorType(parts.quantized.type.element_type, shape)
        if isinstance(move, graph.TransposeOp):
            moved = graph.TransposeOp.build_from([parts.quantized], perm=move.permutation)
        else:
            moved = graph.ReshapeOp.build_from([parts.quantized], moved_type)
        ops.append(moved)
        result = dequantize(ops, parts, moved.results[0])
    except VerifyException:
        return False
    return substitute_if_typed(move, ops, result)


def _quantized_parts(cast: graph.CastOp) -> tuple[SSAValue, SSAValue, SSAValue | None] | None:
    """(x, scale, zero) where `cast` is saturate(round(x / scale) + zero) to
    8 bits, as the ONNX importer writes QuantizeLinear (zero None: absent)."""
    if str(cast.result.type.element_type) not in ("i8", "ui8"):
        return None
    value, zero = cast.input, None
    if isinstance(value.owner, graph.AddOp):
        value, zero = value.owner.lhs, value.owner.rhs
    if not isinstance(value.owner, graph.RoundOp):
        return None
    divided = value.owner.input
    if not isinstance(divided.owner, graph.DivOp):
        return None
    return divided.owner.lhs, divided.owner.rhs, zero


def _same(a: SSAValue | None, b: SSAValue | None) -> bool:
    """Whether two one-value constants (absent: zero) hold the same number."""
    values = [np.zeros(1) if v is None else constant_values(v) for v in (a, b)]
    if any(v is None or v.size != 1 for v in values):
        return False
    return float(values[0].reshape(())) == float(values[1].reshape(()))


def rewrite_requantize(cast: graph.CastOp) -> bool:
    """quantize(dequantize(q)) with the same scale and zero point -> q."""
    parts = _quantized_parts(cast)
    if parts is None:
        return False
    value, scale, zero = parts
    source = dequantized(value)
    if source is None or source.quantized.type != cast.result.type:
        return False
    scales = constant_values(scale)
    if scales is None or scales.size != 1:
        return False
    size = abs(float(scales.reshape(())))
    if not (SMALLEST_SCALE <= size <= LARGEST_SCALE and _same(scale, source.scale)):
        return False
    if not _same(zero, source.zero):
        return False
    cast.result.replace_all_uses_with(source.quantized)
    return True
