"""One lowering template per graph op family: what each output element is.

Templates only describe the computation; loops, vectorization, parallelism,
broadcasting and memory formats come from `Kernel` (kernel.py). Every
template takes `(kernel, op)` and writes `kernel.out`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    PARALLEL_MIN_ELEMENTS,
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
)

Template = Callable[[Kernel, Operation], None]
f32 = Float32Type()


def _props(op: Operation) -> dict[str, Attribute]:
    return op.with_defaults(op.properties)


# --- element-wise -------------------------------------------------------------------


def elementwise(compute: Callable[[Kernel, Operation, list[SSAValue]], SSAValue]) -> Template:
    """out[i] = compute(in_0[i'], in_1[i'], ...) with numpy broadcasting."""

    def template(kernel: Kernel, op: Operation) -> None:
        out = kernel.out

        def body(indices: list[SSAValue], lanes: int) -> None:
            values = [kernel.load(o, indices, lanes, out.shape) for o in kernel.inputs]
            kernel.store(out, indices, compute(kernel, op, values))

        kernel.for_each(out.shape, body, is_vectorizable(out, *kernel.inputs))

    return template


def _unary_compute(compute: Callable[[Kernel, SSAValue], SSAValue]):
    return lambda k, op, values: compute(k, values[0])


def _binary_compute(op_class: type):
    return lambda k, op, values: k.b.binary(op_class, *values)


def _erf(k: Kernel, x: SSAValue) -> SSAValue:
    """erf in f32: a Taylor series near 0 (relative accuracy), Abramowitz &
    Stegun 7.1.26 elsewhere (absolute error < 1.5e-7)."""
    b = k.b
    ax = b.unary(tir.AbsOp, x)
    t = b.div(1.0, b.add(1.0, b.mul(0.3275911, ax)))
    poly = k.const(1.061405429, x)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = b.add(b.mul(poly, t), coefficient)
    tail = b.sub(1.0, b.mul(b.mul(poly, t), b.unary(tir.ExpOp, b.sub(0.0, b.mul(x, x)))))
    signed_tail = b.select(b.binary(tir.LtOp, x, 0.0), b.sub(0.0, tail), tail)
    x2 = b.mul(x, x)
    series = k.const(1.0 / 216.0, x)  # 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216)
    for coefficient in (-1.0 / 42.0, 1.0 / 10.0, -1.0 / 3.0, 1.0):
        series = b.add(b.mul(series, x2), coefficient)
    series = b.mul(b.mul(series, x), 2.0 / math.sqrt(math.pi))
    return b.select(b.binary(tir.LtOp, ax, 0.5), series, signed_tail)


def _gelu(k: Kernel, op: graph.GeluOp, x: SSAValue) -> SSAValue:
    b = k.b
    if op.approximate.data == "tanh":
        inner = b.mul(math.sqrt(2.0 / math.pi), b.add(x, b.mul(0.044715, b.mul(x, b.mul(x, x)))))
        return b.mul(b.mul(0.5, x), b.add(1.0, b.unary(tir.TanhOp, inner)))
    return b.mul(b.mul(0.5, x), b.add(1.0, _erf(k, b.mul(x, 1.0 / math.sqrt(2.0)))))


def _clamp(k: Kernel, op: graph.ClampOp, x: SSAValue) -> SSAValue:
    low, high = (graph.float_value(op.properties, n) for n in ("min", "max"))
    if not tir.is_float(x.type):  # the reference clips in float, then truncates
        low, high = math.trunc(low), math.trunc(high)
    return k.b.binary(tir.MinOp, k.b.binary(tir.MaxOp, x, low), high)


def _divide(k: Kernel, op: Operation, values: list[SSAValue]) -> SSAValue:
    lhs, rhs = values
    if tir.is_float(lhs.type):
        return k.b.div(lhs, rhs)
    # integers: C truncation, and 0 (not a trap) when dividing by zero
    zero = k.b.binary(tir.EqOp, rhs, 0)
    safe = k.b.select(zero, k.const(1, rhs), rhs)
    return k.b.select(zero, k.const(0, lhs), k.b.div(lhs, safe))


def _leaky_relu(k: Kernel, op: graph.LeakyReluOp, x: SSAValue) -> SSAValue:
    alpha = graph.float_value(_props(op), "alpha")
    return k.b.select(k.b.binary(tir.GeOp, x, 0.0), x, k.b.mul(alpha, x))


def _sigmoid(k: Kernel, x: SSAValue) -> SSAValue:
    return k.b.div(1.0, k.b.add(1.0, k.b.unary(tir.ExpOp, k.b.sub(0.0, x))))


def _identity(k: Kernel, op: Operation, values: list[SSAValue]) -> SSAValue:
    return values[0]


UNARY: dict[type, Callable[[Kernel, SSAValue], SSAValue]] = {
    graph.ReluOp: lambda k, x: k.b.binary(tir.MaxOp, x, k.const(0, x)),
    graph.SigmoidOp: _sigmoid,
    graph.TanhOp: lambda k, x: k.b.unary(tir.TanhOp, x),
    graph.ExpOp: lambda k, x: k.b.unary(tir.ExpOp, x),
    graph.LogOp: lambda k, x: k.b.unary(tir.LogOp, x),
    graph.SqrtOp: lambda k, x: k.b.unary(tir.SqrtOp, x),
    graph.RsqrtOp: lambda k, x: k.b.unary(tir.RsqrtOp, x),
    graph.AbsOp: lambda k, x: k.b.unary(tir.AbsOp, x),
    graph.NegOp: lambda k, x: k.b.sub(k.const(0, x), x),
    graph.ErfOp: _erf,
    graph.ReciprocalOp: lambda k, x: k.b.div(k.const(1, x), x),
    graph.SquareOp: lambda k, x: k.b.mul(x, x),
}

BINARY: dict[type, type] = {
    graph.AddOp: tir.AddOp,
    graph.SubOp: tir.SubOp,
    graph.MulOp: tir.MulOp,
    graph.PowOp: tir.PowOp,
    graph.MaximumOp: tir.MaxOp,
    graph.MinimumOp: tir.MinOp,
    graph.GreaterOp: tir.GtOp,
    graph.LessOp: tir.LtOp,
    graph.EqualOp: tir.EqOp,
}


# --- matmul -----------------------------------------------------------------------------

BLOCK_LIMIT = 64


def _block(size: int) -> int:
    """The largest divisor of `size` not above BLOCK_LIMIT (brgemm sizes are static)."""
    return max(d for d in range(1, min(size, BLOCK_LIMIT) + 1) if size % d == 0)


Epilogue = Callable[[list, list[int]], None]
"""Called with a block's origin and sizes once that block of an anchor's
output is computed (graph.fused applies its element-wise ops there)."""


def matmul(kernel: Kernel, op: graph.MatmulOp) -> None:
    matmul_into(kernel, op, kernel.inputs[0], kernel.inputs[1], kernel.out)


def matmul_into(
    kernel: Kernel,
    op: graph.MatmulOp,
    a: Operand,
    b_: Operand,
    out: Operand,
    epilogue: Epilogue | None = None,
) -> None:
    props = _props(op)
    transposed = graph.bool_value(props, "transpose_a") or graph.bool_value(props, "transpose_b")
    all_f32 = all(o.element == f32 and not o.blocked for o in (a, b_, out))
    if all_f32 and not transposed:
        _matmul_brgemm(kernel, a, b_, out, epilogue)
    else:
        _matmul_loops(kernel, a, b_, out, props)
        if epilogue:
            epilogue([0] * len(out.shape), out.shape)


def _matmul_brgemm(
    kernel: Kernel, a: Operand, b_: Operand, out: Operand, epilogue: Epilogue | None = None
) -> None:
    """Tiles of the output, each one brgemm reducing over blocks of K (then
    the epilogue on the tile, while it is in cache)."""
    builder = kernel.b
    *batch, m, n = out.shape
    k = a.shape[-1]
    tile_m, tile_n, tile_k = _block(m), _block(n), _block(k)
    tiles_m, tiles_n = m // tile_m, n // tile_n
    tile_shape = [*batch, tiles_m, tiles_n]
    tile_count = math.prod(tile_shape)
    parallel = tile_count > 1 and math.prod(out.shape) * k >= PARALLEL_MIN_ELEMENTS
    with kernel.loop_nest([tile_count], parallel) as (flat,):
        # unflatten into the batch dims, then the m tile, then the n tile
        coordinates, rest = [], flat
        for size in reversed(tile_shape):
            if size == 1:
                coordinates.append(builder.value(0, IndexType()))
                continue
            coordinates.append(builder.mod(rest, size))
            rest = builder.div(rest, size)
        *batch_index, tile_row, tile_col = reversed(coordinates)
        row, col = builder.mul(tile_row, tile_m), builder.mul(tile_col, tile_n)
        a_batch = _broadcast_batch(batch_index, batch, a.shape[:-2])
        b_batch = _broadcast_batch(batch_index, batch, b_.shape[:-2])
        a_view = builder.tensor_ptr(a.value, [*a_batch, row, 0], [tile_m * k])
        b_view = builder.tensor_ptr(b_.value, [*b_batch, 0, col], [(k - 1) * n + tile_n])
        c_view = builder.tensor_ptr(
            out.value, [*batch_index, row, col], [(tile_m - 1) * n + tile_n]
        )
        builder.make_brgemm(
            a_view, b_view, c_view, k // tile_k,
            m=tile_m, n=tile_n, k=tile_k, lda=k, ldb=n, ldc=n, stride_a=tile_k, stride_b=tile_k * n,
        )  # fmt: skip
        if epilogue:
            epilogue([*batch_index, row, col], [*[1] * len(batch), tile_m, tile_n])


def _broadcast_batch(index: list[SSAValue], out_batch: list[int], batch: list[int]) -> list:
    offset = len(out_batch) - len(batch)
    return [0 if size == 1 else index[offset + d] for d, size in enumerate(batch)]


def _matmul_loops(kernel: Kernel, a: Operand, b_: Operand, out: Operand, props) -> None:
    """Any types, transposes and formats: a dot product per output element."""
    builder = kernel.b
    transpose_a, transpose_b = (graph.bool_value(props, n) for n in ("transpose_a", "transpose_b"))
    *batch, m, n = out.shape
    k = a.shape[-2] if transpose_a else a.shape[-1]
    accumulator = compute_type(out.element)
    with kernel.loop_nest(out.shape) as index:
        *batch_index, row, col = index
        total = kernel.var(accumulator, 0)
        with builder.make_for(0, k, 1) as depth:
            a_index = [
                *_broadcast_batch(batch_index, batch, a.shape[:-2]),
                *((depth, row) if transpose_a else (row, depth)),
            ]
            b_index = [
                *_broadcast_batch(batch_index, batch, b_.shape[:-2]),
                *((col, depth) if transpose_b else (depth, col)),
            ]
            product = builder.mul(kernel.load(a, a_index), kernel.load(b_, b_index))
            builder.make_assign(total, builder.add(builder.read(total), product))
        kernel.store(out, index, builder.read(total))


# --- reductions and normalizations -------------------------------------------------------


def _combine(kind: type) -> Callable:
    return {
        graph.ReduceSumOp: lambda b, acc, v: b.add(acc, v),
        graph.ReduceMeanOp: lambda b, acc, v: b.add(acc, v),
        graph.ReduceProdOp: lambda b, acc, v: b.mul(acc, v),
        graph.ReduceMaxOp: lambda b, acc, v: b.binary(tir.MaxOp, acc, v),
        graph.ReduceMinOp: lambda b, acc, v: b.binary(tir.MinOp, acc, v),
    }[kind]


def reduction(kernel: Kernel, op: graph.ReduceOp) -> None:
    builder, x, out = kernel.b, kernel.inputs[0], kernel.out
    props = _props(op)
    axes = graph.reduced_axes(props, len(x.shape))
    keep = graph.bool_value(props, "keep_dims")
    kept = [d for d in range(len(x.shape)) if d not in axes]
    combine = _combine(type(op))
    with kernel.loop_nest(out.shape) as out_index:
        kept_index = {d: out_index[d if keep else position] for position, d in enumerate(kept)}

        def input_index(reduced: list) -> list:
            return [
                kept_index[d] if d in kept_index else reduced[axes.index(d)]
                for d in range(len(x.shape))
            ]

        if isinstance(op, graph.ReduceMaxOp | graph.ReduceMinOp):
            initial = kernel.load(x, input_index([0] * len(axes)))
            total = builder.make_var(initial.type, initial)
        else:
            total = kernel.var(
                compute_type(x.element), 1 if isinstance(op, graph.ReduceProdOp) else 0
            )
        with kernel.loop_nest([x.shape[d] for d in axes], parallel=False) as reduced:
            builder.make_assign(
                total, combine(builder, builder.read(total), kernel.load(x, input_index(reduced)))
            )
        result = builder.read(total)
        if isinstance(op, graph.ReduceMeanOp):
            result = builder.div(result, float(math.prod(x.shape[d] for d in axes)))
        kernel.store(out, out_index, result)


def _outer_and_axis(op: Operation, shape: list[int]) -> tuple[list[int], int]:
    axis = graph.normalize_axis(graph.int_value(_props(op), "axis"), len(shape))
    return [s for d, s in enumerate(shape) if d != axis], axis


def softmax(kernel: Kernel, op: Operation) -> None:
    """Max-subtracted: exp(x - max) / sum, or x - max - log(sum)."""
    builder, x, out = kernel.b, kernel.inputs[0], kernel.out
    outer, axis = _outer_and_axis(op, x.shape)
    with kernel.loop_nest(outer) as index:

        def at(i) -> list:
            return [*index[:axis], i, *index[axis:]]

        first = kernel.load(x, at(0))
        peak = builder.make_var(first.type, first)
        with builder.make_for(0, x.shape[axis], 1) as i:
            builder.make_assign(
                peak, builder.binary(tir.MaxOp, builder.read(peak), kernel.load(x, at(i)))
            )
        maximum = builder.read(peak)
        total = kernel.var(first.type, 0)
        with builder.make_for(0, x.shape[axis], 1) as i:
            exponential = builder.unary(tir.ExpOp, builder.sub(kernel.load(x, at(i)), maximum))
            builder.make_assign(total, builder.add(builder.read(total), exponential))
            if isinstance(op, graph.SoftmaxOp):
                kernel.store(out, at(i), exponential)
        denominator = builder.read(total)
        log_total = builder.unary(tir.LogOp, denominator)
        with builder.make_for(0, x.shape[axis], 1) as i:
            if isinstance(op, graph.SoftmaxOp):
                kernel.store(out, at(i), builder.div(kernel.load(out, at(i)), denominator))
            else:
                kernel.store(
                    out, at(i), builder.sub(builder.sub(kernel.load(x, at(i)), maximum), log_total)
                )


def _flat(kernel: Kernel, operand: Operand, leading: list, count: int) -> Operand:
    """The `count` trailing elements after `leading` indices, as a 1-D view."""
    view = kernel.b.tensor_ptr(
        operand.value, [*leading, *[0] * (len(operand.shape) - len(leading))], [count]
    )
    return Operand(view, TensorType(operand.element, [count]))


def layer_norm(kernel: Kernel, op: graph.LayerNormOp) -> None:
    """Two passes (mean, then variance of the centred values), then normalize."""
    builder = kernel.b
    x, gamma, beta = kernel.inputs
    out = kernel.out
    props = _props(op)
    axis = graph.normalize_axis(graph.int_value(props, "axis"), len(x.shape))
    epsilon = graph.float_value(props, "epsilon")
    count = math.prod(x.shape[axis:])
    gamma_flat, beta_flat = _flat(kernel, gamma, [], count), _flat(kernel, beta, [], count)
    with kernel.loop_nest(x.shape[:axis]) as leading:
        row, out_row = _flat(kernel, x, leading, count), _flat(kernel, out, leading, count)
        total = kernel.var(f32, 0)
        with builder.make_for(0, count, 1) as i:
            builder.make_assign(total, builder.add(builder.read(total), kernel.load(row, [i])))
        mean = builder.div(builder.read(total), float(count))
        squares = kernel.var(f32, 0)
        with builder.make_for(0, count, 1) as i:
            centred = builder.sub(kernel.load(row, [i]), mean)
            builder.make_assign(
                squares, builder.add(builder.read(squares), builder.mul(centred, centred))
            )
        inverse = builder.unary(
            tir.RsqrtOp, builder.add(builder.div(builder.read(squares), float(count)), epsilon)
        )
        with builder.make_for(0, count, 1) as i:
            normalized = builder.mul(builder.sub(kernel.load(row, [i]), mean), inverse)
            scaled = builder.add(
                builder.mul(normalized, kernel.load(gamma_flat, [i])), kernel.load(beta_flat, [i])
            )
            kernel.store(out_row, [i], scaled)


def batch_norm(kernel: Kernel, op: graph.BatchNormOp) -> None:
    """Element-wise with per-channel parameters seen as [C, 1, ...] tensors."""
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


# --- data movement ------------------------------------------------------------------------


def gather(
    index_of: Callable[[Kernel, Operation, list[SSAValue]], list],
    vectorizable: Callable[[Operation], bool],
) -> Template:
    """out[i] = in[index_of(i)]; vectorized when the innermost index moves with i."""

    def template(kernel: Kernel, op: Operation) -> None:
        source, out = kernel.inputs[0], kernel.out

        def body(index: list[SSAValue], lanes: int) -> None:
            kernel.store(out, index, kernel.load(source, index_of(kernel, op, index), lanes))

        kernel.for_each(out.shape, body, vectorizable(op) and is_vectorizable(out, source))

    return template


def _transpose_index(kernel: Kernel, op: graph.TransposeOp, index: list) -> list:
    perm = graph.int_list(op.properties, "perm")
    source = [None] * len(perm)
    for d, p in enumerate(perm):
        source[p] = index[d]
    return source


def _slice_index(kernel: Kernel, op: graph.SliceOp, index: list) -> list:
    ranges = graph.slice_ranges(op.properties, kernel.inputs[0].shape)
    b = kernel.b
    return [
        b.add(b.mul(i, r.step), r.start) if (r.step, r.start) != (1, 0) else i
        for i, r in zip(index, ranges, strict=True)
    ]


def _slice_vectorizable(op: graph.SliceOp) -> bool:
    steps = graph.int_list(op.properties, "steps")
    return not steps or steps[-1] == 1


def reshape(kernel: Kernel, op: Operation) -> None:
    """The same elements in the same order: a flat copy."""
    count = math.prod(kernel.out.shape)
    source, out = (_flat(kernel, o, [], count) for o in (kernel.inputs[0], kernel.out))

    def body(index: list[SSAValue], lanes: int) -> None:
        kernel.store(out, index, kernel.load(source, index, lanes))

    kernel.for_each([count], body, is_vectorizable(out, source))


def concat(kernel: Kernel, op: graph.ConcatOp) -> None:
    out = kernel.out
    axis = graph.normalize_axis(graph.int_value(op.properties, "axis"), len(out.shape))
    offset = 0
    for source in kernel.inputs:

        def body(index: list[SSAValue], lanes: int, source=source, offset=offset) -> None:
            target = list(index)
            target[axis] = kernel.b.add(index[axis], offset) if offset else index[axis]
            kernel.store(out, target, kernel.load(source, index, lanes))

        kernel.for_each(source.shape, body, is_vectorizable(out, source))
        offset += source.shape[axis]


# --- convolution and pooling -------------------------------------------------------------


def _window_origin(kernel: Kernel, position: SSAValue, stride: int, pad: int) -> SSAValue:
    return kernel.b.sub(kernel.b.mul(position, stride), pad)


def _inside(kernel: Kernel, coordinates: list[SSAValue], sizes: list[int]) -> SSAValue:
    """0 <= c < size for every coordinate, as one i1."""
    b = kernel.b
    result = None
    for coordinate, size in zip(coordinates, sizes, strict=True):
        check = b.binary(
            tir.AndOp, b.binary(tir.GeOp, coordinate, 0), b.binary(tir.LtOp, coordinate, size)
        )
        result = check if result is None else b.binary(tir.AndOp, result, check)
    return result


def _window_params(op: Operation, kernel_size: list[int]) -> tuple[list[int], list[int], list[int]]:
    props = _props(op)
    strides = graph.int_list(props, "strides") or [1, 1]
    padding = graph.int_list(props, "padding") or [0, 0, 0, 0]
    dilations = graph.int_list(props, "dilations") or [1, 1]
    return strides, padding[:2], dilations


def conv2d(kernel: Kernel, op: graph.Conv2dOp) -> None:
    conv2d_into(kernel, op, kernel.inputs[0], kernel.inputs[1], kernel.out)


def conv2d_into(
    kernel: Kernel,
    op: graph.Conv2dOp,
    x: Operand,
    w: Operand,
    out: Operand,
    epilogue: Epilogue | None = None,
) -> None:
    """Direct convolution: one dot product per output element, padding skipped."""
    b = kernel.b
    n, c, h, width = x.shape
    o, i_per_group, kh, kw = w.shape
    groups = graph.int_value(_props(op), "groups")
    strides, pads, dilations = _window_params(op, [kh, kw])
    _, _, oh, ow = out.shape
    with kernel.loop_nest([o, n, oh, ow]) as (oc, batch, y, z):
        group = b.div(oc, o // groups)
        total = kernel.var(compute_type(out.element), 0)
        with kernel.loop_nest([i_per_group, kh, kw], parallel=False) as (ic, ky, kx):
            row = b.add(_window_origin(kernel, y, strides[0], pads[0]), b.mul(ky, dilations[0]))
            column = b.add(_window_origin(kernel, z, strides[1], pads[1]), b.mul(kx, dilations[1]))
            branch = b.make_if(_inside(kernel, [row, column], [h, width]))
            with b.at_end_of(branch.then_region.block):
                channel = b.add(b.mul(group, i_per_group), ic)
                product = b.mul(
                    kernel.load(x, [batch, channel, row, column]), kernel.load(w, [oc, ic, ky, kx])
                )
                b.make_assign(total, b.add(b.read(total), product))
        kernel.store(out, [batch, oc, y, z], b.read(total))
    if epilogue:
        epilogue([0, 0, 0, 0], out.shape)


def pool(kernel: Kernel, op: Operation) -> None:
    """max: padding never wins; avg: padding is not counted."""
    b = kernel.b
    x, out = kernel.inputs[0], kernel.out
    n, c, h, width = x.shape
    kernel_size = graph.int_list(op.properties, "kernel")
    strides, pads, _ = _window_params(op, kernel_size)
    is_max = isinstance(op, graph.MaxPool2dOp)
    element = compute_type(x.element)
    with kernel.loop_nest([c, n, *out.shape[2:]]) as (channel, batch, y, z):
        lowest = float("-inf") if tir.is_float(element) else -(2 ** (element.width.data - 1))
        total = kernel.var(element, lowest if is_max else 0)
        count = kernel.var(IntegerType(64), 0)
        with kernel.loop_nest(kernel_size, parallel=False) as (ky, kx):
            row = b.add(_window_origin(kernel, y, strides[0], pads[0]), ky)
            column = b.add(_window_origin(kernel, z, strides[1], pads[1]), kx)
            branch = b.make_if(_inside(kernel, [row, column], [h, width]))
            with b.at_end_of(branch.then_region.block):
                value = kernel.load(x, [batch, channel, row, column])
                combined = (
                    b.binary(tir.MaxOp, b.read(total), value)
                    if is_max
                    else b.add(b.read(total), value)
                )
                b.make_assign(total, combined)
                b.make_assign(count, b.add(b.read(count), 1))
        result = b.read(total)
        if not is_max:
            result = b.div(result, b.read(count))
        kernel.store(out, [batch, channel, y, z], result)


def _cast(k: Kernel, op: graph.CastOp, values: list[SSAValue]) -> SSAValue:
    """Convert to the result type (then to its compute type, for fused users)."""
    element = op.result.type.element_type
    return k.to_compute(k.from_compute(values[0], element), element)


ELEMENTWISE_COMPUTE: dict[type, Callable[[Kernel, Operation, list[SSAValue]], SSAValue]] = {
    **{op: _unary_compute(compute) for op, compute in UNARY.items()},
    **{op: _binary_compute(tir_op) for op, tir_op in BINARY.items()},
    graph.DivOp: _divide,
    graph.GeluOp: lambda k, op, v: _gelu(k, op, v[0]),
    graph.LeakyReluOp: lambda k, op, v: _leaky_relu(k, op, v[0]),
    graph.ClampOp: lambda k, op, v: _clamp(k, op, v[0]),
    graph.CastOp: _cast,
    graph.SelectOp: lambda k, op, v: k.b.select(*v),
    graph.BroadcastToOp: _identity,
}
"""What one element of each element-wise op is, given its operands' elements."""


