"""Memory accesses: reading a var, loading from and storing to a tensor,
taking the address of an element (`&A[i, j]`) or a tensor, and the prefetch
hint statement."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, IntegerType, VectorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from graphcompiler.dialects.tir.expressions import ExpressionOp
from graphcompiler.dialects.tir.statements import StatementOp
from graphcompiler.dialects.tir.types import (
    PtrType,
    TirTensorType,
    VarType,
    _require,
    tensor_bytes,
)
from graphcompiler.dialects.tir.verify import (
    _check_access,
    _resolve_access,
    parse_access,
    print_access,
)


def _access_type(tensor_type: Attribute, lanes: int) -> Attribute:
    element = tensor_type.element_type if isinstance(tensor_type, TirTensorType) else tensor_type
    return VectorType(element, [lanes]) if lanes > 1 else element


@irdl_op_definition
class ReadOp(ExpressionOp):
    """The current value of a var.

    Example:

        %x = tir.read %acc : !tir.var<f32>
    """

    name = "tir.read"
    T: ClassVar = VarConstraint("T", AnyAttr())
    var = operand_def(ParamAttrConstraint(VarType, (T,)))
    result = result_def(T)
    assembly_format = "$var attr-dict `:` type($var)"


@irdl_op_definition
class LoadOp(ExpressionOp):
    """A[i, j], or the vector A[i, j lanes N] of N lanes along the last dim.

    Example:

        %i = tir.const 0 : index
        %x = tir.load %A[%i, %i lanes 8] : !tir.tensor<4x8xf32>
    """

    name = "tir.load"
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    result = result_def()
    lanes = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))

    @property
    def lane_count(self) -> int:
        """`lanes`: 1 for a scalar load, N for a vector of N lanes."""
        return self.lanes.value.data

    # The access `%A[%i, %j lanes 8]` is beyond a declarative assembly_format.
    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tensor_type = parser.parse_type()
        tensor, indices = _resolve_access(parser, access, tensor_type)
        return cls.create(
            operands=[tensor, *indices],
            result_types=[_access_type(tensor_type, access[2])],
            properties={"lanes": IntegerAttr(access[2], 64)},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.tensor, self.indices, self.lane_count)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def check_types(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, self.lane_count)
        expected = _access_type(tensor_type, self.lane_count)
        _require(
            self.result.type == expected, f"result type {self.result.type} should be {expected}"
        )


@irdl_op_definition
class StoreOp(StatementOp):
    """A[i, j] = value, or A[i, j lanes N] = vector (N lanes along the last dim).

    Example:

        %i = tir.const 0 : index
        %v = tir.const 1.0 : f32
        tir.store %v, %A[%i, %i] : !tir.tensor<4x8xf32>
    """

    name = "tir.store"
    value = operand_def()
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    lanes = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, 64))

    @property
    def lane_count(self) -> int:
        """`lanes`: 1 for a scalar store, N for a vector of N lanes."""
        return self.lanes.value.data

    # The access `%A[%i, %j lanes 8]` is beyond a declarative assembly_format.
    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tensor_type = parser.parse_type()
        tensor, indices = _resolve_access(parser, access, tensor_type)
        value_type = _access_type(tensor_type, access[2])
        return cls.create(
            operands=[parser.resolve_operand(value, value_type), tensor, *indices],
            properties={"lanes": IntegerAttr(access[2], 64)},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        print_access(printer, self.tensor, self.indices, self.lane_count)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def verify_(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, self.lane_count)
        expected = _access_type(tensor_type, self.lane_count)
        _require(
            self.value.type == expected,
            f"stores a {self.value.type} into {tensor_type} with {self.lane_count} lanes; expected {expected}",
        )


def _is_byte_arena(type_: TirTensorType) -> bool:
    element = type_.element_type
    return (
        isinstance(element, IntegerType) and element.width.data == 8 and len(type_.get_shape()) == 1
    )


@irdl_op_definition
class TensorPtrOp(ExpressionOp):
    """`&A[i, j]`: a view starting at that element, indexed with the result's
    own dense row-major shape (it must fit in A). A 1-D i8 tensor is a byte
    arena: its views may have any element type, `i` being a byte offset.

    Example:

        %i = tir.const 8 : index
        %row = tir.tensor_ptr %A[%i, %i] : !tir.tensor<64x64xf32> -> !tir.tensor<4x64xf32>
    """

    name = "tir.tensor_ptr"
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    result = result_def(TirTensorType)
    traits = traits_def(Pure())

    # The access `%A[%i, %j lanes 8]` is beyond a declarative assembly_format.
    @classmethod
    def parse(cls, parser: Parser) -> TensorPtrOp:
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tensor_type = parser.parse_type()
        parser.parse_punctuation("->")
        view_type = parser.parse_type()
        tensor, indices = _resolve_access(parser, access, tensor_type)
        return cls.create(
            operands=[tensor, *indices], result_types=[view_type], attributes=attributes
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.tensor, self.indices, 1)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.tensor.type} -> {self.result.type}")

    def check_types(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, 1)
        view = self.result.type
        if _is_byte_arena(tensor_type):  # a byte arena holds views of any type
            _require(
                tensor_bytes(view) <= tensor_type.element_count(),
                f"a view of {tensor_bytes(view)} bytes does not fit in {tensor_type}",
            )
            return
        _require(
            view.element_type == tensor_type.element_type,
            "the view must have the tensor's element type (or view an i8 arena)",
        )
        _require(
            view.element_count() <= tensor_type.element_count(),
            f"a view of {view.element_count()} elements does not fit in {tensor_type}",
        )


@irdl_op_definition
class AddrOfOp(ExpressionOp):
    """The address of a tensor (or view) as an untyped pointer.

    Example:

        %p = tir.addr_of %A : !tir.tensor<4x8xf32>
    """

    name = "tir.addr_of"
    tensor = operand_def(TirTensorType)
    result = result_def(PtrType)
    traits = traits_def(Pure())
    assembly_format = "$tensor attr-dict `:` type($tensor)"


@irdl_op_definition
class PrefetchOp(StatementOp):
    """A hint that A[i, j] is read (`write`: written) soon, so that its cache
    line is fetched ahead: into every cache level with locality 3, from L2
    outward with 2, L3 with 1 (0: no reuse). Results never depend on it.

    Example:

        %i = tir.const 0 : index
        tir.prefetch %A[%i, %i] {locality = 2 : i64} : !tir.tensor<4x8xf32>
    """

    name = "tir.prefetch"
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    write = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    locality = prop_def(IntegerAttr[I64], default_value=IntegerAttr(3, 64))

    @property
    def is_write(self) -> bool:
        """`write`: the element is about to be written, not read."""
        return bool(self.write.value.data)

    @property
    def locality_level(self) -> int:
        """`locality`, 0 (no reuse) to 3 (keep in every cache level)."""
        return self.locality.value.data

    # The access `%A[%i, %j lanes 8]` is beyond a declarative assembly_format.
    @classmethod
    def parse(cls, parser: Parser) -> PrefetchOp:
        access = parse_access(parser)
        if access[2] != 1:
            parser.raise_error("a prefetch names one element, not lanes")
        attributes = parser.parse_optional_attr_dict()
        properties = {
            name: attributes.pop(name) for name in ("write", "locality") if name in attributes
        }
        parser.parse_punctuation(":")
        tensor, indices = _resolve_access(parser, access, parser.parse_type())
        return cls.create(operands=[tensor, *indices], properties=properties, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.tensor, self.indices, 1)
        shown = {"write": self.write, "locality": self.locality}  # defaults filled in: always set
        printer.print_op_attributes({**shown, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def verify_(self) -> None:
        _check_access(self, self.tensor, self.indices, 1)
        locality = self.locality_level
        _require(0 <= locality <= 3, f"locality {locality} is not 0 to 3")
