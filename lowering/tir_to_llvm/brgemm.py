"""brgemm, list_brgemm and brgemm_tile: calls of kernels generated for their
static parameters (declared here with those parameters, defined by the JIT):
a register-tile microkernel, or a whole brgemm routine built of them
(runtime/brgemm_routines.py), tiled for the target."""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects import llvm
from xdsl.dialects.builtin import Float32Type, IndexType, i1, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import tir
from graphcompiler.lowering.llvm.microkernels import declaration
from graphcompiler.lowering.tir_to_llvm.function import FunctionLowering
from graphcompiler.lowering.tir_to_llvm.types import _fail
from graphcompiler.runtime.amx_tiles import fits_tiles, has_amx
from graphcompiler.runtime.brgemm_routines import BrgemmRoutine
from graphcompiler.runtime.microkernels import GeneratedKernel, Microkernel, has_dot_instruction
from graphcompiler.target.description import get_target
from graphcompiler.target.schedules import MatmulSchedule


def _routine(op: tir.BrgemmBase, element: Attribute, listed: bool) -> BrgemmRoutine:
    """The generated routine for `op`'s static sizes, tiled for the target."""
    if not isinstance(element, Float32Type):
        raise _fail(op, f"brgemm computes f32 only, not {element}")
    target = get_target()
    sizes = {name: getattr(op, name).value.data for name in ("m", "n", "k", "lda", "ldb", "ldc")}
    strides = (0, 0) if listed else (op.stride_a.value.data, op.stride_b.value.data)
    rows, vectors = MatmulSchedule.register_tile(target, sizes["n"], sizes["m"])
    return BrgemmRoutine(**sizes, stride_a=strides[0], stride_b=strides[1],
                         lanes=target.f32_lanes, rows=rows, vectors=vectors, listed=listed)  # fmt: skip


def _call_routine(
    fl: FunctionLowering, op: tir.BrgemmBase, routine: BrgemmRoutine, a: SSAValue, b: SSAValue
) -> None:
    fl.module.require_kernel(routine)
    batch = fl.convert_value(fl.value(op.batch), op.batch.type, IndexType())
    accumulate = fl.constant(bool(op.accumulate.value.data), i1)
    fl.emit(llvm.CallOp(routine.name, a, b, fl.value(op.c), batch, accumulate))


def _lower_brgemm(fl: FunctionLowering, op: tir.BrgemmOp) -> None:
    routine = _routine(op, op.a.type.element_type, listed=False)
    _call_routine(fl, op, routine, fl.value(op.a), fl.value(op.b))


def _lower_list_brgemm(fl: FunctionLowering, op: tir.ListBrgemmOp) -> None:
    routine = _routine(op, op.a_type, listed=True)
    _call_routine(fl, op, routine, fl.value(op.a_list), fl.value(op.b_list))


def _lower_brgemm_tile(fl: FunctionLowering, op: tir.BrgemmTileOp) -> None:
    sizes = (op.size(name) for name in ("m", "n", "lanes", "a_row", "a_k", "ldb", "ldc"))
    prefetch = op.prefetch_b is not None
    pairs = ""
    if op.quads:
        pairs = "u8s8"
    elif op.a.type.element_type == i32:  # pairs of 16-bit values: i16 for an i32 C, else bf16
        pairs = "i16" if op.c.type.element_type == i32 else "bf16"
    target = get_target()
    dot = has_dot_instruction(target, pairs, op.size("lanes"))
    c_vector = op.size("ldc_vector") if op.ldc_vector is not None else 0
    wrap, wrap_step = op.a_row_runs
    kernel = Microkernel(*sizes, taps=op.tap_levels(), c_vector=c_vector, a_wrap=wrap,
                         a_wrap_step=wrap_step, prefetch=prefetch,
                         prefetch_every=op.prefetch_rows_step if prefetch else 1, pairs=pairs,
                         dot_instruction=dot)  # fmt: skip
    if has_amx(target, pairs) and fits_tiles(kernel, op.size("k")):
        # the tiles' loads stream B well enough: no prefetch operand
        kernel, prefetch = replace(kernel, amx=True, prefetch=False, prefetch_every=1), False
    fl.module.require_kernel(kernel)
    k = fl.constant(op.size("k"), i64)
    if op.accumulate_if is not None:
        accumulate = fl.value(op.accumulate_if)
    else:
        accumulate = fl.constant(bool(op.accumulate.value.data), i1)
    args = [fl.value(op.a), fl.value(op.b), fl.value(op.c), k, accumulate]
    if prefetch:
        args.append(fl.value(op.prefetch_b))
    fl.emit(llvm.CallOp(kernel.name, *args))


class KernelDeclarations:
    """The part of `ModuleLowering` that declares generated kernels."""

    extra: list[Operation]
    declared: set[str]

    def require_kernel(self, kernel: GeneratedKernel) -> None:
        """Declare generated `kernel`, with its parameters; the JIT defines it."""
        if kernel.name not in self.declared:
            self.declared.add(kernel.name)
            self.extra.append(declaration(kernel))


PATTERNS = {
    tir.BrgemmOp: _lower_brgemm,
    tir.ListBrgemmOp: _lower_list_brgemm,
    tir.BrgemmTileOp: _lower_brgemm_tile,
}
