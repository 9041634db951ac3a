"""Ops that walk one axis in order with a running state: graph.cumsum (the
sum so far), graph.argmax / graph.argmin (the best element and its index so
far) and graph.top_k_indices (the best k so far, in order).

Each template sees its tensors as [outer, n, inner] around the axis (n its
size) and handles every line (o, :, j) along it: the lines of `lanes`
neighbouring j at once, as vectors, when the axis is not the innermost one
(`inner` is then contiguous), one at a time otherwise (top_k_indices always);
the outer loop runs in parallel when the op holds enough work. The state
lives in vars, so a line is read once, in order: cumsum adds exactly as
numpy.cumsum does, element after element. Along the innermost axis argmax and
argmin instead keep the best of every lane of a few vectors and combine the
lanes at the end (the order of values and indices they compare by makes that
exact).

    for o in [0, outer) parallel:          cumsum, inner vectorized:
      for j in [0, inner) step lanes:        total = 0
        for i in [0, n):                     total += x[o, i, j:j+lanes]
          ...                                out[o, i, j:j+lanes] = total
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import IndexType, TensorType, VectorType, i1, i64
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
    worth_parallel_work,
)
from graphcompiler.lowering.graph_to_tir.reductions import ACCUMULATORS


def _view(kernel: Kernel, operand: Operand, shape: list[int]) -> Operand:
    """The same dense buffer seen with another shape of the same size."""
    buffer_shape = list(operand.value.type.get_shape())
    if buffer_shape == shape:
        return operand
    value = kernel.b.tensor_ptr(operand.value, [0] * len(buffer_shape), shape)
    return Operand(value, TensorType(operand.element, shape))


def _lines(kernel: Kernel, operand: Operand, axis: int) -> Operand:
    """`operand` seen as [outer, n, inner] around `axis`."""
    shape = operand.shape
    around = [math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])]
    return _view(kernel, operand, around)


def _for_each_line(
    kernel: Kernel,
    source: Operand,
    body: Callable[[SSAValue, SSAValue, int], None],
    vectorize: bool,
) -> None:
    """body(o, j, lanes) for the lines (o, :, j..j+lanes) of `source`'s [outer, n, inner]
    view, parallel over o when the op reads enough elements."""
    outer, n, inner = source.shape
    kernel.for_each(
        [outer, inner],
        lambda index, lanes: body(index[0], index[1], lanes),
        vectorize,
        parallel=worth_parallel_work(outer, outer * n * inner),
    )


def _typed(element, lanes: int):
    return VectorType(element, [lanes]) if lanes > 1 else element


def _isnan(kernel: Kernel, x: SSAValue) -> SSAValue:
    return kernel.b.unary(tir.IsnanOp, x, tir.with_element(x.type, i1))


def running_total(kernel: Kernel, op: graph.RunningOp) -> None:
    """out[o, i, j] = x[o, 0, j] + ... + x[o, i, j] (cumsum; * for cumprod; from the
    end if reversed; without x[o, i, j] if exclusive), one running total per line in
    the compute type."""
    b = kernel.b
    combine = b.mul if isinstance(op, graph.CumProdOp) else b.add
    x, out = kernel.inputs[0], kernel.out
    axis = op.normalized_axis(len(x.shape))
    source, target = _lines(kernel, x, axis), _lines(kernel, out, axis)
    n = source.shape[1]
    element = compute_type(x.element)

    def line(o: SSAValue, j: SSAValue, lanes: int) -> None:
        type_ = _typed(element, lanes)
        total = b.make_var(type_, b.const(op.IDENTITY, type_))
        with b.make_for(0, n, 1) as step:
            i = b.sub(n - 1, step) if op.is_reversed else step
            value = kernel.load(source, [o, i, j], lanes)
            if op.is_exclusive:
                kernel.store(target, [o, i, j], b.read(total))
                b.make_assign(total, combine(b.read(total), value))
            else:
                running = combine(b.read(total), value)
                b.make_assign(total, running)
                kernel.store(target, [o, i, j], running)

    _for_each_line(kernel, source, line, is_vectorizable(x, out))


@dataclass(frozen=True)
class _Order:
    """Which of two elements comes first: the larger (or smaller) value, where a
    NaN comes before every number (`nan_first`: argmax and argmin, numpy's NaN
    wins; top_k's largest) or after it, then the lower index (the higher with
    `last`)."""

    kernel: Kernel
    largest: bool
    nan_first: bool
    floats: bool
    last: bool = False

    def better(self, a: SSAValue, c: SSAValue) -> SSAValue:
        """a is strictly better than c by value."""
        b = self.kernel.b
        result = b.binary(tir.GtOp if self.largest else tir.LtOp, a, c)
        if not self.floats:
            return result
        nan, number = (a, c) if self.nan_first else (c, a)
        nan = b.binary(
            tir.AndOp, _isnan(self.kernel, nan), b.unary(tir.NotOp, _isnan(self.kernel, number))
        )
        return b.binary(tir.OrOp, result, nan)

    def replaces(self, value: SSAValue, best: SSAValue) -> SSAValue:
        """A later element takes the place of the best so far: it is better, or (for
        the last index) not worse; the quick form of `beats` for a larger index
        (with `nan_first`)."""
        b = self.kernel.b
        if not self.last:
            return self.better(value, best)
        result = b.binary(tir.GeOp if self.largest else tir.LeOp, value, best)
        return b.binary(tir.OrOp, result, _isnan(self.kernel, value)) if self.floats else result

    def beats(self, a: SSAValue, a_index: SSAValue, c: SSAValue, c_index: SSAValue) -> SSAValue:
        """(a, a_index) wins over (c, c_index): by value, then by index."""
        b = self.kernel.b
        earlier = b.binary(tir.GtOp if self.last else tir.LtOp, a_index, c_index)
        tie = b.binary(tir.AndOp, b.unary(tir.NotOp, self.better(c, a)), earlier)
        return b.binary(tir.OrOp, self.better(a, c), tie)


def arg_extreme(kernel: Kernel, op: graph.ArgReduceOp) -> None:
    """out[o, j] = the index of the best x[o, :, j]: the first element starts as the best,
    each later one replaces it when strictly better (better or equal with
    select_last_index), or when it is a NaN and the best is not (any NaN, with
    select_last_index): numpy's first NaN wins. Along the contiguous axis each lane
    keeps the best of its own elements, combined at the end (`_arg_extreme_rows`)."""
    b = kernel.b
    x, out = kernel.inputs[0], kernel.out
    axis = op.normalized_axis(len(x.shape))
    source = _lines(kernel, x, axis)
    outer, n, inner = source.shape
    target = _view(kernel, out, [outer, inner])
    floats = tir.is_float(compute_type(x.element))
    rule = _Order(kernel, isinstance(op, graph.ArgMaxOp), True, floats, op.picks_last)
    vectorize = is_vectorizable(x, out)
    if inner == 1 and vectorize and n >= 2 * kernel.lanes:
        _arg_extreme_rows(kernel, _view(kernel, source, [outer, n]), target, rule)
        return

    def line(o: SSAValue, j: SSAValue, lanes: int) -> None:
        first = kernel.load(source, [o, 0, j], lanes)
        best = b.make_var(first.type, first)
        index_type = _typed(i64, lanes)
        best_index = b.make_var(index_type, b.const(0, index_type))
        with b.make_for(1, n, 1) as i:
            value, current = kernel.load(source, [o, i, j], lanes), b.read(best)
            replaces = rule.replaces(value, current)
            position = b.cast(i, i64)
            if lanes > 1:
                position = b.unary(tir.BroadcastOp, position, index_type)
            b.make_assign(best, b.select(replaces, value, current))
            b.make_assign(best_index, b.select(replaces, position, b.read(best_index)))
        kernel.store(target, [o, j], b.read(best_index))

    _for_each_line(kernel, source, line, vectorize)


def _arg_extreme_rows(kernel: Kernel, rows: Operand, target: Operand, rule: _Order) -> None:
    """argmax / argmin of each row of `rows` [outer, n] with ACCUMULATORS vectors of
    (best, index): lane l of vector a keeps the best of elements a * lanes + l, then
    every ACCUMULATORS * lanes further (in order, so `replaces` holds; leftover whole
    vectors go to the first). The lanes are combined through a small buffer by
    `beats`, then the scalar tail goes on in order."""
    b, lanes = kernel.b, kernel.lanes
    outer, n = rows.shape
    ways = ACCUMULATORS if n >= 2 * ACCUMULATORS * lanes else 1
    step, vector_end = ways * lanes, n // lanes * lanes
    blocked_end = n // step * step
    element = compute_type(rows.element)
    index_type = VectorType(i64, [lanes])
    offsets = tir.DenseIntOrFPElementsAttr.from_list(index_type, list(range(lanes)))
    with kernel.loop_nest([outer], worth_parallel_work(outer, outer * n)) as (o,):
        lane_offsets = b.const(offsets, index_type)

        def update(best: SSAValue, best_index: SSAValue, start: SSAValue | int) -> None:
            value, current = kernel.load(rows, [o, start], lanes), b.read(best)
            replaces = rule.replaces(value, current)
            start = b.cast(b.value(start, IndexType()), i64)
            position = b.add(lane_offsets, b.unary(tir.BroadcastOp, start, index_type))
            b.make_assign(best, b.select(replaces, value, current))
            b.make_assign(best_index, b.select(replaces, position, b.read(best_index)))

        bests = [
            b.make_var(value.type, value)
            for value in (kernel.load(rows, [o, way * lanes], lanes) for way in range(ways))
        ]
        indices = [
            b.make_var(index_type, b.add(lane_offsets, b.const(way * lanes, index_type)))
            for way in range(ways)
        ]
        with b.make_for(step, blocked_end, step) as i:
            for way, (best, best_index) in enumerate(zip(bests, indices, strict=True)):
                update(best, best_index, b.add(i, way * lanes) if way else i)
        with b.make_for(blocked_end, vector_end, lanes) as i:
            update(bests[0], indices[0], i)
        values, positions = b.make_tensor([step], element), b.make_tensor([step], i64)
        for way, (best, best_index) in enumerate(zip(bests, indices, strict=True)):
            b.make_store(b.read(best), values, [way * lanes], lanes)
            b.make_store(b.read(best_index), positions, [way * lanes], lanes)
        scalar = b.make_var(element, b.make_load(values, [0]))
        scalar_index = b.make_var(i64, b.make_load(positions, [0]))

        def take(value: SSAValue, position: SSAValue, wins: SSAValue) -> None:
            b.make_assign(scalar, b.select(wins, value, b.read(scalar)))
            b.make_assign(scalar_index, b.select(wins, position, b.read(scalar_index)))

        with b.make_for(1, step, 1) as slot:
            value, position = b.make_load(values, [slot]), b.make_load(positions, [slot])
            take(value, position, rule.beats(value, position, b.read(scalar), b.read(scalar_index)))
        with b.make_for(vector_end, n, 1) as i:
            value = kernel.load(rows, [o, i])
            take(value, b.cast(i, i64), rule.replaces(value, b.read(scalar)))
        kernel.store(target, [o, 0], b.read(scalar_index))


def top_k_indices(kernel: Kernel, op: graph.TopKIndicesOp) -> None:
    """Per line, the best k seen so far as a sorted list of indices in the output: each
    element that beats the k-th (or finds the list short) is carried down the list,
    swapping places with each entry it beats (a better value, or an equal one at a
    higher index), and the last carried drops off when the list is full. An element
    is read again through its index, so no values are kept: O(n) for typical data,
    O(n k) when every element enters. NaN counts as larger than every number."""
    b = kernel.b
    x, out = kernel.inputs[0], kernel.out
    axis = op.normalized_axis(len(x.shape))
    source, target = _lines(kernel, x, axis), _lines(kernel, out, axis)
    k = op.count
    largest = op.wants_largest
    order = _Order(kernel, largest, largest, tir.is_float(compute_type(x.element)))

    def line(o: SSAValue, j: SSAValue, lanes: int) -> None:
        def entry(position: SSAValue | int) -> tuple[SSAValue, SSAValue]:
            """(value, index) of the list's entry at `position`."""
            index = b.cast(kernel.load(target, [o, position, j]), IndexType())
            return kernel.load(source, [o, index, j]), index

        count = b.make_var(IndexType(), 0)
        with b.make_for(0, source.shape[1], 1) as i:
            value = kernel.load(source, [o, i, j])
            admit = b.make_var(i1, b.const(1, i1))
            full = b.make_if(b.binary(tir.EqOp, b.read(count), k))
            with b.at_end_of(full.then_region.block):  # the newest loses ties
                b.make_assign(admit, order.better(value, entry(k - 1)[0]))
            enter = b.make_if(b.read(admit))
            with b.at_end_of(enter.then_region.block):
                carried, carried_index = b.make_var(value.type, value), b.make_var(IndexType(), i)
                filled = b.read(count)
                with b.make_for(0, filled, 1) as p:
                    other, other_index = entry(p)
                    mine, mine_index = b.read(carried), b.read(carried_index)
                    swap = b.make_if(order.beats(mine, mine_index, other, other_index))
                    with b.at_end_of(swap.then_region.block):
                        kernel.store(target, [o, p, j], b.cast(mine_index, i64))
                        b.make_assign(carried, other)
                        b.make_assign(carried_index, other_index)
                room = b.make_if(b.binary(tir.LtOp, filled, k))
                with b.at_end_of(room.then_region.block):
                    kernel.store(target, [o, filled, j], b.cast(b.read(carried_index), i64))
                    b.make_assign(count, b.add(filled, 1))

    _for_each_line(kernel, source, line, vectorize=False)


TEMPLATES: dict[type, Callable[[Kernel, graph.GraphOp], None]] = {
    graph.CumSumOp: running_total,
    graph.CumProdOp: running_total,
    graph.ArgMaxOp: arg_extreme,
    graph.ArgMinOp: arg_extreme,
    graph.TopKIndicesOp: top_k_indices,
}
"""The templates of this module, by op (merged into templates.TEMPLATES)."""
