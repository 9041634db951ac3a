"""Memory: local tensors (allocas when small, runtime allocations freed when
their block ends when large), loads, stores and prefetches of row-major
tensor elements, addresses, and the module's globals."""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Attribute

from graphcompiler.dialects import tir
from graphcompiler.lowering.tir_to_llvm.function import FunctionLowering
from graphcompiler.lowering.tir_to_llvm.types import (
    _llvm_scalar,
    _llvm_values,
    _ptr,
    convert_type,
    is_stored_as_bits,
)

HEAP_THRESHOLD_BYTES = 16 * 1024
"""Local tensors above this size are heap-allocated, not put on the stack."""


def _lower_define_tensor(fl: FunctionLowering, op: tir.DefineTensorOp) -> None:
    tensor_type = op.result.type
    element = convert_type(tensor_type.element_type)
    count = tensor_type.element_count()
    size = count * tir.byte_size(tensor_type.element_type)
    if size <= HEAP_THRESHOLD_BYTES:
        fl.values[op.result] = fl.alloca(element, count)
        return
    memory = fl.call("sc_aligned_alloc", [fl.constant(size, i64)], _ptr)
    fl.heap_scopes[-1].append(memory)
    fl.values[op.result] = memory


def _lower_store(fl: FunctionLowering, op: tir.StoreOp) -> None:
    address = fl.element_address(op.tensor, op.indices)
    fl.emit(
        llvm.StoreOp(
            fl.value(op.value), address, alignment=tir.byte_size(op.tensor.type.element_type)
        )
    )


def _lower_load(fl: FunctionLowering, op: tir.LoadOp) -> None:
    address = fl.element_address(op.tensor, op.indices)
    load = llvm.LoadOp(
        address, convert_type(op.result.type), alignment=tir.byte_size(op.tensor.type.element_type)
    )
    fl.values[op.result] = fl.emit_value(load)


def _lower_prefetch(fl: FunctionLowering, op: tir.PrefetchOp) -> None:
    address = fl.element_address(op.tensor, op.indices)
    flags = (int(bool(op.write.value.data)), op.locality.value.data, 1)  # 1: a data (not code) line
    arguments = [address, *(fl.constant(flag, i32) for flag in flags)]
    fl.emit(llvm.CallIntrinsicOp("llvm.prefetch.p0", arguments, []))


def _lower_tensor_ptr(fl: FunctionLowering, op: tir.TensorPtrOp) -> None:
    fl.values[op.result] = fl.element_address(op.tensor, op.indices)


def _lower_addr_of(fl: FunctionLowering, op: tir.AddrOfOp) -> None:
    fl.values[op.result] = fl.value(op.tensor)


def _lower_global_ref(fl: FunctionLowering, op: tir.GlobalRefOp) -> None:
    fl.values[op.result] = fl.emit(llvm.AddressOfOp(op.global_name, _ptr)).result


def _same_bits(element: Attribute, llvm_element: Attribute) -> bool:
    """Whether values of `element` are stored as `llvm_element` unchanged
    (ui8 weights as LLVM's signless i8 included, bf16 as the i16 of its bits,
    a float8 as its code,
    which is how a dense attribute holds it too)."""
    if is_stored_as_bits(element) or (
        isinstance(element, IntegerType) and 1 < element.width.data < 8
    ):
        return llvm_element == convert_type(element)  # a dense attribute holds a byte per i4 too
    if isinstance(element, IntegerType) and isinstance(llvm_element, IntegerType):
        return element.width.data == llvm_element.width.data and element.width.data % 8 == 0
    return element == llvm_element


def convert_global(op: tir.GlobalOp) -> llvm.GlobalOp:
    """The llvm global of a tir global (zero-initialized without a value)."""
    type_ = op.type
    if isinstance(type_, tir.TirTensorType):
        element = convert_type(type_.element_type)
        global_type = llvm.LLVMArrayType(type_.element_count(), element)
        flat = TensorType(element, [type_.element_count()])
        initial = op.initial_value
        if isinstance(initial, tir.BlobAttr):  # set aside as external data (llvm/translate.py)
            return llvm.GlobalOp(global_type, op.sym_name, "external", value=initial, alignment=64)
        if (
            isinstance(initial, DenseIntOrFPElementsAttr)
            and _same_bits(initial.get_element_type(), element)
            and len(initial) == type_.element_count()
        ):  # the same bytes, seen flat: no per-element Python work for big tensors
            value = DenseIntOrFPElementsAttr(flat, initial.data)
            return llvm.GlobalOp(global_type, op.sym_name, "external", value=value, alignment=64)
        if op.initial_value is not None:
            values = _llvm_values(op.initial_value.get_values(), type_.element_type)
        else:
            values = [0.0 if tir.is_float(element) else 0] * type_.element_count()
        value = DenseIntOrFPElementsAttr.from_list(
            TensorType(element, [type_.element_count()]), values
        )
    else:
        global_type = convert_type(type_)
        initial = op.initial_value
        if initial is None:
            value = (
                FloatAttr(0.0, global_type)
                if tir.is_float(global_type)
                else IntegerAttr(0, global_type)
            )
        else:
            value = _llvm_scalar(initial, type_)
    return llvm.GlobalOp(global_type, op.sym_name, "external", value=value, alignment=64)


PATTERNS = {
    tir.DefineTensorOp: _lower_define_tensor,
    tir.StoreOp: _lower_store,
    tir.LoadOp: _lower_load,
    tir.PrefetchOp: _lower_prefetch,
    tir.TensorPtrOp: _lower_tensor_ptr,
    tir.AddrOfOp: _lower_addr_of,
    tir.GlobalRefOp: _lower_global_ref,
}
