"""Reductions and normalizations: vectorized, several accumulators, parallel.

Every template first sees its tensors in a canonical shape (size-1 dims
dropped, neighbouring dims of the same kind merged: a reduction over axes
(1, 2) of [8, 3, 5, 7] is a [8, 15, 7] problem), then picks one of two
schedules:
- the contiguous (innermost) dim is reduced: each output element reduces a
  row with ACCUMULATORS independent vector accumulators of the target's
  width, combined as a tree, then across lanes, then with a scalar tail;
- the contiguous dim is kept: blocks of ACCUMULATORS vectors of kept columns
  accumulate whole vectors along the reduced dims, no lane combination.
The outermost loop runs over the outputs (rows, or row x column blocks),
parallel when the whole op reads enough elements. softmax reads each row
twice (an online max with a rescaled sum, then the normalization);
layer_norm combines per-block moments with Chan's formula in f64.
"""

from __future__ import annotations

import math
import sys
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
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir_builder import TirBuilder
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


def _props(op: Operation) -> dict[str, Attribute]:
    return op.with_defaults(op.properties)


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
    axes = graph.reduced_axes(_props(op), len(x.shape))
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
    if groups[-1][1]:
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


# --- softmax ------------------------------------------------------------------------------


def _online(b: TirBuilder, m: SSAValue, s: SSAValue, peak: SSAValue, t: SSAValue):
    """Merge two online-softmax states: (max m, sum s of exp(. - m)) and
    (max peak, sum t). A NaN max wins and stays (the caller flags it)."""
    wins = b.binary(
        tir.OrOp,
        b.binary(tir.GtOp, peak, m),
        b.unary(tir.IsnanOp, peak, tir.with_element(peak.type, i1)),
    )
    high, low = b.select(wins, peak, m), b.select(wins, m, peak)
    scale = b.unary(tir.ExpOp, b.sub(low, high))
    return high, b.select(wins, b.add(b.mul(s, scale), t), b.add(s, b.mul(t, scale)))


def _online_group(
    b: TirBuilder, m_var: SSAValue, s_vars: list[SSAValue], xs: list[SSAValue]
) -> None:
    """Absorb values xs (one per sum in s_vars, or fewer): the running max
    moves to the group's max once, every sum is rescaled by one exp, then
    gains exp(x - max): 1 + 1/len(xs) exps per value."""
    m = b.read(m_var)
    peak = xs[0]
    for x in xs[1:]:
        peak = nan_max(b, peak, x)
    peak = nan_max(b, m, peak)
    scale = b.unary(tir.ExpOp, b.sub(m, peak))
    for position, s_var in enumerate(s_vars):
        rescaled = b.mul(b.read(s_var), scale)
        if position < len(xs):
            rescaled = b.add(rescaled, b.unary(tir.ExpOp, b.sub(xs[position], peak)))
        b.make_assign(s_var, rescaled)
    b.make_assign(m_var, peak)


def _online_pass(b: TirBuilder, load: Callable, count: int, stride: int, m_var, s_vars) -> None:
    """Pass 1 over `count` vectors at positions 0, stride, ...: groups of
    len(s_vars) vectors, then the remaining ones alone."""
    group = len(s_vars)
    steps = count // group
    if steps:
        with b.make_for(0, steps * group * stride, group * stride) as start:
            _online_group(
                b, m_var, s_vars, [load(_plus(b, start, u * stride)) for u in range(group)]
            )
    for position in range(steps * group, count):
        _online_group(b, m_var, s_vars, [load(position * stride)])


def _finish_softmax(b: TirBuilder, m: SSAValue, s: SSAValue, log: bool) -> SSAValue:
    """What pass 2 needs: 1/s (softmax) or log(s) (log_softmax), NaN where the
    reference gives NaN: a NaN or +inf in the row (inf - inf), or no finite
    value (s < 0.5: the max itself always adds exp(0) = 1)."""
    valid = b.binary(tir.AndOp, b.binary(tir.GeOp, s, 0.5), b.binary(tir.LtOp, m, math.inf))
    value = b.unary(tir.LogOp, s) if log else b.div(1.0, s)
    return b.select(valid, value, math.nan)


def _normalized(b: TirBuilder, x: SSAValue, m: SSAValue, factor: SSAValue, log: bool) -> SSAValue:
    shifted = b.sub(x, m)
    return b.sub(shifted, factor) if log else b.mul(b.unary(tir.ExpOp, shifted), factor)


