"""The type converter (tir types to llvm ones), the llvm form of tir
constants, and the small helpers every pattern module shares."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    NoneType,
    Signedness,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation

from graphcompiler.dialects import tir
from graphcompiler.ir.diagnostics import DiagnosticError, op_diagnostic
from graphcompiler.ir.element_types import NARROW_FLOAT_TYPES
from graphcompiler.ir.narrow_floats import FORMATS

LEGAL_DIALECTS = ("llvm", "builtin")

_ptr = llvm.LLVMPointerType()


def _fail(op: Operation, message: str) -> DiagnosticError:
    return DiagnosticError(op_diagnostic(op, message))


# --- type converter -------------------------------------------------------------


@functools.cache
def convert_type(type_: Attribute) -> Attribute:
    """The llvm type of tir type `type_` (cached: attributes are immutable)."""
    match type_:
        case IndexType():
            return i64
        case IntegerType():
            # signedness lives in the ops; i4 and i2 take a byte each (sign-extended)
            width = type_.width.data
            return IntegerType(8 if 1 < width < 8 else width)
        case BFloat16Type():
            return IntegerType(16)  # bf16 is kept as its bits; see FunctionLowering.convert_value
        case _ if isinstance(type_, NARROW_FLOAT_TYPES):
            return IntegerType(8)  # the code; see lowering/tir_to_llvm/narrow_floats.py
        case Float16Type() | Float32Type() | Float64Type():
            return type_
        case VectorType():
            return VectorType(convert_type(type_.element_type), type_.get_shape())
        case tir.TirTensorType() | tir.VarType() | tir.PtrType():
            return _ptr
        case NoneType():
            return llvm.LLVMVoidType()
    raise ValueError(f"no LLVM type for {type_}")


def _is_unsigned(type_: Attribute) -> bool:
    element = tir.element_of(type_)
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def _llvm_byte_size(type_: Attribute) -> int:
    if isinstance(type_, llvm.LLVMPointerType):
        return 8
    if isinstance(type_, VectorType):
        return type_.get_shape()[0] * _llvm_byte_size(type_.element_type)
    return tir.byte_size(type_)


def _mangle(type_: Attribute) -> str:
    if isinstance(type_, VectorType):
        return f"v{type_.get_shape()[0]}{_mangle(type_.element_type)}"
    if isinstance(type_, IntegerType):
        return f"i{type_.width.data}"
    return {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "f32", Float64Type: "f64"}[
        type(type_)
    ]


_ICMP_PREDICATES = {
    "eq": 0,
    "ne": 1,
    "slt": 2,
    "sle": 3,
    "sgt": 4,
    "sge": 5,
    "ult": 6,
    "ule": 7,
    "ugt": 8,
    "uge": 9,
}


def _icmp(name: str) -> IntegerAttr:
    return IntegerAttr(_ICMP_PREDICATES[name], i64)


# --- constants ----------------------------------------------------------------------


def _bf16_bits(value: float) -> int:
    """The bits of `value` rounded to bf16 (bf16 values live as i16 in LLVM)."""
    from graphcompiler.ir.bf16 import round_to_bf16

    single = round_to_bf16(np.array(value, dtype=np.float32))
    return int(single.reshape(1).view(np.uint32)[0] >> 16)


def is_stored_as_bits(element: Attribute) -> bool:
    """bf16 and the 8- and 4-bit floats: LLVM holds their bits as an integer."""
    return isinstance(element, (BFloat16Type, *NARROW_FLOAT_TYPES))


def _llvm_values(values: Sequence[int | float], element: Attribute) -> list[int | float]:
    """Constant values of tir element type `element` as its llvm type holds them."""
    if isinstance(element, BFloat16Type):
        return [_bf16_bits(v) for v in values]
    if isinstance(element, NARROW_FLOAT_TYPES):
        return FORMATS[str(element)].encode(np.array(values, np.float32)).tolist()
    return [int(v) for v in values] if not tir.is_float(element) else list(values)


def _llvm_scalar(value: Attribute, type_: Attribute) -> Attribute:
    """A scalar IntegerAttr/FloatAttr of tir type `type_` as an llvm constant."""
    llvm_type = convert_type(type_)
    if isinstance(value, FloatAttr) and not is_stored_as_bits(type_):
        return value
    return IntegerAttr(_llvm_values([value.value.data], type_)[0], llvm_type)
