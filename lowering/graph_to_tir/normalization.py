"""Row kernels: softmax and log_softmax, layer_norm, batch_norm, rms_norm,
instance_norm, and the row anchors of fused groups, built on the
reductions' vector accumulators (reductions.py).

softmax over cached rows takes three passes (max; exp(x - max) summed and
parked; the normalization), prefetching the next row while the exps
compute; longer rows use an online max with a rescaled sum. layer_norm
combines per-block moments with Chan's formula in f64. rms_norm and
instance_norm see their input as [rows, count] (rms_norm: the dims from
`axis` on are a row; instance_norm: the spatial dims of one (n, c) are a
row). Per row, a statistic pass: instance_norm takes layer_norm's f64 mean
and variance (`row_moments`: blocked vector sums merged with Chan's
formula); rms_norm sums x * x with the reductions' blocked vector
accumulators (a sum of squares, so an inf gives 0 for the finite elements
and NaN for itself, as numpy). Then one vectorized pass writes the row.
The loop over rows is parallel when the op reads enough elements.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, Float64Type, TensorType, VectorType, i1
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
    worth_parallel_work,
)
from graphcompiler.lowering.graph_to_tir.reductions import (
    ACCUMULATORS,
    BLOCK_STEPS,
    FLOAT_MAX,
    PEAK,
    SUM,
    Accumulators,
    _blocked_row,
    _elementwise_row,
    _plus,
    _row,
    _var,
    _view,
    nan_max,
    tree,
)

f32, f64 = Float32Type(), Float64Type()
Load = Callable[[SSAValue, int], SSAValue]


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
    costly_load: bool = False
    """`load` costs more than reading the scratch row back (a fused group's
    producers divide or round: quantize/dequantize round trips): layer_norm
    then parks the row in its first pass (BERT-base QDQ 78 -> 70 ms on one
    thread; a plain or residual row read three times ran faster, 1.69
    against 2.13 ms at 4096x1024)."""


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


def softmax(kernel: Kernel, op: graph.SoftmaxBase) -> None:
    """softmax / log_softmax over one axis (see softmax_rows for the
    innermost axis; _softmax_columns otherwise)."""
    x, out = kernel.inputs[0], kernel.out
    axis = op.normalized_axis(len(x.shape))
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
    row max (softmax: x parked in `io.scratch`, so that a fused group's
    producers run once per element: a scaled, masked, re-quantized attention
    score row 7-11% faster); exp(x - max) summed (softmax: parked in
    `io.scratch`); then the normalization (softmax: the parked row times
    1/sum, still cached;
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
    parks = io.scratch is not None and not log

    def maximum(j: SSAValue, width: int, slot: int | None) -> None:
        value = io.load(row, j, width)
        if parks:  # pass 2 reads it back rather than evaluating a fused group's producers again
            kernel.store(io.scratch, [row, j], value)
        peak.add(slot, value)

    _row(kernel, 0, length, lanes, maximum)
    top = peak.result()
    total = Accumulators(kernel, SUM, element, lanes)

    def exponentials(j: SSAValue, width: int, slot: int | None) -> None:
        x = kernel.load(io.scratch, [row, j], width) if parks else io.load(row, j, width)
        value = b.unary(tir.ExpOp, b.sub(x, _broadcast(b, top, width)))
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
    axis = op.normalized_axis(len(x.shape))
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
    epsilon = op.epsilon_value
    with kernel.loop_nest([rows], worth_parallel_work(rows, rows * count)) as (row,):
        load = lambda j, w: io.load(row, j, w)  # noqa: E731
        reload = load
        if io.scratch is not None and io.costly_load:  # the first pass parks x for the other two

            def load(j: SSAValue | int, width: int, row=row) -> SSAValue:
                value = io.load(row, j, width)
                kernel.store(io.scratch, [row, j], value)
                return value

            reload = lambda j, w, row=row: kernel.load(io.scratch, [row, j], w)  # noqa: E731
        mean64, variance = row_moments(kernel, element, count, lanes, load, reload)
        inverse = b.unary(tir.RsqrtOp, b.add(variance, epsilon))
        mean, inverse = b.cast(mean64, element), b.cast(inverse, element)
        following = _next_row(b, row, rows)

        def write(j: SSAValue, width: int) -> None:
            if io.prefetch is not None and width > 1:  # the next row, as softmax
                io.prefetch(following, j)
            centred = b.sub(reload(j, width), _broadcast(b, mean, width))
            scaled = b.mul(
                b.mul(centred, _broadcast(b, inverse, width)), kernel.load(gamma, [j], width)
            )
            io.store(row, j, b.add(scaled, kernel.load(beta, [j], width)))

        _elementwise_row(kernel, count, lanes, write)


def row_moments(
    kernel: Kernel, element: Attribute, count: int, lanes: int, load, reload=None
) -> tuple:
    """(mean, variance) in f64 of the `count` values `load(j, width)` gives
    (one row of a normalization): per block of ACCUMULATORS x BLOCK_STEPS
    vectors its mean, then its centred sum of squares (vector accumulators of
    `element`), merged into the row's moments with Chan's formula in f64.
    `reload(j, width)` gives the same values again for the squares (default
    `load`: a caller may park what `load` computed)."""
    reload = reload or load
    b = kernel.b
    block = ACCUMULATORS * max(lanes, 4) * BLOCK_STEPS
    moments = [b.make_var(f64, b.const(0.0, f64)) for _ in range(3)]  # seen, mean, m2

    def segment(start: SSAValue | int, size: int) -> None:
        total = Accumulators(kernel, SUM, element, lanes)
        _row(kernel, start, size, lanes, lambda j, w, slot: total.add(slot, load(j, w)))
        mean = b.div(total.result(), float(size))
        squares = Accumulators(kernel, SUM, element, lanes)

        def square(j: SSAValue, width: int, slot: int | None) -> None:
            centred = b.sub(reload(j, width), _broadcast(b, mean, width))
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
    epsilon = op.epsilon_value
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
    costly_load: bool = False,
) -> None:
    """A softmax, log_softmax or layer_norm over the innermost axis inside a
    graph.fused group: `load`/`store` (RowIO's) evaluate the group's
    producers and consumers; `parked` is an f32 output of the anchor's shape
    softmax may park exp(x - max) in (None: the online form); `parameters`
    are layer_norm's gamma and beta; `prefetch` and `costly_load` as RowIO's."""
    shape = list(anchor.results[0].type.get_shape())
    rows, length = math.prod(shape[:-1]), shape[-1]
    if rows * length == 0:
        return
    scratch = _view(kernel, parked, [rows, length]) if parked is not None else None
    io = RowIO(load, store, scratch, prefetch, costly_load)
    if isinstance(anchor, graph.LayerNormOp):
        gamma, beta = (_view(kernel, p, [length]) for p in parameters)
        layer_norm_rows(kernel, anchor, f32, rows, length, lanes, io, gamma, beta)
    else:
        softmax_rows(kernel, anchor, f32, rows, length, lanes, io)


# --- rms_norm and instance_norm ---------------------------------------------------------


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


def _inverse_root(
    kernel: Kernel, op: graph.HasEpsilon, statistic64: SSAValue, element: Attribute
) -> SSAValue:
    """1 / sqrt(statistic + epsilon), computed in f64, in the compute type."""
    b = kernel.b
    return b.cast(b.unary(tir.RsqrtOp, b.add(statistic64, op.epsilon_value)), element)


def rms_norm(kernel: Kernel, op: graph.RmsNormOp) -> None:
    """x * (1 / sqrt(mean(x * x) + epsilon)) * scale[j] over rows of the dims from `axis` on."""
    x, scale = kernel.inputs
    axis = op.normalized_axis(len(x.shape))
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