def _broadcast(b: TirBuilder, scalar: SSAValue, lanes: int) -> SSAValue:
    if lanes == 1:
        return scalar
    return b.unary(tir.BroadcastOp, scalar, VectorType(scalar.type, [lanes]))


@dataclass(frozen=True)
class RowIO:
    """How a row-wise template (softmax, layer_norm over the innermost axes)
    reads its normalized operand and writes its result, so that a fused
    group can compute element-wise producers on each load and consumers on
    each store: `load(row, j, lanes)` gives elements in the compute type,
    `store(row, j, value)` writes the result there. `scratch` is a
    [rows, length] buffer of the compute type softmax may park exp(x - max)
    in between its last two passes (None: it uses the online form).
    `prefetch(row, j)`, where given, asks for what load(row, j) and
    store(row, j) touch to be brought into the cache ahead of use."""

    load: Callable[[SSAValue, SSAValue | int, int], SSAValue]
    store: Callable[[SSAValue, SSAValue | int, SSAValue], None]
    scratch: Operand | None = None
    prefetch: Callable[[SSAValue, SSAValue | int], None] | None = None


def plain_rows(kernel: Kernel, x: Operand, out: Operand, rows: int, length: int) -> RowIO:
    """RowIO over dense tensors seen as [rows, length]."""
    x_view, out_view = _view(kernel, x, [rows, length]), _view(kernel, out, [rows, length])
    scratch = out_view if compute_type(out.element) == out.element else None

    def prefetch(row: SSAValue, j: SSAValue | int) -> None:
        kernel.b.make_prefetch(x_view.value, [row, j])
        kernel.b.make_prefetch(out_view.value, [row, j], write=True)

    return RowIO(
        lambda row, j, width: kernel.load(x_view, [row, j], width),
        lambda row, j, value: kernel.store(out_view, [row, j], value),
        scratch,
        prefetch,
    )


def softmax(kernel: Kernel, op: Operation) -> None:
    """softmax / log_softmax over one axis (see softmax_rows for the
    innermost axis; _softmax_columns otherwise)."""
    x, out = kernel.inputs[0], kernel.out
    axis = graph.normalize_axis(graph.int_value(_props(op), "axis"), len(x.shape))
    outer, length = math.prod(x.shape[:axis]), x.shape[axis]
    inner = math.prod(x.shape[axis + 1 :])
    if outer * length * inner == 0:
        return
    lanes = kernel.lanes if is_vectorizable(x, out) else 1
    element = compute_type(x.element)
    if inner == 1:
        io = plain_rows(kernel, x, out, outer, length)
        softmax_rows(kernel, op, element, outer, length, lanes, io)
        return
    shape = [outer, length, inner]
    x_view, out_view = _view(kernel, x, shape), _view(kernel, out, shape)
    log = isinstance(op, graph.LogSoftmaxOp)
    _softmax_columns(kernel, x_view, out_view, outer, length, inner, lanes, log)


def _lowest(element: Attribute) -> float:
    """The running max starts at the lowest finite value, so that a -inf
    element contributes exp(-inf) = 0 instead of exp(-inf - -inf) = NaN."""
    return -sys.float_info.max if element == f64 else -FLOAT_MAX


def _state(b: TirBuilder, element: Attribute, width: int, sums: int) -> tuple:
    """A running max (at the lowest finite value) and `sums` zero sums."""
    return _var(b, element, width, _lowest(element)), [
        _var(b, element, width, 0.0) for _ in range(sums)
    ]


def fits_in_cache(kernel: Kernel, element: Attribute, length: int) -> bool:
    """A row of `length` elements takes at most half of L2: read again (and
    an output row rescaled) right after, it is still cached."""
    return length * (8 if element == f64 else 4) <= kernel.target.l2_bytes // 2


