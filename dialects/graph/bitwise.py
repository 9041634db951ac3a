"""Bitwise ops: graph.bitwise_and, bitwise_or, bitwise_xor, bitwise_not,
shift_left and shift_right on integers (numpy's bitwise_and, ...,
left_shift, right_shift; ONNX's Bitwise* and BitShift), and graph.bitcast
(numpy's view, ONNX's BitCast). Element-wise, so graph-fuse groups them
with the others."""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import GraphOp, _require_integer
from graphcompiler.dialects.graph.elementwise import BinaryOp, UnaryOp, shape_kept
from graphcompiler.ir.element_types import bit_width


class IntegerBinaryOp(BinaryOp):
    """A broadcasting op on two integers of one type; the result has it.

    Example:

        %z = {op} %x, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
    """

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_integer(cls, operand_types[0], 0)
        return cls.broadcast(operand_types)


@irdl_op_definition
class BitwiseAndOp(IntegerBinaryOp):
    """lhs & rhs, bit by bit (numpy.bitwise_and)"""

    name = "graph.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(IntegerBinaryOp):
    """lhs | rhs, bit by bit (numpy.bitwise_or)"""

    name = "graph.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(IntegerBinaryOp):
    """lhs ^ rhs, bit by bit (numpy.bitwise_xor)"""

    name = "graph.bitwise_xor"


@irdl_op_definition
class ShiftLeftOp(IntegerBinaryOp):
    """lhs << rhs (numpy.left_shift): bits moved past the top are dropped;
    a shift by a negative amount or by the type's width or more gives 0."""

    name = "graph.shift_left"


@irdl_op_definition
class ShiftRightOp(IntegerBinaryOp):
    """lhs >> rhs (numpy.right_shift): arithmetic (the sign copied in) for
    signed types, logical for unsigned; a shift by a negative amount or by
    the type's width or more gives what the fill alone does: -1 for a
    negative signed lhs, else 0."""

    name = "graph.shift_right"


@irdl_op_definition
class BitwiseNotOp(UnaryOp):
    """~x, every bit flipped (numpy.invert on integers)

    Example:

        %y = graph.bitwise_not %x : tensor<4x8xui8>
    """

    name = "graph.bitwise_not"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_integer(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


def _stored_bits(element) -> int:
    """An element's bits as its buffer holds them (i1: a byte)."""
    return 8 if element == IntegerType(1) else bit_width(element)


@irdl_op_definition
class BitcastOp(GraphOp):
    """Each element's bits read as the result's element type, of the same
    width (numpy's view, ONNX's BitCast): f32 <-> i32, bf16 <-> i16,
    f8E4M3FN <-> ui8 (its code). An i1 is a byte: as i8 or ui8 it is 0 or
    1, and an 8-bit integer as i1 is true when nonzero. The shape is kept.

    Example:

        %y = graph.bitcast %x : tensor<4x8xf32> -> tensor<4x8xi32>
    """

    name = "graph.bitcast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        result_type = shape_kept(cls, operand_types, result_type)
        source = operand_types[0]
        have, want = _stored_bits(source.element_type), _stored_bits(result_type.element_type)
        if have != want:
            raise VerifyException(
                f"result element type {result_type.element_type} has {want} bits, "
                f"{cls.operand_role(0)}'s {source.element_type} {have}: a bitcast keeps the width"
            )
        return result_type


BITWISE_OPS = (
    BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, ShiftLeftOp, ShiftRightOp, BitwiseNotOp, BitcastOp,
)  # fmt: skip
