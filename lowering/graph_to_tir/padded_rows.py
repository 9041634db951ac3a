"""Copying one input row into a padded, strided buffer row: the repacks of
the convolutions (conv.py's shifted rows, depthwise.py's column phases)."""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand

f32 = Float32Type()


def copy_input_row(
    kernel: Kernel, x: Operand, tensor, leading: list, source: list, count: int, stride: int, shift
) -> None:
    """tensor[*leading, j] = x[*source, j * stride + shift] for j in [0, count),
    0 where that column lies outside x's last dimension: one padded, strided
    row, copied in vectors when the stride is 1 and both rows hold one. `shift` may be a run-time
    value (a loop over filter columns)."""
    b, width = kernel.b, x.shape[-1]

    def columns_before(limit: SSAValue) -> SSAValue:
        """The j in [0, count) with j * stride < limit: ceil(limit / stride), clamped."""
        before = b.div(b.add(limit, stride - 1), stride)
        return b.select(b.binary(tir.GtOp, limit, 0), b.binary(tir.MinOp, before, count), 0)

    first = columns_before(b.sub(0, shift))
    end = b.binary(tir.MaxOp, first, columns_before(b.sub(width, shift)))
    fill_zeros(b, tensor, leading, 0, first)
    pieces = [(first, end, 1)]
    lanes = kernel.lanes
    if stride == 1 and min(width, count) >= lanes:  # whole vectors (in both rows), then the rest
        vector_end = b.add(first, b.mul(b.div(b.sub(end, first), lanes), lanes))
        pieces = [(first, vector_end, lanes), (vector_end, end, 1)]
    for lo, hi, lanes in pieces:
        with b.make_for(lo, hi, lanes) as column:
            value = kernel.load(x, [*source, b.add(b.mul(column, stride), shift)], lanes)
            b.make_store(value, tensor, [*leading, column], lanes)
    fill_zeros(b, tensor, leading, end, count)


def fill_zeros(b, tensor: SSAValue, leading: list, start, end) -> None:
    """tensor[*leading, start:end] = 0."""
    with b.make_for(start, end, 1) as column:
        b.make_store(b.const(0.0, f32), tensor, [*leading, column])
