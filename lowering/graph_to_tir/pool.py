"""max_pool2d and avg_pool2d over NCHW (or channel-blocked NCHW[b]).

What: out[n, c, y, x] = max (or mean) of in[n, c, y * sh - pt + ky, x * sw - pl + kx]
over the taps inside the input: padding never wins a max (an all-padding
window gives the lowest value, as the reference's -inf padding does), an
average counts only the taps inside (0 / 0 = NaN for an all-padding
window), and a NaN in a window makes its max NaN (tir.max propagates NaN).
How: parallel over (image x channel plane, output row). Output rows and
columns whose windows lie inside the input are split from the border ones
at compile time, so no tap is ever bounds-checked:
- interior rows x interior columns: every tap static, combined as a
  balanced tree (no serial chain through one accumulator); with stride 1
  the columns run in vectors of the target's lanes, each tap one contiguous
  vector load, the interior columns after the last whole vector scalar;
  with stride > 1 (no strided vector loads) they run scalar;
- border rows or columns: the tap range is clipped once per row / column
  and walked by loops, scalar (they are a thin frame of the output).
A channel-blocked tensor's pixel is one vector of b channels: every
column is a vector, whatever the stride (ResNet's 3x3 stride-2 pool after
its stem, between blocked convolutions, runs without reorders).
Windows wider than MAX_STATIC_COLUMNS or larger than MAX_STATIC_TAPS walk
their rows (and columns) by loops everywhere: code never grows with the
window.
"""

from __future__ import annotations

from xdsl.dialects.builtin import Signedness, TensorType, VectorType
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
    worth_parallel_work,
)

MAX_STATIC_TAPS = 64
"""Most taps of a window combined as one unrolled tree."""
MAX_STATIC_COLUMNS = 16