def fused(kernel: Kernel, op: graph.FusedOp) -> None:
    """One loop nest for the whole group: each element goes through the
    region's ops in registers; with an anchor (matmul, conv2d) the anchor's
    output is computed first and the element-wise ops run on each of its
    blocks right after it is computed."""
    block = op.body.block
    anchor = op.anchor
    members = [m for m in block.ops if m is not anchor and not isinstance(m, graph.YieldOp)]
    yielded = list(block.last_op.values)
    argument = dict(zip(block.args, kernel.inputs, strict=True))
    shape = list(yielded[0].type.get_shape())
    vectorize = is_vectorizable(*kernel.outputs, *kernel.inputs)
    destination = None
    if anchor is not None:
        destination = _anchor_destination(kernel, anchor, yielded)
        argument[anchor.results[0]] = destination

    def body(indices: list[SSAValue], lanes: int) -> None:
        values: dict[SSAValue, SSAValue] = {}

        def value(v: SSAValue) -> SSAValue:
            if v not in values:
                values[v] = kernel.load(argument[v], indices, lanes, shape)
            return values[v]

        for member in members:
            values[member.results[0]] = ELEMENTWISE_COMPUTE[type(member)](
                kernel, member, [value(o) for o in member.operands]
            )
        for result, out in zip(yielded, kernel.outputs, strict=True):
            if out is not destination or result is not anchor.results[0]:
                kernel.store(out, indices, value(result))

    if anchor is None:
        kernel.for_each(shape, body, vectorize)
        return

    def epilogue(origin: list, sizes: list[int]) -> None:
        kernel.for_each(sizes, body, vectorize, origin=origin, parallel=False)

    anchor_inputs = [argument[v] for v in anchor.operands]
    into = matmul_into if isinstance(anchor, graph.MatmulOp) else conv2d_into
    into(kernel, anchor, *anchor_inputs, destination, epilogue)


