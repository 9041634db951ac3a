"""tir-profile-kernels: time every kernel call of the entry functions.

    %0 = tir.call @conv2d__3(%out, %x, %w) ...
    tir.evaluate %0 : none

becomes

    %start = tir.call @sc_clock_ns() : () -> i64
    %0 = tir.call @conv2d__3(%out, %x, %w) ...
    tir.evaluate %0 : none
    %end = tir.call @sc_clock_ns() : () -> i64
    (gc.profile.ns.conv2d__3 += %end - %start, gc.profile.calls.conv2d__3 += 1)

with two i64 globals per kernel that `compile(profile=True)` reads back
(`compiled.profile()`). Entry functions are those no other function
calls; their calls of functions with a body are timed (runtime routines,
declarations, are not). Run it before tir-parallel-regions, or leave that
pass out (the default when profiling): in a region a kernel's loops are
queued and run at the region's end, so its call would time nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from graphcompiler.dialects import tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.runtime import symbols
from graphcompiler.runtime.kernel_profile import CALLS, CLOCK, NANOSECONDS

_i64 = IntegerType(64)


@dataclass(frozen=True)
class TirProfileKernelsPass(ModulePass):
    """Count the calls and the nanoseconds of each kernel the entry functions call."""

    name = "tir-profile-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = {f.sym_name.data: f for f in op.body.block.ops if isinstance(f, tir.FuncOp)}
        called = {
            call.callee.root_reference.data for call in op.walk() if isinstance(call, tir.CallOp)
        }
        clock = symbols.declared_in(op, CLOCK)
        counters: dict[str, tuple[tir.GlobalOp, tir.GlobalOp]] = {}
        for name, function in functions.items():
            if name in called or not function.body.blocks:
                continue
            for evaluate in [e for e in function.body.walk() if isinstance(e, tir.EvaluateOp)]:
                call = evaluate.value.owner
                if not isinstance(call, tir.CallOp):
                    continue
                kernel = functions.get(call.callee.root_reference.data)
                if kernel is None or not kernel.body.blocks:
                    continue
                kernel_name = kernel.sym_name.data
                if kernel_name not in counters:
                    counters[kernel_name] = _counters(op, kernel_name)
                _time(evaluate, clock, *counters[kernel_name])


def _counters(module: ModuleOp, kernel: str) -> tuple[tir.GlobalOp, tir.GlobalOp]:
    b = TirBuilder(module)
    with b.at_end_of(module.body.block):
        return b.make_global(NANOSECONDS + kernel, _i64), b.make_global(CALLS + kernel, _i64)


def _time(
    evaluate: tir.EvaluateOp, clock: tir.FuncOp, nanoseconds: tir.GlobalOp, calls: tir.GlobalOp
) -> None:
    """Read the clock just before the call and after its evaluate; add the
    difference and one call to the globals."""
    b = TirBuilder()
    before, after = Block(), Block()
    with b.at_end_of(before):
        start = b.make_call(clock, [])
    with b.at_end_of(after):
        elapsed = b.sub(b.make_call(clock, []), start)
        for counter, amount in ((nanoseconds, elapsed), (calls, b.const(1, _i64))):
            handle = b.global_ref(counter)
            b.make_assign(handle, b.add(b.read(handle), amount))
    block = evaluate.parent_block()
    call = evaluate.value.owner
    for op in list(before.ops):
        op.detach()
        block.insert_op_before(op, call)
    anchor = evaluate
    for op in list(after.ops):
        op.detach()
        block.insert_op_after(op, anchor)
        anchor = op