def softmax_rows(
    kernel: Kernel, op: Operation, element: Attribute, rows: int, length: int, lanes: int, io: RowIO
) -> None:
    """softmax / log_softmax along contiguous rows, parallel over rows.

    Rows that fit in cache take three passes of one exp per element: the
    row max; exp(x - max) summed (softmax: parked in `io.scratch`); then the
    normalization (softmax: the parked row times 1/sum, still cached;
    log_softmax: x - max - log(sum)); the exp pass also prefetches the next
    row (io.prefetch). Longer rows read the input twice: an
    online pass (running max and rescaled sums, ~1.25 exp per element),
    then exp(x - max) / sum. Sums use ACCUMULATORS vector accumulators per
    lane, combined as a tree: an error of a few ulp, as numpy's pairwise sum."""
    log = isinstance(op, graph.LogSoftmaxOp)
    three_pass = fits_in_cache(kernel, element, length) and (log or io.scratch is not None)
    with kernel.loop_nest([rows], worth_parallel_work(rows, rows * length)) as (row,):
        if three_pass:
            following = _next_row(kernel.b, row, rows)
            peak, factor = _cached_pass(kernel, row, element, length, lanes, io, log, following)
        else:
            peak, factor = _online_row(kernel, row, element, length, lanes, io.load)
            factor = _finish_softmax(kernel.b, peak, factor, log)
        b = kernel.b

        def write(j: SSAValue, width: int) -> None:
            scale = _broadcast(b, factor, width)
            if three_pass and not log:
                io.store(row, j, b.mul(kernel.load(io.scratch, [row, j], width), scale))
                return
            value = io.load(row, j, width)
            io.store(row, j, _normalized(b, value, _broadcast(b, peak, width), scale, log))

        _elementwise_row(kernel, length, lanes, write)


def _next_row(b: TirBuilder, row: SSAValue, rows: int) -> SSAValue:
    """The row after `row` (the last row: itself), for prefetching."""
    return b.select(b.binary(tir.LtOp, row, rows - 1), b.add(row, 1), row)


def _cached_pass(
    kernel, row, element, length, lanes, io, log, following
) -> tuple[SSAValue, SSAValue]:
    """Passes 1 and 2 of a cached row: its max (NaN may be dropped: then
    exp(NaN - max) makes the sum NaN), then the sum of exp(x - max), softmax
    storing each exp into the scratch row. Returns (max, 1/sum or log(sum)),
    NaN where the reference gives NaN."""
    b = kernel.b
    peak = Accumulators(kernel, PEAK, element, lanes)
    _row(kernel, 0, length, lanes, lambda j, w, slot: peak.add(slot, io.load(row, j, w)))
    top = peak.result()
    total = Accumulators(kernel, SUM, element, lanes)

    def exponentials(j: SSAValue, width: int, slot: int | None) -> None:
        value = b.unary(tir.ExpOp, b.sub(io.load(row, j, width), _broadcast(b, top, width)))
        if io.prefetch is not None and width > 1:
            # the next row streams in while this one's exps compute (2.04 ->
            # 1.54 ms for softmax 4096x1024 on 1 thread: the passes over a
            # cached row otherwise leave the memory idle)
            io.prefetch(following, j)
        if not log:
            kernel.store(io.scratch, [row, j], value)
        total.add(slot, value)

    _blocked_row(kernel, length, lanes, exponentials, total)
    # max is -inf (no finite value, or an empty row: exp(NaN) made the sum
    # NaN already), +inf (inf - inf) or NaN: every one gives NaN
    return top, _finish_softmax(b, top, total.result(), log)


def _online_row(kernel, row, element, length, lanes, load) -> tuple[SSAValue, SSAValue]:
    """Pass 1 of a long row: per lane a running max shared by ACCUMULATORS
    sums, combined across lanes, then with the scalar tail: (max, sum)."""
    b = kernel.b
    vectors = length // lanes if lanes > 1 else 0
    tail_m, (tail_s,) = _state(b, element, 1, 1)
    if vectors:
        m_var, s_vars = _state(b, element, lanes, ACCUMULATORS)
        _online_pass(b, lambda j: load(row, j, lanes), vectors, lanes, m_var, s_vars)
    if vectors * lanes < length:
        with b.make_for(vectors * lanes, length, 1) as j:
            _online_group(b, tail_m, [tail_s], [load(row, j, 1)])
    peak, total = b.read(tail_m), b.read(tail_s)
    if vectors:
        lane_m = b.read(m_var)
        lanes_peak = b.unary(tir.ReduceMaxOp, lane_m, element)
        spread = b.unary(tir.ExpOp, b.sub(lane_m, _broadcast(b, lanes_peak, lanes)))
        lanes_total = b.unary(
            tir.ReduceAddOp,
            b.mul(tree(b, [b.read(v) for v in s_vars], TirBuilder.add), spread),
            element,
        )
        peak, total = _online(b, peak, total, lanes_peak, lanes_total)
    return peak, total


