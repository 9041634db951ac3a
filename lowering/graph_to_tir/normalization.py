"""rms_norm and instance_norm: rows normalized with the reductions' machinery.

Both see their input as [rows, count] (rms_norm: the dims from `axis` on
are a row; instance_norm: the spatial dims of one (n, c) are a row). Per
row, a statistic pass: instance_norm takes layer_norm's f64 mean and
variance (`reductions.row_moments`: blocked vector sums merged with Chan's
formula); rms_norm sums x * x with the reductions' blocked vector
accumulators (a sum of squares, so an inf gives 0 for the finite elements
and NaN for itself, as numpy). Then one vectorized pass writes the row.
The loop over rows is parallel when the op reads enough elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import Float64Type
from xdsl.ir import Attribute, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    compute_type,
    is_vectorizable,
    worth_parallel_work,
)
from graphcompiler.lowering.graph_to_tir.reductions import (
    SUM,
    Accumulators,
    _blocked_row,
    _broadcast,
    _elementwise_row,
    _view,
    plain_rows,
    row_moments,
)

f64 = Float64Type()
Load = Callable[[SSAValue, int], SSAValue]


def _each_row(kernel: Kernel, rows: int, count: int, per_row) -> None:
    """For each row: `per_row(row, element, lanes, load)` computes the row's
    statistics and returns `write(j, width, x) -> y`, applied along the row."""
    x, out = kernel.inputs[0], kernel.out
    if rows * count == 0:
        return
    element = compute_type(x.element)
    lanes = kernel.lanes if is_vectorizable(*kernel.inputs, out) else 1
    io = plain_rows(kernel, x, out, rows, count)
    with kernel.loop_nest([rows], worth_parallel_work(rows, rows * count)) as (row,):
        write = per_row(row, element, lanes, lambda j, w: io.load(row, j, w))
        _elementwise_row(
            kernel, count, lanes, lambda j, w: io.store(row, j, write(j, w, io.load(row, j, w)))
        )


def _inverse_root(kernel: Kernel, op, statistic64: SSAValue, element: Attribute) -> SSAValue:
    """1 / sqrt(statistic + epsilon), computed in f64, in the compute type."""
    epsilon = graph.float_value(op.with_defaults(op.properties), "epsilon")
    b = kernel.b
    return b.cast(b.unary(tir.RsqrtOp, b.add(statistic64, epsilon)), element)


def rms_norm(kernel: Kernel, op: graph.RmsNormOp) -> None:
    """x * (1 / sqrt(mean(x * x) + epsilon)) * scale[j] over rows of the dims from `axis` on."""
    x, scale = kernel.inputs
    properties = op.with_defaults(op.properties)
    axis = graph.normalize_axis(graph.int_value(properties, "axis"), len(x.shape))
    rows, count = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
    flat_scale = _view(kernel, scale, [count])
    b = kernel.b

    def per_row(row: SSAValue, element: Attribute, lanes: int, load: Load):
        squares = Accumulators(kernel, SUM, element, lanes)

        def square(j: SSAValue, width: int, slot: int | None) -> None:
            value = load(j, width)
            squares.add(slot, b.mul(value, value))

        _blocked_row(kernel, count, lanes, square, squares)
        mean_square = b.div(b.cast(squares.result(), f64), float(count))
        inverse = _inverse_root(kernel, op, mean_square, element)
        return lambda j, w, value: b.mul(
            b.mul(value, _broadcast(b, inverse, w)), kernel.load(flat_scale, [j], w)
        )

    _each_row(kernel, rows, count, per_row)


def instance_norm(kernel: Kernel, op: graph.InstanceNormOp) -> None:
    """(x - mean) / sqrt(var + epsilon) * scale[c] + bias[c] over the spatial
    dims of each (n, c) row."""
    x, scale, bias = kernel.inputs
    rows, count = math.prod(x.shape[:2]), math.prod(x.shape[2:])
    b = kernel.b

    def per_row(row: SSAValue, element: Attribute, lanes: int, load: Load):
        mean64, variance = row_moments(kernel, element, count, lanes, load)
        inverse = _inverse_root(kernel, op, variance, element)
        channel = b.mod(row, x.shape[1])
        factor = b.mul(inverse, kernel.load(scale, [channel]))
        shift = kernel.load(bias, [channel])
        mean = b.cast(mean64, element)

        def write(j: SSAValue, width: int, value: SSAValue) -> SSAValue:
            centred = b.sub(value, _broadcast(b, mean, width))
            return b.add(b.mul(centred, _broadcast(b, factor, width)), _broadcast(b, shift, width))

        return write

    _each_row(kernel, rows, count, per_row)
