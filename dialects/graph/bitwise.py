"""Bitwise ops on integers: graph.bitwise_and, bitwise_or, bitwise_xor,
bitwise_not, shift_left and shift_right (numpy's bitwise_and, ...,
left_shift, right_shift; ONNX's Bitwise* and BitShift). Element-wise, so
graph-fuse groups them with the others."""

from __future__ import annotations

from xdsl.irdl import irdl_op_definition

from graphcompiler.dialects.graph.base import _require_integer
from graphcompiler.dialects.graph.elementwise import BinaryOp, UnaryOp


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


BITWISE_OPS = (BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, ShiftLeftOp, ShiftRightOp, BitwiseNotOp)