def _softmax_columns(kernel, x, out, outer, length, inner, lanes, log) -> None:
    """The axis is not contiguous: each lane is its own row. Vectors of
    `inner` columns keep a running max and ACCUMULATORS sums (over
    interleaved positions along the axis); parallel over (outer x column
    vectors)."""
    b = kernel.b
    element = compute_type(x.element)
    vectors = inner // lanes if lanes > 1 else 0
    units = [(vectors, lanes), (inner - vectors * lanes, 1)] if vectors else [(inner, 1)]
    done = 0
    for count, width in units:
        if not count:
            continue
        work = outer * length * count * width
        with kernel.loop_nest([outer * count], worth_parallel_work(outer * count, work)) as (f,):
            row = b.div(f, count) if outer > 1 else 0
            column = _plus(b, b.mul(b.mod(f, count), width) if count > 1 else 0, done)
            m_var, s_vars = _state(b, element, width, ACCUMULATORS)
            _online_pass(
                b,
                lambda i, at=(row, column, width): kernel.load(x, [at[0], i, at[1]], at[2]),
                length,
                1,
                m_var,
                s_vars,
            )
            peak = b.read(m_var)
            factor = _finish_softmax(
                b, peak, tree(b, [b.read(v) for v in s_vars], TirBuilder.add), log
            )
            with b.make_for(0, length, 1) as i:
                value = kernel.load(x, [row, i, column], width)
                kernel.store(out, [row, i, column], _normalized(b, value, peak, factor, log))
        done += count * width


# --- normalizations -----------------------------------------------------------------------


def layer_norm(kernel: Kernel, op: graph.LayerNormOp) -> None:
    """layer_norm over the trailing axes from `axis`, as rows (layer_norm_rows)."""
    x, gamma, beta = kernel.inputs
    axis = graph.normalize_axis(graph.int_value(_props(op), "axis"), len(x.shape))
    rows, count = math.prod(x.shape[:axis]), math.prod(x.shape[axis:])
    if rows * count == 0:
        return
    lanes = kernel.lanes if is_vectorizable(x, kernel.out, gamma, beta) else 1
    io = plain_rows(kernel, x, kernel.out, rows, count)
    parameters = [_view(kernel, p, [count]) for p in (gamma, beta)]
    layer_norm_rows(kernel, op, compute_type(x.element), rows, count, lanes, io, *parameters)


def layer_norm_rows(kernel, op, element, rows, count, lanes, io: RowIO, gamma, beta) -> None:
    """Per row: blocks of ACCUMULATORS x BLOCK_STEPS vectors, each with its
    mean then its centred sum of squares (vector accumulators, f32), merged
    into the row's moments with Chan's formula in f64; then
    (x - mean) / sqrt(var + epsilon) * gamma + beta, vectorized, prefetching
    the next row (-18% time at 4096x1024). The row is read three times
    (gamma and beta are [count] tensors)."""
    b = kernel.b
    epsilon = graph.float_value(_props(op), "epsilon")
    with kernel.loop_nest([rows], worth_parallel_work(rows, rows * count)) as (row,):
        load = lambda j, w: io.load(row, j, w)  # noqa: E731
        mean64, variance = row_moments(kernel, element, count, lanes, load)
        inverse = b.unary(tir.RsqrtOp, b.add(variance, epsilon))
        mean, inverse = b.cast(mean64, element), b.cast(inverse, element)
        following = _next_row(b, row, rows)

        def write(j: SSAValue, width: int) -> None:
            if io.prefetch is not None and width > 1:  # the next row, as softmax
                io.prefetch(following, j)
            centred = b.sub(io.load(row, j, width), _broadcast(b, mean, width))
            scaled = b.mul(
                b.mul(centred, _broadcast(b, inverse, width)), kernel.load(gamma, [j], width)
            )
            io.store(row, j, b.add(scaled, kernel.load(beta, [j], width)))

        _elementwise_row(kernel, count, lanes, write)


