"""The second rewrite of graph-integer-matmul: an integer matmul of 8-bit
values minus their zero points (what the QDQ rewrite and the ONNX
importer's MatMulInteger, QLinearMatMul and DynamicQuantizeMatMul build)
multiplies the 8-bit values themselves, u8 by s8, and subtracts the zero
points' share afterwards, as oneDNN's brgemm does with its compensation:

    sum_k (a - za)(b - zb) = sum_k a b - za colsum(b) - zb rowsum(a) + K za zb

    %acc = matmul (sub (cast %qa -> i16), %za), (sub (cast %qb -> i16), %zb) : -> i32
 -> %acc = sub (matmul %qa, %qb : (ui8, i8) -> i32), (mul %za, (reduce_sum %qb over K)) ...

An s8 A is shifted to u8 (a + 128, with za + 128) and a u8 B to s8
(b - 128, with zb - 128), so every 8-bit matmul is u8 x s8: the operands
`vpdpbusd` multiplies four to an i32 on VNNI targets (where other targets
take pairs of them, as before). A term whose zero point is a constant 0
(symmetric weights, the usual case) is left out; B's column sums fold into
a constant with B. The sum is exact in i32 like the one it replaces (the
same wrap-around arithmetic), so results are unchanged bit for bit.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import create_op, substitute
from graphcompiler.ir.element_types import dense_values

i16, i32 = IntegerType(16), IntegerType(32)
s8, u8 = IntegerType(8), IntegerType(8, Signedness.UNSIGNED)


def _shape(value: SSAValue) -> list[int]:
    return list(value.type.get_shape())


def centered_bytes(value: SSAValue, k_axis: int) -> tuple[SSAValue, SSAValue | None] | None:
    """(x, zero) where the i16 `value` = cast(x) - zero (or cast(x)), x of 8
    bits and zero constant along the operand's K axis (counted from the end)."""
    if value.type.element_type != i16:
        return None
    zero = None
    if isinstance(value.owner, graph.SubOp):
        value, zero = value.owner.lhs, value.owner.rhs
        zero_shape = _shape(zero)
        if len(zero_shape) >= -k_axis and zero_shape[k_axis] != 1:
            return None
    cast = value.owner
    if not isinstance(cast, graph.CastOp) or cast.input.type.element_type not in (s8, u8):
        return None
    return cast.input, zero


def constant_values(value: SSAValue | None) -> np.ndarray | None:
    """The values of a constant `value` (through casts and reshapes, which
    keep them: a per-channel zero point reshaped to broadcast), else None."""
    while value is not None and isinstance(value.owner, graph.CastOp | graph.ReshapeOp):
        value = value.owner.operands[0]
    if value is None or not isinstance(value.owner, graph.ConstantOp):
        return None
    return dense_values(value.owner.value)


def constant_zero(value: SSAValue | None) -> bool:
    """Whether `value` is absent or a constant of zeros (constant_values)."""
    values = constant_values(value)
    return value is None or (values is not None and not np.any(values))


class RewriteOps:
    """The ops of a rewrite, in order, each created and verified once."""

    def __init__(self):
        self.ops: list[Operation] = []

    def make(self, name: str, inputs: list[SSAValue], result: TensorType | None = None, **p):
        op = create_op(name, inputs, result, **p)
        self.ops.append(op)
        return op.results[0]

    def cast(self, value: SSAValue, element) -> SSAValue:
        return self.make("cast", [value], TensorType(element, _shape(value)))

    def scalar(self, number: int) -> SSAValue:
        return self.make("constant", [], value=np.array(number, np.int16), dtype="i16")

    def shift(self, value: SSAValue, zero: SSAValue | None, by: int, element) -> tuple:
        """value + by as `element`, and zero + by: the same differences."""
        offset = self.scalar(by)
        shifted = self.make("add", [self.cast(value, i16), offset])
        zero = offset if zero is None else self.make("add", [zero, offset])
        return self.cast(shifted, element), zero

    def k_sums(self, value: SSAValue, k_axis: int, transposed_to: list[int] | None) -> SSAValue:
        """value summed over its K axis in i32 (kept as size 1), reshaped to
        `transposed_to` when K is the last axis of a B."""
        sums = self.make("reduce_sum", [self.cast(value, i32)], axes=[k_axis], keep_dims=True)
        if transposed_to is not None:
            sums = self.make("reshape", [sums], TensorType(i32, transposed_to))
        return sums

    def times(self, zero: SSAValue, sums: SSAValue) -> SSAValue:
        return self.make("mul", [self.cast(zero, i32), sums])


def _swapped_last(shape: list[int]) -> list[int]:
    return [*shape[:-2], shape[-1], shape[-2]] if len(shape) >= 2 else shape


def rewrite(matmul: graph.MatmulOp) -> bool:
    """Rewrite `matmul` as the module doc says; whether it did."""
    if not matmul.widens or matmul.a_transposed or matmul.result.type.element_type != i32:
        return False
    transposed = matmul.b_transposed
    a_parts, b_parts = (
        centered_bytes(matmul.a, -1),
        centered_bytes(matmul.b, -1 if transposed else -2),
    )
    if a_parts is None or b_parts is None:
        return False
    (a, za), (b, zb) = a_parts, b_parts
    ops = RewriteOps()
    try:
        if a.type.element_type == s8:
            a, za = ops.shift(a, za, 128, u8)
        if b.type.element_type == u8:
            b, zb = ops.shift(b, zb, -128, s8)
        k = _shape(a)[-1]
        # the zero points' terms first: defined before the matmul, they let
        # graph-fuse make the subtraction part of its epilogue
        subtracted, added = [], []
        if not constant_zero(za):
            column_shape = _swapped_last(_shape(b)[:-1] + [1]) if transposed else None
            column_sums = ops.k_sums(b, -1 if transposed else -2, column_shape)
            subtracted.append(ops.times(za, column_sums))
        if not constant_zero(zb):
            if transposed and len(_shape(zb)) >= 2:
                zb = ops.make("reshape", [zb], TensorType(i16, _swapped_last(_shape(zb))))
            subtracted.append(ops.times(zb, ops.k_sums(a, -1, None)))
            if not constant_zero(za):
                both = ops.make("mul", [ops.cast(za, i32), ops.cast(zb, i32)])
                k_value = ops.make("constant", [], value=np.array(k, np.int32), dtype="i32")
                added.append(ops.make("mul", [both, k_value]))
        acc = ops.make("matmul", [a, b], matmul.result.type, transpose_b=transposed)
        for term in subtracted:
            acc = ops.make("sub", [acc, term])
        for term in added:
            acc = ops.make("add", [acc, term])
    except ValueError:
        return False
    if acc.type != matmul.result.type:
        return False
    substitute(matmul, ops.ops, acc)
    return True
