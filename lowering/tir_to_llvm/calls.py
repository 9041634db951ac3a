"""Calls: direct and indirect calls, function addresses, calls of LLVM
intrinsics (body-less `tir.func @llvm.*`, which tir-expand-math declares),
and the parallel call: its captures are packed into a stack struct that a
generated wrapper unpacks for the outlined body."""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IndexType, IntegerType, NoneType, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.traits import SymbolTable

from graphcompiler.dialects import tir
from graphcompiler.lowering.tir_to_llvm.function import FunctionLowering, ModuleContext
from graphcompiler.lowering.tir_to_llvm.types import _fail, _llvm_byte_size, _ptr, convert_type
from graphcompiler.passes.tir.expand_math import is_llvm_intrinsic
from graphcompiler.runtime.symbols import PARALLEL_CALL

CAPTURE_SLOT_BYTES = 64
"""Each capture of a parallel body gets a 64-byte slot (room for a 512-bit
vector), addressed by a GEP over the capture's own type."""


def _lower_call(fl: FunctionLowering, op: tir.CallOp) -> None:
    callee = op.callee.root_reference.data
    if callee == PARALLEL_CALL:
        _lower_parallel_call(fl, op)
        return
    result = None if isinstance(op.result.type, NoneType) else convert_type(op.result.type)
    args = [fl.value(a) for a in op.args]
    if is_llvm_intrinsic(callee):
        call = llvm.CallIntrinsicOp(callee, args, [] if result is None else [result])
        fl.emit(call)
        if result is not None:
            fl.values[op.result] = call.results[0]
        return
    call = fl.emit(llvm.CallOp(callee, *args, return_type=result))
    if result is not None:
        fl.values[op.result] = call.returned


def _lower_call_indirect(fl: FunctionLowering, op: tir.CallIndirectOp) -> None:
    prototype = SymbolTable.lookup_symbol(op, op.prototype)
    inputs = [convert_type(t) for t in prototype.function_type.inputs.data]
    result = None if isinstance(op.result.type, NoneType) else convert_type(op.result.type)
    call = llvm.CallOp(
        None,
        fl.value(op.target),
        *[fl.value(a) for a in op.args],
        return_type=result,
        var_callee_type=llvm.LLVMFunctionType(inputs, result),
    )
    fl.emit(call)
    if result is not None:
        fl.values[op.result] = call.returned


def _lower_func_addr(fl: FunctionLowering, op: tir.FuncAddrOp) -> None:
    fl.values[op.result] = fl.emit(llvm.AddressOfOp(op.callee, _ptr)).result


def _capture_slot(packed: SSAValue, position: int, type_: Attribute) -> llvm.GEPOp:
    index = position * CAPTURE_SLOT_BYTES // _llvm_byte_size(type_)
    return llvm.GEPOp(packed, [index], type_)


def _lower_parallel_call(fl: FunctionLowering, op: tir.CallOp) -> None:
    """sc_parallel_call_cpu(body, start, end, step, captures...): the captures
    go into stack slots; a generated wrapper `body(i, slots*)` unpacks them."""
    body_address, start, end, step, *captures = op.args
    if not isinstance(body_address.owner, tir.FuncAddrOp):
        raise _fail(op, "needs the body as a tir.func_addr of a function of this module")
    body_name = body_address.owner.callee.root_reference.data
    capture_types = [convert_type(c.type) for c in captures]
    wrapper = parallel_wrapper(fl.module, body_name, capture_types)
    packed = fl.alloca(IntegerType(8), CAPTURE_SLOT_BYTES * max(1, len(captures)))
    for position, (capture, type_) in enumerate(zip(captures, capture_types, strict=True)):
        slot = fl.emit_value(_capture_slot(packed, position, type_))
        fl.emit(llvm.StoreOp(fl.value(capture), slot))
    wrapper_address = fl.emit(llvm.AddressOfOp(wrapper, _ptr)).result
    bounds = [fl.convert_value(fl.value(v), v.type, IndexType()) for v in (start, end, step)]
    packed_bytes = fl.constant(CAPTURE_SLOT_BYTES * len(captures), i64)
    fl.call(PARALLEL_CALL, [wrapper_address, *bounds, packed, packed_bytes])


def parallel_wrapper(module: ModuleContext, body: str, capture_types: list[Attribute]) -> str:
    """`body__parallel(i64 i, ptr captures)`, calling `body(i, captures...)`,
    made once per body among `module`'s extra functions."""
    if body in module.wrappers:
        return module.wrappers[body]
    name = f"{body}__parallel"
    block = Block(arg_types=[i64, _ptr])
    index, packed = block.args
    arguments = [index]
    for position, type_ in enumerate(capture_types):
        slot = _capture_slot(packed, position, type_)
        load = llvm.LoadOp(slot.results[0], type_)
        block.add_ops([slot, load])
        arguments.append(load.results[0])
    block.add_ops([llvm.CallOp(body, *arguments), llvm.ReturnOp()])
    module.extra.append(
        llvm.FuncOp(
            name,
            llvm.LLVMFunctionType([i64, _ptr]),
            llvm.LinkageAttr("internal"),
            body=Region(block),
        )
    )
    module.wrappers[body] = name
    return name


PATTERNS = {
    tir.CallOp: _lower_call,
    tir.CallIndirectOp: _lower_call_indirect,
    tir.FuncAddrOp: _lower_func_addr,
}
