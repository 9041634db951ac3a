"""One lowering template per graph op family: what each output element is.

Templates only describe the computation; loops, vectorization, parallelism,
broadcasting and memory formats come from `Kernel` (kernel.py). Every
template takes `(kernel, op)` and writes `kernel.out`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import (
    Float32Type,
    IntegerType,
    TensorType,
    VectorType,
)
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.attention import attention
from graphcompiler.lowering.graph_to_tir.conv import conv2d, conv2d_into
from graphcompiler.lowering.graph_to_tir.conv_blocked import blocked_conv2d, blocked_conv2d_into
from graphcompiler.lowering.graph_to_tir.gather_pad import lookup, pad, take
from graphcompiler.lowering.graph_to_tir.indexing import (
    gather_elements,
    gather_nd,
    scatter_elements,
    scatter_nd,
)
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
)
from graphcompiler.lowering.graph_to_tir.matmul_template import matmul, matmul_into
from graphcompiler.lowering.graph_to_tir.normalization import (
    batch_norm,
    fused_row_anchor,
    instance_norm,
    layer_norm,
    rms_norm,
    softmax,
)
from graphcompiler.lowering.graph_to_tir.pool import pool
from graphcompiler.lowering.graph_to_tir.reductions import reduction, unflatten
from graphcompiler.lowering.graph_to_tir.reorder import reorder
from graphcompiler.lowering.graph_to_tir.scalar_math import (
    activation,
    bitwise_not,
    clamp,
    erf,
    gelu,
    is_unsigned,
    leaky_relu,
    mod,
    prelu,
    shift,
    sigmoid,
    sign,
    softplus,
)
from graphcompiler.lowering.graph_to_tir.scan import TEMPLATES as SCAN_TEMPLATES
from graphcompiler.lowering.graph_to_tir.transpose import source_index, tiled, transpose_tiles

Template = Callable[[Kernel, Operation], None]
f32 = Float32Type()


# --- element-wise -------------------------------------------------------------------


def elementwise(compute: Callable[[Kernel, Operation, list[SSAValue]], SSAValue]) -> Template:
    """out[i] = compute(in_0[i'], in_1[i'], ...) with numpy broadcasting."""

    def template(kernel: Kernel, op: Operation) -> None:
        out, inputs = kernel.out, kernel.inputs
        vectorize = is_vectorizable(out, *inputs)
        flat = _flat_operands(kernel, out.shape, [out, *inputs])
        if flat is not None:
            out, *inputs = flat

        def body(indices: list[SSAValue], lanes: int) -> None:
            values = [kernel.load(o, indices, lanes, out.shape) for o in inputs]
            kernel.store(out, indices, compute(kernel, op, values))

        if flat is not None:
            kernel.for_each_flat(out.shape[0], body, vectorize)
        else:
            kernel.for_each(out.shape, body, vectorize)

    return template


def _unary_compute(compute: Callable[[Kernel, SSAValue], SSAValue]):
    return lambda k, op, values: compute(k, values[0])


def _binary_compute(op_class: type):
    return lambda k, op, values: k.b.binary(op_class, *values)


def _identity(k: Kernel, op: Operation, values: list[SSAValue]) -> SSAValue:
    return values[0]


UNARY: dict[type, Callable[[Kernel, SSAValue], SSAValue]] = {
    graph.ReluOp: lambda k, x: k.b.binary(tir.MaxOp, x, k.const(0, x)),
    graph.SigmoidOp: sigmoid,
    graph.TanhOp: lambda k, x: k.b.unary(tir.TanhOp, x),
    graph.ExpOp: lambda k, x: k.b.unary(tir.ExpOp, x),
    graph.LogOp: lambda k, x: k.b.unary(tir.LogOp, x),
    graph.SqrtOp: lambda k, x: k.b.unary(tir.SqrtOp, x),
    graph.RsqrtOp: lambda k, x: k.b.unary(tir.RsqrtOp, x),
    graph.AbsOp: lambda k, x: x if is_unsigned(x) else k.b.unary(tir.AbsOp, x),
    graph.NegOp: lambda k, x: k.b.sub(
        k.const(-0.0 if tir.is_float(x.type) else 0, x), x
    ),  # -(+0) = -0
    graph.ErfOp: erf,
    graph.ReciprocalOp: lambda k, x: k.b.div(k.const(1, x), x),
    graph.SquareOp: lambda k, x: k.b.mul(x, x),
    graph.SoftplusOp: softplus,
    graph.LogicalNotOp: lambda k, x: k.b.unary(tir.NotOp, x),
    graph.SinOp: lambda k, x: k.b.unary(tir.SinOp, x),
    graph.CosOp: lambda k, x: k.b.unary(tir.CosOp, x),
    graph.SignOp: sign,
    graph.RoundOp: lambda k, x: k.b.unary(tir.RoundEvenOp, x),
    graph.FloorOp: lambda k, x: k.b.unary(tir.FloorOp, x),
    graph.CeilOp: lambda k, x: k.b.unary(tir.CeilOp, x),
    graph.BitwiseNotOp: bitwise_not,
}

BINARY: dict[type, type] = {
    graph.AddOp: tir.AddOp,
    graph.SubOp: tir.SubOp,
    graph.MulOp: tir.MulOp,
    graph.DivOp: tir.DivOp,  # integers: x / 0 = 0, INT_MIN / -1 = INT_MIN (tir.div never traps)
    graph.PowOp: tir.PowOp,
    graph.MaximumOp: tir.MaxOp,
    graph.MinimumOp: tir.MinOp,
    graph.GreaterOp: tir.GtOp,
    graph.LessOp: tir.LtOp,
    graph.EqualOp: tir.EqOp,
    graph.GreaterEqualOp: tir.GeOp,
    graph.LessEqualOp: tir.LeOp,
    graph.NotEqualOp: tir.NeOp,
    graph.LogicalAndOp: tir.AndOp,
    graph.LogicalOrOp: tir.OrOp,
    graph.LogicalXorOp: tir.NeOp,
    graph.BitwiseAndOp: tir.IntAndOp,
    graph.BitwiseOrOp: tir.IntOrOp,
    graph.BitwiseXorOp: tir.IntXorOp,
}


def _flat_operands(kernel: Kernel, shape: list[int], operands: list[Operand]) -> list | None:
    """1-D views of `operands` when an element-wise op over `shape` can walk
    them as one flat range (plain layouts; each operand is the whole shape,
    up to leading 1s, or a single element), else None."""

    def squeezed(dims: list[int]) -> list[int]:
        while dims and dims[0] == 1:
            dims = dims[1:]
        return dims

    flat = []
    for operand in operands:
        size = math.prod(operand.shape)
        if operand.blocked or (size != 1 and squeezed(operand.shape) != squeezed(shape)):
            return None
        flat.append(_flat_buffer(kernel, operand, size))
    return flat


def _rows_merged(
    kernel: Kernel, shape: list[int], operands: list[Operand]
) -> tuple[dict[int, Operand], list[int]] | None:
    """Views of `operands` with the last two dims of `shape` merged into one
    ({id(operand): view}, the merged shape), when each operand's last two
    dims are those of `shape` or both broadcast (size 1, or absent: a
    per-channel bias), so that whole rows can be walked as one range; else None."""
    if len(shape) < 2 or shape[-1] == 1:
        return None
    merged_shape = [*shape[:-2], shape[-2] * shape[-1]]
    merged_dims: dict[int, tuple[Operand, list[int]]] = {}
    for operand in operands:
        dims = operand.shape
        if operand.blocked:
            return None
        if len(dims) >= 2 and dims[-2:] == shape[-2:]:
            merged = [*dims[:-2], shape[-2] * shape[-1]]
        elif len(dims) >= 2 and dims[-2:] == [1, 1]:
            merged = [*dims[:-2], 1]
        elif math.prod(dims) == 1:
            merged = dims
        else:
            return None
        if merged != dims:
            merged_dims[id(operand)] = (operand, merged)
    views = {  # made once every operand is known to merge: no dead views
        key: Operand(
            kernel.b.tensor_ptr(operand.value, [0] * len(operand.shape), merged),
            TensorType(operand.element, merged),
            operand.constant,
        )
        for key, (operand, merged) in merged_dims.items()
    }
    return views, merged_shape


def _flat(kernel: Kernel, operand: Operand, leading: list, count: int) -> Operand:
    """The `count` trailing elements after `leading` indices, as a 1-D view."""
    view = kernel.b.tensor_ptr(
        operand.value, [*leading, *[0] * (len(operand.shape) - len(leading))], [count]
    )
    return Operand(view, TensorType(operand.element, [count]))


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


_transpose_gather = gather(
    lambda kernel, op, index: source_index(op, index),
    lambda op: op.permutation[-1] == len(op.permutation) - 1,
)


def transpose(kernel: Kernel, op: graph.TransposeOp) -> None:
    """Register tiles where the innermost dim moves (transpose.py), else a
    gather, vectorized where it stays."""
    if tiled(kernel, op):
        transpose_tiles(kernel, op)
    else:
        _transpose_gather(kernel, op)


def _slice_index(kernel: Kernel, op: graph.SliceOp, index: list) -> list:
    ranges = op.ranges(kernel.inputs[0].shape)
    b = kernel.b
    return [
        b.add(b.mul(i, r.step), r.start) if (r.step, r.start) != (1, 0) else i
        for i, r in zip(index, ranges, strict=True)
    ]


def _slice_vectorizable(op: graph.SliceOp) -> bool:
    steps = op.step_sizes
    return not steps or steps[-1] == 1


def reshape(kernel: Kernel, op: Operation) -> None:
    """The same elements in the same order: a flat copy (in parallel chunks
    when it is big enough, as an element-wise op)."""
    count = math.prod(kernel.out.shape)
    source, out = (_flat_buffer(kernel, o, count) for o in (kernel.inputs[0], kernel.out))

    def body(index: list[SSAValue], lanes: int) -> None:
        kernel.store(out, index, kernel.load(source, index, lanes))

    kernel.for_each_flat(count, body, is_vectorizable(out, source))


def _flat_buffer(kernel: Kernel, operand: Operand, count: int) -> Operand:
    """All of `operand`'s `count` elements as a 1-D tensor (a rank-0 or 1-D
    buffer already is one)."""
    if len(operand.value.type.get_shape()) == 1:
        return Operand(operand.value, TensorType(operand.element, [count]))
    return _flat(kernel, operand, [], count)


def concat(kernel: Kernel, op: graph.ConcatOp) -> None:
    out = kernel.out
    axis = op.normalized_axis(len(out.shape))
    offset = 0
    for source in kernel.inputs:

        def body(index: list[SSAValue], lanes: int, source=source, offset=offset) -> None:
            target = list(index)
            target[axis] = kernel.b.add(index[axis], offset) if offset else index[axis]
            kernel.store(out, target, kernel.load(source, index, lanes))

        kernel.for_each(source.shape, body, is_vectorizable(out, source))
        offset += source.shape[axis]


def _cast(k: Kernel, op: graph.CastOp, values: list[SSAValue]) -> SSAValue:
    """Convert to the result type (then to its compute type, for fused users)."""
    element = op.result.type.element_type
    return k.to_compute(k.from_compute(values[0], element), element)


def _bitcast(k: Kernel, op: graph.BitcastOp, values: list[SSAValue]) -> SSAValue:
    """The stored bits seen as the result type: integers of one width (and
    i1's byte) convert exactly by a cast, others are reinterpreted; a 4-
    or 2-bit integer result is wrapped back into its range."""
    source, target = op.input.type.element_type, op.result.type.element_type
    stored = k.from_compute(values[0], source)
    if isinstance(source, IntegerType) and isinstance(target, IntegerType):
        return k.to_compute(k.b.cast(stored, tir.with_element(stored.type, target)), target)
    viewed = k.b.unary(tir.ReinterpretOp, stored, tir.with_element(stored.type, target))
    if graph.is_storage_only(target) and isinstance(target, IntegerType):
        byte = k.b.cast(viewed, tir.with_element(viewed.type, IntegerType(8)))
        viewed = k.b.cast(byte, tir.with_element(viewed.type, target))
    return k.to_compute(viewed, target)


ELEMENTWISE_COMPUTE: dict[type, Callable[[Kernel, Operation, list[SSAValue]], SSAValue]] = {
    **{op: _unary_compute(compute) for op, compute in UNARY.items()},
    **{op: _binary_compute(tir_op) for op, tir_op in BINARY.items()},
    graph.GeluOp: lambda k, op, v: gelu(k, op, v[0]),
    graph.LeakyReluOp: lambda k, op, v: leaky_relu(k, op, v[0]),
    graph.ClampOp: lambda k, op, v: clamp(k, op, v[0]),
    graph.CastOp: _cast,
    graph.BitcastOp: _bitcast,
    **{
        op: activation for op in (graph.EluOp, graph.SeluOp, graph.HardSigmoidOp, graph.HardSwishOp)
    },
    graph.PreluOp: prelu,
    graph.ModOp: mod,
    graph.ShiftLeftOp: shift,
    graph.ShiftRightOp: shift,
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
    if isinstance(anchor, graph.ROW_ANCHORS):
        _fused_rows(kernel, op, anchor)
        return
    members = [m for m in block.ops if m is not anchor and not isinstance(m, graph.YieldOp)]
    yielded = list(block.last_op.values)
    argument = dict(zip(block.args, kernel.inputs, strict=True))
    shape = list(yielded[0].type.get_shape())
    vectorize = is_vectorizable(*kernel.outputs, *kernel.inputs)
    outputs = kernel.outputs
    destination = None
    if anchor is not None:
        destination = _anchor_destination(kernel, anchor, yielded)
        argument[anchor.results[0]] = destination
    flat = None if anchor is not None else _flat_operands(kernel, shape, [*outputs, *kernel.inputs])
    if flat is not None:
        outputs = flat[: len(outputs)]
        argument = dict(zip(block.args, flat[len(outputs) :], strict=True))
        shape = [math.prod(shape)]

    def writer(argument: dict, outputs: list, destination, shape: list[int]):
        """The loop body computing the group's outputs on these operands."""

        def body(indices: list[SSAValue], lanes: int) -> None:
            value = _chain_values(kernel, argument, members, {}, indices, lanes, shape)
            for result, out in zip(yielded, outputs, strict=True):
                if out is not destination or result is not anchor.results[0]:
                    kernel.store(out, indices, value(result))

        return body

    body = writer(argument, outputs, destination, shape)

    if flat is not None:
        kernel.for_each_flat(shape[0], body, vectorize)
        return
    if anchor is None:
        kernel.for_each(shape, body, vectorize)
        return

    # what the epilogue reads: the anchor's own inputs (a convolution's
    # input and filter, of other shapes) do not keep its rows apart
    epilogue_values = {*yielded, *(v for member in members for v in member.operands)}

    def epilogue(origin: list, sizes: list[int]) -> None:
        whole_rows = len(shape) >= 2 and sizes[-1] == shape[-1] and sizes[-2] > 1
        operands = [*outputs, *(argument[v] for v in argument if v in epilogue_values)]
        rows_merged = _rows_merged(kernel, shape, operands) if whole_rows and vectorize else None
        if rows_merged is None:
            kernel.for_each(sizes, body, vectorize, origin=origin, parallel=False)
            return
        # whole rows are contiguous: one vector loop over them, on views
        # with the last two dims merged (short rows, 7 or 14 wide, would
        # otherwise leave most of each row to the scalar tail)
        views, merged_shape = rows_merged
        merged_body = writer(
            {v: views.get(id(o), o) for v, o in argument.items()},
            [views.get(id(o), o) for o in outputs],
            views.get(id(destination), destination),
            merged_shape,
        )
        first_row, width = origin[-2], shape[-1]
        row_start = (
            first_row * width if isinstance(first_row, int) else kernel.b.mul(first_row, width)
        )
        kernel.for_each(
            [*sizes[:-2], sizes[-2] * sizes[-1]], merged_body, vectorize,
            origin=[*origin[:-2], row_start], parallel=False,
        )  # fmt: skip

    if empty_contraction(anchor):  # the anchor's output is all zeros
        fill_zeros(kernel, destination)
        epilogue([0] * len(shape), shape)
        return
    anchor_inputs = [argument[v] for v in anchor.operands]
    into = {
        graph.MatmulOp: matmul_into,
        graph.Conv2dOp: conv2d_into,
        graph.BlockedConv2dOp: blocked_conv2d_into,
    }[type(anchor)]
    into(kernel, anchor, *anchor_inputs, destination, epilogue)


def _chain_values(kernel: Kernel, argument: dict, chain: list, values: dict, index, lanes, shape):
    """Compute the element-wise ops of `chain` on the element(s) at `index`
    into `values`; an operand not there yet is loaded from the kernel input
    `argument` maps it to (once). Returns the lookup `value(v)`."""

    def value(v: SSAValue) -> SSAValue:
        if v not in values:
            values[v] = kernel.load(argument[v], index, lanes, shape)
        return values[v]

    for member in chain:
        values[member.results[0]] = ELEMENTWISE_COMPUTE[type(member)](
            kernel, member, [value(o) for o in member.operands]
        )
    return value


def _fused_rows(kernel: Kernel, op: graph.FusedOp, anchor: Operation) -> None:
    """A row anchor's group (softmax, log_softmax, layer_norm over the
    innermost axis): the ops before it run on each element the anchor's
    passes load, the ops after it on each element its last pass stores."""
    block = op.body.block
    ops = [m for m in block.ops if not isinstance(m, graph.YieldOp)]
    before, after = ops[: ops.index(anchor)], ops[ops.index(anchor) + 1 :]
    yielded = list(block.last_op.values)
    argument = dict(zip(block.args, kernel.inputs, strict=True))
    shape = list(anchor.results[0].type.get_shape())
    b = kernel.b

    def evaluate(chain: list[Operation], known: dict, row: SSAValue, j, lanes: int):
        index = [*unflatten(b, row, shape[:-1]), j]
        return _chain_values(kernel, argument, chain, dict(known), index, lanes, shape), index

    def load(row: SSAValue, j, lanes: int) -> SSAValue:
        return evaluate(before, {}, row, j, lanes)[0](anchor.operands[0])

    def store(row: SSAValue, j, result: SSAValue) -> None:
        lanes = tir.lanes_of(result.type)
        value, index = evaluate(after, {anchor.results[0]: result}, row, j, lanes)
        for v, out in zip(yielded, kernel.outputs, strict=True):
            kernel.store(out, index, value(v))

    def prefetch(row: SSAValue, j) -> None:
        """The row's elements in every input and output of the anchor's
        shape (broadcast operands are small and stay cached)."""
        index = [*unflatten(b, row, shape[:-1]), j]
        for operand, write in [
            *((i, False) for i in kernel.inputs),
            *((o, True) for o in kernel.outputs),
        ]:
            if operand.shape == shape and not operand.blocked:
                b.make_prefetch(operand.value, index, write=write)

    parked = next((out for out in kernel.outputs if out.type == anchor.results[0].type), None)
    lanes = kernel.lanes if is_vectorizable(*kernel.outputs, *kernel.inputs) else 1
    parameters = [argument[v] for v in anchor.operands[1:]]
    costly = any(
        isinstance(op, graph.FloatUnaryOp | graph.DivOp | graph.ModOp | graph.PowOp)
        for op in before
    )
    fused_row_anchor(kernel, anchor, lanes, load, store, parked, parameters, prefetch, costly)


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
    graph.RmsNormOp: rms_norm,
    graph.InstanceNormOp: instance_norm,
    graph.BatchNormOp: batch_norm,
    graph.AttentionOp: attention,
    graph.TransposeOp: transpose,
    graph.SliceOp: gather(_slice_index, _slice_vectorizable),
    graph.ReshapeOp: reshape,
    graph.GatherOp: take,
    graph.LookupOp: lookup,
    graph.GatherElementsOp: gather_elements,
    graph.GatherNDOp: gather_nd,
    graph.ScatterElementsOp: scatter_elements,
    graph.ScatterNDOp: scatter_nd,
    graph.PadOp: pad,
    graph.ConcatOp: concat,
    graph.Conv2dOp: conv2d,
    graph.BlockedConv2dOp: blocked_conv2d,
    graph.ToBlockedOp: reorder,
    graph.FromBlockedOp: reorder,
    graph.MaxPool2dOp: pool,
    graph.AvgPool2dOp: pool,
    graph.FusedOp: fused,
    **SCAN_TEMPLATES,
}


def empty_contraction(op: Operation) -> bool:
    """A matmul over K = 0: each output element is an empty sum, 0."""
    if not isinstance(op, graph.MatmulOp):
        return False
    transposed = op.a_transposed
    return op.operands[0].type.get_shape()[-2 if transposed else -1] == 0


def fill_zeros(kernel: Kernel, out: Operand) -> None:
    element = compute_type(out.element)

    def body(indices: list[SSAValue], lanes: int) -> None:
        type_ = VectorType(element, [lanes]) if lanes > 1 else element
        kernel.store(out, indices, kernel.b.const(0, type_))

    kernel.for_each(out.shape, body, is_vectorizable(out))


ZEROS: Template = lambda kernel, op: fill_zeros(kernel, kernel.out)  # noqa: E731
"""Fills the output with zeros (a matmul over K = 0)."""

COPY: Template = elementwise(_identity)
"""Copies a tensor into an output (a graph output that is an input, or returned twice)."""

BLOCKED_FORMAT_OPS = (*ELEMENTWISE_COMPUTE, graph.FusedOp)
"""The ops whose templates handle blocked memory formats (through Kernel.load/store)."""
