"""`graph.matmul`'s template: which implementation computes an op, the
packed f32 GEMM (matmul.py), a GEMM on pairs of 16-bit values for a
widening integer matmul, on u8 x s8 byte quads on a target with VNNI or
AMX-INT8, and a widening bf16 one on a target with AVX512-BF16 or
AMX-BF16 (matmul_pairs.py), or a dot product per element for other
integers."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import BFloat16Type, IntegerType, Signedness

from graphcompiler.dialects import graph
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, compute_type, view
from graphcompiler.lowering.graph_to_tir.matmul import (
    Epilogue,
    PackedMatmul,
    _broadcast_batch,
    f32,
    unflatten,
)
from graphcompiler.lowering.graph_to_tir.matmul_pairs import (
    Bf16PairsMatmul,
    Int16PairsMatmul,
    U8S8QuadsMatmul,
)
from graphcompiler.runtime.amx_tiles import has_amx
from graphcompiler.runtime.microkernels import byte_quads
from graphcompiler.target.description import Target

bf16 = BFloat16Type()
u8, s8 = IntegerType(8, Signedness.UNSIGNED), IntegerType(8)


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
    transposes = (op.a_transposed, op.b_transposed)
    if op.widens and a.element == bf16 and bf16_pairs(kernel.target):
        packed = Bf16PairsMatmul
    elif all(compute_type(o.element) == f32 for o in (a, b_, out)):
        packed = PackedMatmul
    elif op.widens and (a.element, b_.element) == (u8, s8) and byte_quads(kernel.target):
        packed = U8S8QuadsMatmul
    elif op.widens:
        packed = Int16PairsMatmul
    else:
        packed = None
    if packed is not None:
        rows = rows_of_batch(kernel, a, b_, out, transposes[0], epilogue)
        if rows is None:
            packed(kernel, a, b_, out, transposes, epilogue).emit()
        else:
            a, b_, stacked, epilogue = rows
            packed(kernel, a, b_, stacked, transposes, epilogue, row_multiple=out.shape[-2]).emit()
    else:
        _matmul_loops(kernel, a, b_, out, op)
        if epilogue:
            epilogue([0] * len(out.shape), out.shape)


def rows_of_batch(
    kernel: Kernel,
    a: Operand,
    b_: Operand,
    out: Operand,
    a_transposed: bool,
    epilogue: Epilogue | None,
) -> tuple[Operand, Operand, Operand, Epilogue | None] | None:
    """A batch of A matrices times one B (a linear layer on a [1, 7, 7,
    768] feature map: ConvNeXt's MLPs) as one GEMM of their stacked rows,
    [batch * m, k] x [k, n] (B without a batch, or one of 1s): (A, B,
    out, epilogue) viewed so, or None where that does not apply (B
    batched, A broadcast or transposed, a batch of one, blocked operands).
    As a batch of 7 GEMMs of 7 rows, each reloaded all of B for a few rows
    and ran at 57 GFLOP/s against 149 as one of 49 rows. The epilogue still
    sees whole matrices of the batch: the blocks' rows are cut at multiples
    of m (row_multiple)."""
    *batch, m, n = out.shape
    if (
        math.prod(batch) <= 1
        or math.prod(b_.shape[:-2]) != 1
        or a_transposed
        or list(a.shape[:-2]) != batch
        or any(o.blocked for o in (a, out))
    ):
        return None
    rows = math.prod(batch) * m
    stacked_a = view(kernel, a, [rows, a.shape[-1]])
    stacked_out = view(kernel, out, [rows, n])
    if len(b_.shape) > 2:  # [1, ..., k, n]
        b_ = view(kernel, b_, b_.shape[-2:])
    if epilogue is None:
        return stacked_a, b_, stacked_out, None
    b = kernel.b

    def on_matrices(origin: list, sizes: list[int]) -> None:
        """The epilogue on each whole matrix of the block's rows."""
        row0, col0 = origin
        with b.make_for(0, sizes[0] // m, 1) as offset:
            matrix = b.add(b.div(row0, m), offset)
            index = unflatten(kernel, matrix, batch)
            epilogue([*index, 0, col0], [*[1] * len(batch), m, sizes[1]])

    return stacked_a, b_, stacked_out, on_matrices


def bf16_pairs(target: Target) -> bool:
    """Whether bf16 matmuls run on bf16 pairs (`vdpbf16ps`, or AMX tiles);
    elsewhere the f32 kernels convert their operands as they pack them."""
    return "avx512bf16" in target.extensions or has_amx(target, "bf16")


def _matmul_loops(
    kernel: Kernel, a: Operand, b_: Operand, out: Operand, op: graph.MatmulOp
) -> None:
    """Integer matmuls: a dot product per output element (widened to the
    result's type first where the op widens)."""
    builder = kernel.b
    transpose_a, transpose_b = op.a_transposed, op.b_transposed
    *batch, m, n = out.shape
    k = a.shape[-2] if transpose_a else a.shape[-1]
    with kernel.loop_nest(out.shape) as index:
        *batch_index, row, col = index
        total = kernel.var(compute_type(out.element), 0)
        with builder.make_for(0, k, 1) as depth:
            a_index = [
                *_broadcast_batch(batch_index, batch, a.shape[:-2]),
                *((depth, row) if transpose_a else (row, depth)),
            ]
            b_index = [
                *_broadcast_batch(batch_index, batch, b_.shape[:-2]),
                *((col, depth) if transpose_b else (depth, col)),
            ]
            accumulated = compute_type(out.element)
            lhs, rhs = (kernel.load(a, a_index), kernel.load(b_, b_index))
            if op.widens:
                lhs, rhs = builder.cast(lhs, accumulated), builder.cast(rhs, accumulated)
            product = builder.mul(lhs, rhs)
            builder.make_assign(total, builder.add(builder.read(total), product))
        kernel.store(out, index, builder.read(total))