def _anchor_destination(kernel: Kernel, anchor: Operation, yielded: list[SSAValue]) -> Operand:
    """Where the anchor writes: its own output if the group yields it, else an
    output of the same type it shares (the epilogue reads then overwrites
    each element), else a scratch tensor."""
    result = anchor.results[0]
    for value, out in zip(yielded, kernel.outputs, strict=True):
        if value is result:
            return out
    for out in kernel.outputs:
        if out.type == result.type:
            return out
    scratch = kernel.b.make_tensor(list(result.type.get_shape()), result.type.element_type)
    return Operand(scratch, result.type)


TEMPLATES: dict[type, Template] = {
    **{op: elementwise(compute) for op, compute in ELEMENTWISE_COMPUTE.items()},
    graph.MatmulOp: matmul,
    **{
        op: reduction
        for op in (
            graph.ReduceSumOp,
            graph.ReduceMeanOp,
            graph.ReduceMaxOp,
            graph.ReduceMinOp,
            graph.ReduceProdOp,
        )
    },
    graph.SoftmaxOp: softmax,
    graph.LogSoftmaxOp: softmax,
    graph.LayerNormOp: layer_norm,
    graph.BatchNormOp: batch_norm,
    graph.TransposeOp: gather(
        _transpose_index,
        lambda op: (
            graph.int_list(op.properties, "perm")[-1]
            == len(graph.int_list(op.properties, "perm")) - 1
        ),
    ),
    graph.SliceOp: gather(_slice_index, _slice_vectorizable),
    graph.ReshapeOp: reshape,
    graph.ConcatOp: concat,
    graph.Conv2dOp: conv2d,
    graph.MaxPool2dOp: pool,
    graph.AvgPool2dOp: pool,
    graph.FusedOp: fused,
}

COPY: Template = elementwise(_identity)
"""Copies a tensor into an output (a graph output that is an input, or returned twice)."""

BLOCKED_FORMAT_OPS = (*ELEMENTWISE_COMPUTE, graph.FusedOp)
"""The ops whose templates handle blocked memory formats (through Kernel.load/store)."""
