"""`graph.matmul`'s template: which implementation computes an op, the
packed f32 GEMM (matmul.py), a GEMM on pairs of 16-bit values for a
widening integer matmul, on u8 x s8 byte quads on a target with VNNI or
AMX-INT8, and a widening bf16 one on a target with AVX512-BF16 or
AMX-BF16 (matmul_pairs.py), or a dot product per element for other
integers."""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, IntegerType, Signedness

from graphcompiler.dialects import graph
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, compute_type
from graphcompiler.lowering.graph_to_tir.matmul import (
    Epilogue,
    PackedMatmul,
    _broadcast_batch,
    f32,
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
        Bf16PairsMatmul(kernel, a, b_, out, transposes, epilogue).emit()
    elif all(compute_type(o.element) == f32 for o in (a, b_, out)):
        PackedMatmul(kernel, a, b_, out, transposes, epilogue).emit()
    elif op.widens and (a.element, b_.element) == (u8, s8) and byte_quads(kernel.target):
        U8S8QuadsMatmul(kernel, a, b_, out, transposes, epilogue).emit()
    elif op.widens:
        Int16PairsMatmul(kernel, a, b_, out, transposes, epilogue).emit()
    else:
        _matmul_loops(kernel, a, b_, out, op)
        if epilogue:
            epilogue([0] * len(out.shape), out.shape)


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
