"""Tensor IR types (`!tir.ptr`, `!tir.tensor`, `!tir.var`) and the predicates the
verifiers use on scalar and SIMD value types."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerType,
    Signedness,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import AnyAttr, irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from graphcompiler.ir import element_types
from graphcompiler.ir.element_types import NARROW_FLOAT_TYPES


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """An untyped pointer: function addresses, pointer lists for list_brgemm."""

    name = "tir.ptr"


@irdl_attr_definition
class TirTensorType(ParametrizedAttribute, TypeAttribute):
    """A pointer-like buffer with a static row-major shape: `!tir.tensor<4x8xf32>`."""

    name = "tir.tensor"
    shape: ArrayAttr[IntAttr] = param_def(ArrayAttr[IntAttr])
    element_type: Attribute = param_def(AnyAttr())

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def element_count(self) -> int:
        count = 1
        for dim in self.get_shape():
            count *= dim
        return count

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
        return (ArrayAttr([IntAttr(d) for d in shape]), element_type)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            for dim in self.get_shape():
                printer.print_string(f"{dim}x")
            printer.print_attribute(self.element_type)

    def verify(self) -> None:
        if not self.shape.data or any(d.data < 0 for d in self.shape.data):
            raise VerifyException(
                f"a tensor needs at least one dimension, each >= 0 (0: an empty tensor), got {list(self.get_shape())}"
            )
        if not (is_scalar(self.element_type) or isinstance(self.element_type, PtrType)):
            raise VerifyException(f"tensor element type {self.element_type} is not a scalar type")


@irdl_attr_definition
class VarType(ParametrizedAttribute, TypeAttribute):
    """A mutable variable holding a scalar or SIMD value: `!tir.var<f32>`."""

    name = "tir.var"
    element_type: Attribute = param_def(AnyAttr())

    def verify(self) -> None:
        if not is_value_type(self.element_type):
            raise VerifyException(f"a var cannot hold {self.element_type}")


FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type, *NARROW_FLOAT_TYPES)
"""The narrow floats, like bf16, are storage: tir-legalize-types computes them in f32."""


def is_float(type_: Attribute) -> bool:
    return isinstance(element_of(type_), FLOAT_TYPES)


def is_integer(type_: Attribute) -> bool:
    """Integer or index, bool excluded."""
    element = element_of(type_)
    return isinstance(element, IndexType) or (
        isinstance(element, IntegerType) and element.width.data > 1
    )


def is_bool(type_: Attribute) -> bool:
    return element_of(type_) == i1


def is_scalar(type_: Attribute) -> bool:
    """index, floats and integers of a bit or more (LLVM has no i0)."""
    if isinstance(type_, IntegerType):
        return type_.width.data >= 1
    return isinstance(type_, (IndexType, *FLOAT_TYPES))


MAX_LANES = 64
"""A vector is a SIMD value (64 lanes: a 512-bit register of bytes); LLVM
runs out of memory on vectors of millions of lanes."""


def is_value_type(type_: Attribute) -> bool:
    """What expressions produce: scalars, 1-D vectors of 1 to MAX_LANES
    scalars, pointers."""
    if isinstance(type_, VectorType):
        return (
            type_.get_num_dims() == 1
            and 1 <= type_.get_shape()[0] <= MAX_LANES
            and is_scalar(type_.element_type)
        )
    return is_scalar(type_) or isinstance(type_, PtrType)


def element_of(type_: Attribute) -> Attribute:
    return type_.element_type if isinstance(type_, VectorType) else type_


def lanes_of(type_: Attribute) -> int:
    return type_.get_shape()[0] if isinstance(type_, VectorType) else 1


def with_element(type_: Attribute, element: Attribute) -> Attribute:
    """`type_`'s lane count with another element type."""
    return VectorType(element, [lanes_of(type_)]) if isinstance(type_, VectorType) else element


def bit_width(type_: Attribute) -> int:
    """Bits of a scalar or of all lanes of a vector (a pointer: 64)."""
    element = element_of(type_)
    width = 64 if isinstance(element, PtrType) else element_types.bit_width(element)
    return width * lanes_of(type_)


def byte_size(type_: Attribute) -> int:
    """Bytes a value takes in memory (an i1 takes a byte)."""
    return max(1, bit_width(type_) // 8)


def tensor_bytes(type_: Attribute) -> int:
    """Bytes a tir tensor takes in memory."""
    return type_.element_count() * byte_size(type_.element_type)


def common_type(lhs: Attribute, rhs: Attribute) -> Attribute:
    """The seed's auto-cast: the type both operands of a binary op convert to."""
    if lhs == rhs:
        return lhs
    if lanes_of(lhs) != lanes_of(rhs):
        raise VerifyException(
            f"operand types {lhs} and {rhs} have different lane counts "
            f"({lanes_of(lhs)} vs {lanes_of(rhs)})"
        )
    a, b = element_of(lhs), element_of(rhs)
    if not (is_scalar(a) and is_scalar(b)) or is_bool(a) != is_bool(b):
        raise VerifyException(f"operand types {lhs} and {rhs} cannot be auto-cast to a common type")
    if is_float(a) != is_float(b):
        common = a if is_float(a) else b
    elif isinstance(a, IndexType) or isinstance(b, IndexType):
        common = IndexType()
    elif bit_width(a) != bit_width(b):
        common = a if bit_width(a) > bit_width(b) else b
    elif is_float(a):
        common = Float32Type()  # f16 with bf16
    else:
        common = a if a.signedness.data != Signedness.UNSIGNED else b
    return with_element(lhs, common)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise VerifyException(message)
