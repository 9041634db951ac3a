"""Data movement that reads computed positions: graph.gather, graph.pad and
graph.lookup.

Both walk the output with `Kernel.for_each` and compute, per element, the
source position it reads; a position outside the source (a gather index
out of range, the constant border of a pad) takes an if/else, so no load
ever leaves the buffer. The innermost dimension is vectorized when it moves
with the source's innermost one (gather along an outer axis, pad of the
outer dimensions only): then the branch condition is one scalar per vector.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    Signedness,
    SymbolRefAttr,
    TensorType,
    VectorType,
)
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.ir.element_types import bit_width, dense_values
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    global_constant,
    is_vectorizable,
)
from graphcompiler.passes.tir.expand_math import declare_llvm_intrinsic


def _all(b: TirBuilder, conditions: list[SSAValue]) -> SSAValue | None:
    result = None
    for condition in conditions:
        result = condition if result is None else b.binary(tir.AndOp, result, condition)
    return result


def _copy_or_fill(
    kernel: Kernel,
    inside: SSAValue | None,
    source: Operand,
    source_index: list,
    out_index: list,
    lanes: int,
    fill: float | int,
) -> None:
    """out[out_index] = inside ? source[source_index] : fill."""
    b, out = kernel.b, kernel.out

    def copy() -> None:
        kernel.store(out, out_index, kernel.load(source, source_index, lanes))

    if inside is None:
        copy()
        return
    element = compute_type(out.element)
    branch = b.make_if(inside, with_else=True)
    with b.at_end_of(branch.then_region.block):
        copy()
    with b.at_end_of(branch.else_region.block):
        kernel.store(
            out, out_index, b.const(fill, VectorType(element, [lanes]) if lanes > 1 else element)
        )


def take(kernel: Kernel, op: graph.GatherOp) -> None:
    """out[o, i, p] = input[o, wrap(indices[i]), p], 0 for an index outside [-n, n)."""
    source, indices = kernel.inputs
    rank = len(source.shape)
    axis = op.normalized_axis(rank)
    n, count = source.shape[axis], len(indices.shape)

    def body(index: list[SSAValue], lanes: int) -> None:
        b = kernel.b
        picked = b.cast(kernel.load(indices, index[axis : axis + count]), IndexType())
        wrapped = b.select(b.binary(tir.LtOp, picked, 0), b.add(picked, n), picked)
        inside = b.binary(tir.AndOp, b.binary(tir.GeOp, wrapped, 0), b.binary(tir.LtOp, wrapped, n))
        source_index = [*index[:axis], wrapped, *index[axis + count :]]
        _copy_or_fill(kernel, inside, source, source_index, index, lanes, 0)

    vectorize = axis < rank - 1 and is_vectorizable(kernel.out, source)
    kernel.for_each(kernel.out.shape, body, vectorize)


TABLE_LANES = 64
"""Bytes one `vpermi2b` looks up: it picks from 128 table bytes (two
registers), so a 256-entry table takes two and a select on the top bit."""
WORDS = TABLE_LANES // 4
"""i32 words of a table quarter (globals hold i32)."""
_PERMUTE = "llvm.x86.avx512.vpermi2var.qi.512"
_BYTES = VectorType(IntegerType(8), [TABLE_LANES])


def lookup(kernel: Kernel, op: graph.LookupOp) -> None:
    """out[i] = table[x[i]] (x[i] + 128 for i8). Bytes to bytes on a target
    with AVX512-VBMI: 64 a step, two `vpermi2b` over the table's four
    64-byte quarters and a select on the top bit (the quantized chain it
    replaces divides, rounds and evaluates erf or exp per element).
    Elsewhere a scalar read of a global of 256 entries per element (i32 or
    f32, what globals hold, converted): about a cycle a byte."""
    x, out = kernel.inputs[0], kernel.out
    values = dense_values(op.table).reshape(graph.TABLE_ENTRIES)
    floating = tir.is_float(out.element)
    table = global_constant(kernel.b, "table", values.astype(np.float32 if floating else np.int32))
    offset = 0 if x.element.signedness.data == Signedness.UNSIGNED else 128

    def entry(x: Operand, out: Operand, index: list[SSAValue]) -> None:
        b = kernel.b
        at = b.cast(kernel.load(x, index), IndexType())
        value = b.make_load(table, [b.add(at, offset) if offset else at])
        kernel.store(out, index, b.cast(value, compute_type(out.element)))

    if _permutes_bytes(kernel, x, out):
        _permuted_lookup(kernel, values, offset, entry)
    else:
        kernel.for_each(out.shape, lambda index, lanes: entry(x, out, index), vectorize=False)


def _permuted_lookup(kernel: Kernel, values: np.ndarray, offset: int, entry) -> None:
    """The buffers walked flat, 64 bytes a step; `entry(x, out, index)`
    reads the scalar tail's bytes."""
    b, x, out = kernel.b, kernel.inputs[0], kernel.out
    shape = x.value.type.get_shape()
    count = math.prod(shape)
    flat_x, flat_out = (
        Operand(b.tensor_ptr(o.value, [0] * len(shape), [count]), TensorType(o.element, [count]))
        for o in (x, out)
    )
    words = values.astype(np.int64).astype(np.uint8).view(np.int32)  # four entries a word
    quarters_global = global_constant(b, "table_bytes", words)
    permute = declare_llvm_intrinsic(b.module, _PERMUTE, [_BYTES] * 3, _BYTES)

    def permuted(low: SSAValue, at: SSAValue, high: SSAValue) -> SSAValue:
        call = tir.CallOp.create(
            operands=[low, at, high],
            properties={"callee": SymbolRefAttr(permute.sym_name)},
            result_types=[_BYTES],
        )
        return b.insert(call).result

    def body(index: list[SSAValue], lanes: int) -> None:
        if lanes == 1:
            entry(flat_x, flat_out, index)
            return
        at = b.unary(tir.ReinterpretOp, b.make_load(flat_x.value, index, lanes), _BYTES)
        if offset:
            at = b.add(at, b.const(-128, _BYTES))
        quarters = [
            b.unary(tir.ReinterpretOp, b.make_load(quarters_global, [q * WORDS], WORDS), _BYTES)
            for q in range(4)
        ]
        low, high = permuted(quarters[0], at, quarters[1]), permuted(quarters[2], at, quarters[3])
        entries = b.select(b.binary(tir.LtOp, at, b.const(0, _BYTES)), high, low)
        stored = b.unary(tir.ReinterpretOp, entries, VectorType(out.element, [lanes]))
        b.make_store(stored, flat_out.value, index, lanes)

    kernel.for_each_flat(count, body, lanes=TABLE_LANES)


