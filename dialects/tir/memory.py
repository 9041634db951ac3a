"""Memory access expressions: reading a var, loading from a tensor, and
taking the address of an element (`&A[i, j]`) or a global; and the
prefetch hint statement."""

from __future__ import annotations

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, IntegerType
from xdsl.irdl import (
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
from graphcompiler.dialects.tir.statements import StatementOp, _access_type, _parse_var_type
from graphcompiler.dialects.tir.types import PtrType, TirTensorType, VarType, _require, bit_width
from graphcompiler.dialects.tir.verify import (
    _check_access,
    _resolve_access,
    parse_access,
    print_access,
)


@irdl_op_definition
class ReadOp(ExpressionOp):
    """The current value of a var.

    Example:

        %x = tir.read %acc : !tir.var<f32>
    """

    name = "tir.read"
    var = operand_def(VarType)
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> ReadOp:
        var = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        var_type = _parse_var_type(parser)
        return cls.create(
            operands=[parser.resolve_operand(var, var_type)],
            result_types=[var_type.element_type],
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.var)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.var.type)

    def check_types(self) -> None:
        _require(
            self.result.type == self.var.type.element_type,
            f"reading a {self.var.type} gives {self.var.type.element_type}",
        )


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
        print_access(printer, self.tensor, self.indices, self.lanes.value.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def check_types(self) -> None:
        tensor_type = _check_access(self, self.tensor, self.indices, self.lanes.value.data)
        expected = _access_type(tensor_type, self.lanes.value.data)
        _require(
            self.result.type == expected, f"result type {self.result.type} should be {expected}"
        )


def _is_byte_arena(type_: TirTensorType) -> bool:
    element = type_.element_type
    return (
        isinstance(element, IntegerType) and element.width.data == 8 and len(type_.get_shape()) == 1
    )


def _tensor_bytes(type_: TirTensorType) -> int:
    element = (
        8 if isinstance(type_.element_type, PtrType) else max(1, bit_width(type_.element_type) // 8)
    )
    return type_.element_count() * element


@irdl_op_definition
class TensorPtrOp(ExpressionOp):
    """`&A[i, j]`: a view starting at that element, indexed with the result's
    own dense row-major shape (it must fit in A). A 1-D i8 tensor is a byte
    arena: its views may have any element type, `i` being a byte offset."""

    name = "tir.tensor_ptr"
    tensor = operand_def(TirTensorType)
    indices = var_operand_def()
    result = result_def(TirTensorType)
    traits = traits_def(Pure())

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
                _tensor_bytes(view) <= tensor_type.element_count(),
                f"a view of {_tensor_bytes(view)} bytes does not fit in {tensor_type}",
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
    """The address of a tensor (or view) as an untyped pointer."""

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
        shown = {
            name: self.properties[name] for name in ("write", "locality") if name in self.properties
        }
        printer.print_op_attributes({**shown, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    def verify_(self) -> None:
        _check_access(self, self.tensor, self.indices, 1)
        locality = self.locality.value.data
        _require(0 <= locality <= 3, f"locality {locality} is not 0 to 3")