def row_moments(kernel: Kernel, element: Attribute, count: int, lanes: int, load) -> tuple:
    """(mean, variance) in f64 of the `count` values `load(j, width)` gives
    (one row of a normalization): per block of ACCUMULATORS x BLOCK_STEPS
    vectors its mean, then its centred sum of squares (vector accumulators of
    `element`), merged into the row's moments with Chan's formula in f64."""
    b = kernel.b
    block = ACCUMULATORS * max(lanes, 4) * BLOCK_STEPS
    moments = [b.make_var(f64, b.const(0.0, f64)) for _ in range(3)]  # seen, mean, m2

    def segment(start: SSAValue | int, size: int) -> None:
        total = Accumulators(kernel, SUM, element, lanes)
        _row(kernel, start, size, lanes, lambda j, w, slot: total.add(slot, load(j, w)))
        mean = b.div(total.result(), float(size))
        squares = Accumulators(kernel, SUM, element, lanes)

        def square(j: SSAValue, width: int, slot: int | None) -> None:
            centred = b.sub(load(j, width), _broadcast(b, mean, width))
            squares.add(slot, b.mul(centred, centred))

        _row(kernel, start, size, lanes, square)
        _chan(b, moments, float(size), b.cast(mean, f64), b.cast(squares.result(), f64))

    blocks = count // block
    if blocks:
        with b.make_for(0, blocks * block, block) as start:
            segment(start, block)
    if blocks * block < count:
        segment(blocks * block, count - blocks * block)
    seen, mean64, m2 = (b.read(v) for v in moments)
    return mean64, b.div(m2, seen)


def _chan(
    b: TirBuilder, moments: list[SSAValue], size: float, mean: SSAValue, m2: SSAValue
) -> None:
    """Merge a block's (size, mean, m2) into the running (seen, mean, m2)."""
    seen_var, mean_var, m2_var = moments
    seen = b.read(seen_var)
    merged = b.add(seen, size)
    delta = b.sub(mean, b.read(mean_var))
    b.make_assign(mean_var, b.add(b.read(mean_var), b.mul(delta, b.div(size, merged))))
    correction = b.mul(b.mul(delta, delta), b.div(b.mul(seen, size), merged))
    b.make_assign(m2_var, b.add(b.add(b.read(m2_var), m2), correction))
    b.make_assign(seen_var, merged)


def batch_norm(kernel: Kernel, op: graph.BatchNormOp) -> None:
    """Element-wise at the target's width, with per-channel parameters seen
    as [C, 1, ...] tensors broadcast over the spatial dims."""
    x, *parameters = kernel.inputs
    out = kernel.out
    epsilon = graph.float_value(_props(op), "epsilon")
    channel_shape = [x.shape[1], *[1] * (len(x.shape) - 2)]
    scale, bias, mean, var = (
        Operand(
            kernel.b.tensor_ptr(p.value, [0], channel_shape), TensorType(p.element, channel_shape)
        )
        for p in parameters
    )

    def body(index: list[SSAValue], lanes: int) -> None:
        b = kernel.b
        value, s, c, m, v = (
            kernel.load(o, index, lanes, out.shape) for o in (x, scale, bias, mean, var)
        )
        normalized = b.mul(b.sub(value, m), b.unary(tir.RsqrtOp, b.add(v, epsilon)))
        kernel.store(out, index, b.add(b.mul(normalized, s), c))

    kernel.for_each(out.shape, body, is_vectorizable(out, x))


def fused_row_anchor(
    kernel: Kernel,
    anchor: Operation,
    lanes: int,
    load: Callable,
    store: Callable,
    parked: Operand | None,
    parameters: list[Operand],
    prefetch: Callable[[SSAValue, SSAValue | int], None] | None = None,
) -> None:
    """A softmax, log_softmax or layer_norm over the innermost axis inside a
    graph.fused group: `load`/`store` (RowIO's) evaluate the group's
    producers and consumers; `parked` is an f32 output of the anchor's shape
    softmax may park exp(x - max) in (None: the online form); `parameters`
    are layer_norm's gamma and beta; `prefetch` as RowIO's."""
    shape = list(anchor.results[0].type.get_shape())
    rows, length = math.prod(shape[:-1]), shape[-1]
    if rows * length == 0:
        return
    scratch = _view(kernel, parked, [rows, length]) if parked is not None else None
    io = RowIO(load, store, scratch, prefetch)
    if isinstance(anchor, graph.LayerNormOp):
        gamma, beta = (_view(kernel, p, [length]) for p in parameters)
        layer_norm_rows(kernel, anchor, f32, rows, length, lanes, io, gamma, beta)
    else:
        softmax_rows(kernel, anchor, f32, rows, length, lanes, io)
