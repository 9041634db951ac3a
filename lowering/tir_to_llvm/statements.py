"""Statements: structured control flow (`tir.stmts`, `tir.if`, `tir.for`,
`tir.return`) becomes blocks and branches; vars become allocas in the entry
block (which LLVM promotes to registers)."""

from __future__ import annotations

from xdsl.dialects import llvm

from graphcompiler.dialects import tir
from graphcompiler.lowering.tir_to_llvm.function import FunctionLowering, _terminated
from graphcompiler.lowering.tir_to_llvm.types import (
    _fail,
    _icmp,
    _is_unsigned,
    convert_type,
)


def _lower_define_var(fl: FunctionLowering, op: tir.DefineVarOp) -> None:
    size = tir.byte_size(op.result.type.element_type)
    slot = fl.alloca(
        convert_type(op.result.type.element_type),
        alignment=size & -size,  # a power of two: a vector of 3 floats aligns on 4 bytes
    )
    fl.values[op.result] = slot
    if op.init is not None:
        fl.emit(llvm.StoreOp(fl.value(op.init), slot))


def _lower_assign(fl: FunctionLowering, op: tir.AssignOp) -> None:
    fl.emit(llvm.StoreOp(fl.value(op.value), fl.value(op.var)))


def _lower_read(fl: FunctionLowering, op: tir.ReadOp) -> None:
    fl.values[op.result] = fl.emit_value(
        llvm.LoadOp(fl.value(op.var), convert_type(op.result.type))
    )


def _lower_evaluate(fl: FunctionLowering, op: tir.EvaluateOp) -> None:
    """The expression was emitted where it stands; nothing is left to do."""


def _lower_stmts(fl: FunctionLowering, op: tir.StmtsOp) -> None:
    fl.lower_region(op.body.block)


def _lower_if(fl: FunctionLowering, op: tir.IfOp) -> None:
    then_block, merge = fl.new_block(), fl.new_block()
    else_block = fl.new_block() if op.else_region.blocks else merge
    fl.emit(llvm.CondBrOp(fl.value(op.cond), then_block, [], else_block, []))
    for block, region in ((then_block, op.then_region), (else_block, op.else_region)):
        if block is merge:
            continue
        fl.current = block
        fl.lower_region(region.block)
        if not _terminated(fl.current):
            fl.emit(llvm.BrOp(merge))
    fl.current = merge


def _lower_for(fl: FunctionLowering, op: tir.ForOp) -> None:
    if op.parallel:
        raise _fail(op, "is a parallel loop: run tir-outline-parallel before convert-tir-to-llvm")
    var_type = convert_type(op.loop_var.type)
    header, body, exit_block = fl.new_block([var_type]), fl.new_block(), fl.new_block()
    start, end, step = (fl.value(v) for v in (op.start, op.end, op.step))
    fl.emit(llvm.BrOp(header, start))
    fl.current = header
    induction = header.args[0]
    predicate = "ult" if _is_unsigned(op.loop_var.type) else "slt"
    keep_going = fl.emit_value(llvm.ICmpOp(induction, end, _icmp(predicate)))
    fl.emit(llvm.CondBrOp(keep_going, body, [], exit_block, []))
    fl.current = body
    fl.values[op.loop_var] = induction
    fl.lower_region(op.body.block)
    if not _terminated(fl.current):
        following = fl.emit_value(llvm.AddOp(induction, step))
        fl.emit(llvm.BrOp(header, following))
    fl.current = exit_block


def _lower_return(fl: FunctionLowering, op: tir.ReturnOp) -> None:
    for scope in reversed(fl.heap_scopes):
        fl.free_scope(scope)
    fl.emit(llvm.ReturnOp(fl.value(op.value) if op.value is not None else None))
    fl.current = None


PATTERNS = {
    tir.DefineVarOp: _lower_define_var,
    tir.AssignOp: _lower_assign,
    tir.ReadOp: _lower_read,
    tir.EvaluateOp: _lower_evaluate,
    tir.StmtsOp: _lower_stmts,
    tir.IfOp: _lower_if,
    tir.ForOp: _lower_for,
    tir.ReturnOp: _lower_return,
}