def interior(outputs: int, size: int, window: int, stride: int, pad: int) -> tuple[int, int]:
    """[lo, hi): the output positions whose windows lie inside the input
    (0 <= p * stride - pad and p * stride - pad + window <= size)."""
    lo = min(outputs, -(-pad // stride))
    return lo, max(lo, min(outputs, (size - window + pad) // stride + 1))


class _Pool:
    def __init__(self, kernel: Kernel, op: Operation):
        self.kernel, self.b = kernel, kernel.b
        x, out = kernel.inputs[0], kernel.out
        _, _, self.h, self.width, *block = x.shape
        _, _, self.oh, self.ow = out.shape[:4]
        self.kh, self.kw = op.window_size
        self.sh, self.sw = op.window_strides
        self.pt, self.pl = op.window_padding[:2]
        self.is_max = isinstance(op, graph.MaxPool2dOp)
        self.element = compute_type(x.element)
        self.lowest = _lowest(self.element)
        self.planes = x.shape[0] * x.shape[1]
        self.source, self.target = (_planes(kernel, o, self.planes) for o in (x, out))
        # a blocked pixel is one vector of its channels (`block`: [] when plain)
        self.block = block
        self.lanes = kernel.lanes if self.sw == 1 and is_vectorizable(x, out) else 1
        if block:
            self.lanes = block[0]
        small = self.kw <= MAX_STATIC_COLUMNS
        self.static_columns = list(range(self.kw)) if small else None
        self.static_rows = (
            list(range(self.kh)) if small and self.kh * self.kw <= MAX_STATIC_TAPS else None
        )

    def combine(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.b.binary(tir.MaxOp, a, b) if self.is_max else self.b.add(a, b)

    def tree(self, values: list[SSAValue]) -> SSAValue:
        while len(values) > 1:
            pairs = [self.combine(a, b) for a, b in zip(values[::2], values[1::2], strict=False)]
            values = pairs + ([values[-1]] if len(values) % 2 else [])
        return values[0]

    def clipped(self, origin: SSAValue, window: int, size: int) -> tuple[SSAValue, SSAValue]:
        """[first, end) of the taps at origin + tap that lie inside [0, size)."""
        b = self.b
        first = b.binary(tir.MaxOp, b.sub(0, origin), 0)
        end = b.binary(tir.MaxOp, b.binary(tir.MinOp, b.sub(size, origin), window), first)
        return first, end

    def lower(self) -> None:
        b = self.b
        row_lo, row_hi = interior(self.oh, self.h, self.kh, self.sh, self.pt)
        rows = self.oh
        work = self.planes * rows * self.ow * self.kh * self.kw
        parallel = worth_parallel_work(self.planes * rows, work)
        with b.make_for(0, self.planes * rows, 1, parallel=parallel) as index:
            plane, y = b.div(index, rows), b.mod(index, rows)
            top = b.sub(b.mul(y, self.sh), self.pt)
            if (row_lo, row_hi) in ((0, rows), (row_lo, row_lo)):  # no border / no interior
                self.row(plane, y, top, self.static_rows if row_lo < row_hi else None)
                return
            inside = b.binary(
                tir.AndOp, b.binary(tir.GeOp, y, row_lo), b.binary(tir.LtOp, y, row_hi)
            )
            branch = b.make_if(inside, with_else=True)
            with b.at_end_of(branch.then_region.block):
                self.row(plane, y, top, self.static_rows)
            with b.at_end_of(branch.else_region.block):
                self.row(plane, y, top, None)

    def row(self, plane: SSAValue, y: SSAValue, top: SSAValue, row_taps: list | None) -> None:
        """One output row: border columns, vector interior, scalar interior, border."""
        lo, hi = interior(self.ow, self.width, self.kw, self.sw, self.pl)
        lanes, static = self.lanes, self.static_columns
        if self.block:  # a pixel a vector: any stride
            pieces = [(0, lo, 1, None), (lo, hi, 1, static), (hi, self.ow, 1, None)]
        else:
            vector_end = lo + (hi - lo) // lanes * lanes
            pieces = [
                (0, lo, 1, None),
                (lo, vector_end, lanes, static),
                (vector_end, hi, 1, static),
                (hi, self.ow, 1, None),
            ]
        for start, end, step, column_taps in pieces:
            if start < end:
                with self.b.make_for(start, end, step) as column:
                    loaded = lanes if self.block else step
                    self.window(plane, y, top, row_taps, column, column_taps, loaded)

    def window(
        self,
        plane: SSAValue,
        y: SSAValue,
        top: SSAValue,
        row_taps: list | None,
        column: SSAValue,
        column_taps: list | None,
        lanes: int,
    ) -> None:
        """out[plane, y, column (+ lanes)]: taps given as static lists, or
        None for a range clipped to the input at run time."""
        b, kernel = self.b, self.kernel
        left = b.sub(b.mul(column, self.sw), self.pl)

        def tap(ky: SSAValue | int, kx: SSAValue | int) -> SSAValue:
            at = [plane, b.add(top, ky), b.add(left, kx), *[0] * len(self.block)]
            return kernel.load(self.source, at, lanes)

        if row_taps is not None and column_taps is not None:
            result = self.tree([tap(ky, kx) for ky in row_taps for kx in column_taps])
            count = b.const(len(row_taps) * len(column_taps), result.type)
        else:
            type_ = VectorType(self.element, [lanes]) if lanes > 1 else self.element
            total = b.make_var(type_, b.const(self.lowest if self.is_max else 0, type_))
            rows = self.clipped(top, self.kh, self.h) if row_taps is None else (0, self.kh)
            columns = (
                self.clipped(left, self.kw, self.width) if column_taps is None else (0, self.kw)
            )
            with b.make_for(*rows, 1) as ky:
                if column_taps is None:
                    with b.make_for(*columns, 1) as kx:
                        b.make_assign(total, self.combine(b.read(total), tap(ky, kx)))
                else:
                    values = [tap(ky, kx) for kx in column_taps]
                    b.make_assign(total, self.combine(b.read(total), self.tree(values)))
            result = b.read(total)
            if not self.is_max:
                # one range at least is clipped (an index), the other may be static
                first, second = (
                    b.sub(end, start) if isinstance(end, SSAValue) else end - start
                    for start, end in (rows, columns)
                )
                taps = b.mul(first, second) if isinstance(first, SSAValue) else b.mul(second, first)
                count = b.cast(taps, self.element)
                if lanes > 1:
                    count = b.unary(tir.BroadcastOp, count, type_)
        if not self.is_max:
            result = b.div(result, count)
        kernel.store(self.target, [plane, y, column, *[0] * len(self.block)], result)


def pool(kernel: Kernel, op: Operation) -> None:
    _Pool(kernel, op).lower()


def _planes(kernel: Kernel, operand: Operand, planes: int) -> Operand:
    """An NCHW tensor seen as [N * C, H, W] (a blocked one as [N * C / b, H, W, b])."""
    shape = [planes, *operand.shape[2:]]
    view = kernel.b.tensor_ptr(operand.value, [0] * len(operand.shape), shape)
    return Operand(view, TensorType(operand.element, shape))


def _lowest(element) -> float | int:
    """The identity of max: -inf, the signed minimum, or 0 for unsigned
    integers (a ui8 window started at -128 read as 128)."""
    if tir.is_float(element):
        return float("-inf")
    if element.signedness.data == Signedness.UNSIGNED:
        return 0
    return -(2 ** (element.width.data - 1))
