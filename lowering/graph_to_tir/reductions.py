"""Reductions and normalizations: vectorized, several accumulators, parallel.

Every template first sees its tensors in a canonical shape (size-1 dims
dropped, neighbouring dims of the same kind merged: a reduction over axes
(1, 2) of [8, 3, 5, 7] is a [8, 15, 7] problem), then picks one of two
schedules:
- the contiguous (innermost) dim is reduced: each output element reduces a
  row with ACCUMULATORS independent vector accumulators of the target's
  width, combined as a tree, then across lanes, then with a scalar tail;
- the contiguous dim is kept: blocks of ACCUMULATORS vectors of kept columns
  accumulate whole vectors along the reduced dims, no lane combination;
- only a short last dim is reduced (fewer elements than a vector: the taps
  of a bilinear resize): a plain loop over the outputs, each reducing its
  few elements in scalars, which LLVM vectorizes across outputs (vector
  accumulators and a lane combination per output cost 15x more).
The outermost loop runs over the outputs (rows, or row x column blocks),
parallel when the whole op reads enough elements. The row kernels built on
these accumulators (softmax, layer_norm, ...) are in normalization.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
    worth_parallel_work,
)

ACCUMULATORS = 4
"""Independent vector accumulators per reduction: enough to hide the add
latency (4 cycles) at one vector per cycle, few enough for any register file."""

BLOCK_STEPS = 64
"""A blocked sum folds its accumulators into the running total every
BLOCK_STEPS x ACCUMULATORS vectors, so no lane adds more than ~64 terms
into a partial sum that grows with the row (error ~ (64 + n / block) ulp)."""

f32, f64 = Float32Type(), Float64Type()
FLOAT_MAX = 3.4028234663852886e38


# --- shapes ------------------------------------------------------------------------------


def merge_dims(shape: Sequence[int], reduced: Sequence[int]) -> list[tuple[int, bool]]:
    """(size, is_reduced) groups of `shape`: size-1 dims dropped, neighbours of
    the same kind merged (row-major order makes them one contiguous dim)."""
    groups: list[list] = []
    for d, size in enumerate(shape):
        if size == 1:
            continue
        kind = d in reduced
        if groups and groups[-1][1] == kind:
            groups[-1][0] *= size
        else:
            groups.append([size, kind])
    return [(size, kind) for size, kind in groups] or [(1, True)]


def _view(kernel: Kernel, operand: Operand, shape: Sequence[int]) -> Operand:
    """The same dense buffer seen with another shape of the same size."""
    shape = list(shape)
    if shape == list(operand.value.type.get_shape()):
        return operand
    value = kernel.b.tensor_ptr(operand.value, [0] * len(operand.shape) or [0], shape)
    return Operand(value, TensorType(operand.element, shape))


def unflatten(b: TirBuilder, flat: SSAValue, sizes: Sequence[int]) -> list[SSAValue]:
    """Row-major coordinates of `flat` in `sizes`."""
    coordinates, rest = [], flat
    for position, size in enumerate(reversed(sizes)):
        last = position == len(sizes) - 1
        coordinates.append(rest if last else b.mod(rest, size))
        if not last:
            rest = b.div(rest, size)
    return coordinates[::-1]


def _interleave(groups: list[tuple[int, bool]], kept: list, reduced: list) -> list:
    """Indices of the canonical shape from the kept and reduced ones, in order."""
    kept, reduced = iter(kept), iter(reduced)
    return [next(reduced) if is_reduced else next(kept) for _, is_reduced in groups]


def _plus(b: TirBuilder, start: SSAValue | int, offset: int) -> SSAValue | int:
    if isinstance(start, int):
        return start + offset
    return b.add(start, offset) if offset else start


def _row(
    kernel: Kernel,
    start: SSAValue | int,
    length: int,
    lanes: int,
    visit: Callable[[SSAValue, int, int | None], None],
) -> None:
    """Cover [start, start + length): `visit(index, lanes, slot)` for
    ACCUMULATORS vectors per step (slot 0..3), then the remaining whole
    vectors, then single elements (slot None)."""
    b = kernel.b
    width = ACCUMULATORS * lanes if lanes > 1 else 0
    steps = length // width if width else 0
    if steps:
        with b.make_for(start, _plus(b, start, steps * width), width) as j:
            for slot in range(ACCUMULATORS):
                visit(b.add(j, slot * lanes) if slot else j, lanes, slot)
    done = steps * width
    if lanes > 1:
        for slot in range((length - done) // lanes):
            visit(b.indices([_plus(b, start, done)])[0], lanes, slot)
            done += lanes
    if done < length:
        with b.make_for(_plus(b, start, done), _plus(b, start, length), 1) as j:
            visit(j, 1, None)


def _elementwise_row(
    kernel: Kernel, length: int, lanes: int, body: Callable[[SSAValue, int], None]
) -> None:
    """body(index, lanes) over a row: whole vectors, then a scalar tail."""
    vector_end = length // lanes * lanes if lanes > 1 else 0
    if vector_end:
        with kernel.b.make_for(0, vector_end, lanes) as j:
            body(j, lanes)
    if vector_end < length:
        with kernel.b.make_for(vector_end, length, 1) as j:
            body(j, 1)


# --- combining values --------------------------------------------------------------------


def _var(b: TirBuilder, element: Attribute, width: int, initial: float | int) -> SSAValue:
    """A var of `width` lanes (a scalar for 1) holding `initial` everywhere."""
    type_ = VectorType(element, [width]) if width > 1 else element
    return b.make_var(type_, b.const(initial, type_))


def _is_unsigned(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def nan_max(b: TirBuilder, acc: SSAValue, x: SSAValue, less: bool = False) -> SSAValue:
    """max(acc, x) (min with `less`) where a NaN wins and then stays: x
    replaces acc when it is larger or NaN, and nothing is larger than NaN."""
    compare = b.binary(tir.LtOp if less else tir.GtOp, x, acc)
    if tir.is_float(x.type):
        compare = b.binary(tir.OrOp, compare, b.unary(tir.IsnanOp, x, tir.with_element(x.type, i1)))
    return b.select(compare, x, acc)


def tree(b: TirBuilder, values: list[SSAValue], combine: Callable) -> SSAValue:
    """Combine values pairwise (independent operations, log depth)."""
    while len(values) > 1:
        values = [
            combine(b, *values[i : i + 2]) if i + 1 < len(values) else values[i]
            for i in range(0, len(values), 2)
        ]
    return values[0]


@dataclass(frozen=True)
class Monoid:
    """How a reduction combines values: lane-wise, then across lanes."""

    combine: Callable[[TirBuilder, SSAValue, SSAValue], SSAValue]
    across: type
    identity: Callable[[Attribute], float | int]
    blocked: bool = False


def _extreme(element: Attribute, largest: bool) -> float | int:
    if tir.is_float(element):
        return math.inf if largest else -math.inf
    width = element.width.data
    if _is_unsigned(element):
        return 2**width - 1 if largest else 0
    return 2 ** (width - 1) - 1 if largest else -(2 ** (width - 1))


SUM = Monoid(lambda b, a, x: b.add(a, x), tir.ReduceAddOp, lambda e: 0, blocked=True)
PROD = Monoid(lambda b, a, x: b.mul(a, x), tir.ReduceMulOp, lambda e: 1)
MAX = Monoid(nan_max, tir.ReduceMaxOp, lambda e: _extreme(e, False))
MIN = Monoid(
    lambda b, a, x: nan_max(b, a, x, less=True), tir.ReduceMinOp, lambda e: _extreme(e, True)
)
PEAK = Monoid(
    lambda b, a, x: b.select(b.binary(tir.GtOp, x, a), x, a),
    tir.ReduceMaxOp,
    lambda e: _extreme(e, False),
)
"""A max that may drop NaN (one vmaxps a vector): for softmax, whose sum of
exp(x - max) turns any NaN of the row into a NaN result anyway."""
BOOL_MAX = Monoid(lambda b, a, x: b.binary(tir.OrOp, a, x), None, lambda e: 0)
BOOL_MIN = Monoid(lambda b, a, x: b.binary(tir.AndOp, a, x), None, lambda e: 1)

MONOIDS: dict[type, Monoid] = {
    graph.ReduceSumOp: SUM,
    graph.ReduceMeanOp: SUM,
    graph.ReduceProdOp: PROD,
    graph.ReduceMaxOp: MAX,
    graph.ReduceMinOp: MIN,
}


class Accumulators:
    """ACCUMULATORS vector vars (one per slot), a scalar var for the tail
    and, for blocked sums, a running vector total the slots fold into."""

    def __init__(self, kernel: Kernel, monoid: Monoid, element: Attribute, lanes: int):
        self.b, self.monoid, self.element = kernel.b, monoid, element
        self.identity = monoid.identity(element)
        self.vector_type = VectorType(element, [lanes]) if lanes > 1 else None
        vector_count = ACCUMULATORS if lanes > 1 else 0
        self.vectors = [self._fresh(self.vector_type) for _ in range(vector_count)]
        self.scalar = self._fresh(element)
        self.total = self._fresh(self.vector_type) if monoid.blocked and lanes > 1 else None

    def _fresh(self, type_: Attribute) -> SSAValue:
        return self.b.make_var(type_, self.b.const(self.identity, type_))

    def add(self, slot: int | None, value: SSAValue) -> None:
        var = self.scalar if slot is None else self.vectors[slot]
        self.b.make_assign(var, self.monoid.combine(self.b, self.b.read(var), value))

    def _tree(self, values: list[SSAValue]) -> SSAValue:
        return tree(self.b, values, self.monoid.combine)

    def fold(self) -> None:
        """Blocked sums: move the slots into the running total, restart them."""
        if self.total is None:
            return
        b = self.b
        b.make_assign(
            self.total, b.add(b.read(self.total), self._tree([b.read(v) for v in self.vectors]))
        )
        for var in self.vectors:
            b.make_assign(var, b.const(self.identity, self.vector_type))

    def result(self) -> SSAValue:
        b = self.b
        scalar = b.read(self.scalar)
        if not self.vectors:
            return scalar
        vectors = [b.read(v) for v in self.vectors]
        if self.total is not None:
            vectors = [b.read(self.total), self._tree(vectors)]
        lanes = b.unary(self.monoid.across, self._tree(vectors), self.element)
        return self.monoid.combine(b, lanes, scalar)


# --- reductions -----------------------------------------------------------------------------


def reduction(kernel: Kernel, op: graph.ReduceOp) -> None:
    """sum, mean, prod, max, min over any axes (see the module doc)."""
    x, out = kernel.inputs[0], kernel.out
    axes = op.reduced_axes(len(x.shape))
    count = math.prod(x.shape[d] for d in axes)
    outputs = math.prod(out.shape)
    element = compute_type(x.element)
    monoid = MONOIDS[type(op)]
    if element == i1 and monoid in (MAX, MIN):
        monoid = BOOL_MAX if monoid is MAX else BOOL_MIN
    if outputs == 0:
        return
    flat_out = _view(kernel, out, [outputs])
    if count == 0:  # an empty reduction: the identity everywhere
        fill = math.nan if isinstance(op, graph.ReduceMeanOp) else monoid.identity(element)
        with kernel.loop_nest([outputs]) as index:
            kernel.store(flat_out, index, kernel.b.const(fill, element))
        return

    def finish(value: SSAValue) -> SSAValue:
        if isinstance(op, graph.ReduceMeanOp):
            return kernel.b.div(value, float(count))
        return value

    groups = merge_dims(x.shape, axes)
    view = _view(kernel, x, [size for size, _ in groups])
    lanes = kernel.lanes if is_vectorizable(x) and monoid.across is not None else 1
    if [is_reduced for _, is_reduced in groups] == [False, True] and groups[1][0] < lanes:
        _reduce_short_rows(kernel, view, flat_out, *(size for size, _ in groups), monoid, finish)
    elif groups[-1][1]:
        _reduce_rows(kernel, view, flat_out, groups, monoid, element, lanes, finish)
    else:
        _reduce_columns(kernel, view, flat_out, groups, monoid, element, lanes, finish)


def _reduce_rows(kernel, view, flat_out, groups, monoid, element, lanes, finish) -> None:
    """The contiguous dim is reduced: one output per (kept) row, reduced with
    vector accumulators along the row, over every outer reduced dim."""
    b = kernel.b
    kept = [size for size, is_reduced in groups if not is_reduced]
    outer_reduced = [size for size, is_reduced in groups[:-1] if is_reduced]
    length = groups[-1][0]
    outputs = math.prod(kept)
    parallel = worth_parallel_work(outputs, math.prod(size for size, _ in groups))
    with kernel.loop_nest([outputs], parallel) as (flat,):
        kept_index = unflatten(b, flat, kept)
        accumulators = Accumulators(kernel, monoid, element, lanes)
        with kernel.loop_nest(outer_reduced, parallel=False) as reduced_index:

            def visit(j: SSAValue, width: int, slot: int | None) -> None:
                index = _interleave(groups, kept_index, [*reduced_index, j])
                accumulators.add(slot, kernel.load(view, index, width))

            _blocked_row(kernel, length, lanes, visit, accumulators)
        kernel.store(flat_out, [flat], finish(accumulators.result()))


SHORT_ROWS_PER_TASK = 1024
"""Outputs of a short-row reduction per parallel task: an inner loop long
enough to vectorize, with tasks enough for the threads."""


def _reduce_short_rows(kernel, view, flat_out, rows: int, length: int, monoid, finish) -> None:
    """out[i] = in[i, 0] (+) ... (+) in[i, length - 1], in order, for rows
    of fewer elements than a vector."""
    b = kernel.b
    per_task = min(rows, SHORT_ROWS_PER_TASK)
    tasks = math.ceil(rows / per_task)
    with kernel.loop_nest([tasks], worth_parallel_work(tasks, rows * length)) as (task,):
        first = b.mul(task, per_task)
        end = b.add(first, per_task)
        if rows % per_task:  # the last task stops at the last row
            end = b.binary(tir.MinOp, end, rows)
        with b.make_for(first, end, 1) as row:
            total = kernel.load(view, [row, 0])
            for j in range(1, length):
                total = monoid.combine(b, total, kernel.load(view, [row, j]))
            kernel.store(flat_out, [row], finish(total))


def _blocked_row(kernel, length, lanes, visit, accumulators) -> None:
    """`_row` over a whole row; blocked sums fold after every block."""
    block = ACCUMULATORS * lanes * BLOCK_STEPS
    blocks = length // block if accumulators.total is not None else 0
    if blocks > 1:
        with kernel.b.make_for(0, blocks * block, block) as start:
            _row(kernel, start, block, lanes, visit)
            accumulators.fold()
    else:
        blocks = 0
    _row(kernel, blocks * block, length - blocks * block, lanes, visit)
    accumulators.fold()


def _reduce_columns(kernel, view, flat_out, groups, monoid, element, lanes, finish) -> None:
    """The contiguous dim is kept: blocks of ACCUMULATORS vectors of columns,
    each accumulating whole vectors along all reduced dims; parallel over
    (outer kept rows x column blocks)."""
    b = kernel.b
    columns = groups[-1][0]
    outer_kept = [size for size, is_reduced in groups[:-1] if not is_reduced]
    reduced = [size for size, is_reduced in groups if is_reduced]
    rows = math.prod(outer_kept)
    out = _view(kernel, flat_out, [rows, columns])
    total = math.prod(size for size, _ in groups)

    def block(row: SSAValue, column: SSAValue | int, vectors: int, width: int) -> None:
        kept_index = unflatten(b, row, outer_kept)
        starts = [_plus(b, column, v * width) for v in range(vectors)]
        cells = [_var(b, element, width, monoid.identity(element)) for _ in range(vectors)]
        with kernel.loop_nest(reduced, parallel=False) as reduced_index:
            for cell, start in zip(cells, starts, strict=True):
                index = _interleave(groups, [*kept_index, start], reduced_index)
                b.make_assign(
                    cell, monoid.combine(b, b.read(cell), kernel.load(view, index, width))
                )
        for cell, start in zip(cells, starts, strict=True):
            kernel.store(out, [row, start], finish(b.read(cell)))

    width = ACCUMULATORS * lanes if lanes > 1 else 0
    blocks = columns // width if width else 0
    if blocks:
        with kernel.loop_nest([rows * blocks], worth_parallel_work(rows * blocks, total)) as (f,):
            block(b.div(f, blocks), b.mul(b.mod(f, blocks), width), ACCUMULATORS, lanes)
    done = blocks * width
    if done == columns:
        return
    rest = columns - done
    with kernel.loop_nest([rows], worth_parallel_work(rows, total * rest // columns)) as (row,):
        vectors = rest // lanes if lanes > 1 else 0
        if vectors:
            block(row, done, vectors, lanes)
        with b.make_for(done + vectors * lanes, columns, 1) as column:
            block(row, column, 1, 1)