def _permutes_bytes(kernel: Kernel, x: Operand, out: Operand) -> bool:
    """Bytes to bytes in one layout (plain or the same blocks, whose padding
    lanes no op reads), on a target with `vpermi2b`."""
    return (
        "avx512vbmi" in kernel.target.extensions
        and bit_width(x.element) == bit_width(out.element) == 8
        and x.value.type.get_shape() == out.value.type.get_shape()
    )


def _source_position(
    b: TirBuilder, i: SSAValue, n: int, before: int, after: int, mode: str
) -> tuple[SSAValue | int, list[SSAValue]]:
    """The source index an output index `i` of a padded dim reads, and the
    conditions under which it is inside (constant mode). Negative amounts
    slice first: the padding repeats the m elements left from `start`."""
    start = max(-before, 0)
    m = n - start - max(-after, 0)
    if before <= 0 and after <= 0:  # only cropped: a shift
        return (b.add(i, start) if start else i), []
    s = b.sub(i, before) if before > 0 else i  # the position among the m elements
    if mode == "constant":
        conditions = [b.binary(tir.GeOp, s, 0)] if before > 0 else []
        return _shifted(b, s, start), [
            *conditions,
            *([b.binary(tir.LtOp, s, m)] if after > 0 else []),
        ]
    if mode == "edge":
        return _shifted(b, b.binary(tir.MinOp, b.binary(tir.MaxOp, s, 0), m - 1), start), []
    if mode == "wrap":
        return _shifted(b, b.mod(b.add(b.mod(s, m), m), m), start), []
    if m == 1:  # reflect: a single element mirrors onto itself
        return start, []
    mirrored = b.select(b.binary(tir.LtOp, s, 0), b.sub(0, s), s)
    inside = b.select(b.binary(tir.GtOp, mirrored, m - 1), b.sub(2 * (m - 1), mirrored), mirrored)
    return _shifted(b, inside, start), []


def _shifted(b: TirBuilder, position: SSAValue, start: int) -> SSAValue:
    return b.add(position, start) if start else position


def pad(kernel: Kernel, op: graph.PadOp) -> None:
    """out[i] = input[source(i)] (numpy.pad's modes), `value` outside in constant mode."""
    source = kernel.inputs[0]
    amounts = op.amounts(len(source.shape))
    mode = op.pad_mode
    value = op.fill_value
    fill = value if tir.is_float(source.element) else int(value)

    def body(index: list[SSAValue], lanes: int) -> None:
        b = kernel.b
        source_index, conditions = [], []
        for i, n, (before, after) in zip(index, source.shape, amounts, strict=True):
            position, inside = _source_position(b, i, n, before, after, mode)
            source_index.append(position)
            conditions.extend(inside)
        _copy_or_fill(kernel, _all(b, conditions), source, source_index, index, lanes, fill)

    vectorize = bool(amounts) and amounts[-1] == (0, 0) and is_vectorizable(kernel.out, source)
    kernel.for_each(kernel.out.shape, body, vectorize)
