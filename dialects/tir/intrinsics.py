"""Intrinsics beyond arithmetic: conversions, vector reductions, select,
fmadd and the lane shuffles (unpack, shuffle, permute)."""

from __future__ import annotations

from xdsl.dialects.builtin import I64, Float32Type, IntegerAttr, IntegerType, VectorType, i1, i32
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from graphcompiler.dialects.tir.expressions import ExpressionOp, _op_class
from graphcompiler.dialects.tir.types import (
    _require,
    bit_width,
    element_of,
    is_bool,
    is_float,
    is_integer,
    is_scalar,
    lanes_of,
    with_element,
)


class ConversionExpression(ExpressionOp):
    """x converted to the result type under the op's rule."""

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"


@irdl_op_definition
class CastOp(ConversionExpression):
    """Value-preserving conversion (C casts: float -> int truncates).

    Example:

        %y = tir.cast %x : f32 -> i32
    """

    name = "tir.cast"

    def check_types(self) -> None:
        source, target = self.input.type, self.result.type
        _require(
            lanes_of(source) == lanes_of(target),
            f"cannot cast {source} to {target}: lane counts differ",
        )
        _require(
            is_scalar(element_of(source)) and is_scalar(element_of(target)),
            f"cannot cast {source} to {target}",
        )


@irdl_op_definition
class ReinterpretOp(ConversionExpression):
    """Intrinsic: the same bits seen as another type of the same width."""

    name = "tir.reinterpret"

    def check_types(self) -> None:
        _require(
            bit_width(self.input.type) == bit_width(self.result.type),
            f"cannot reinterpret {self.input.type} ({bit_width(self.input.type)} bits) as {self.result.type} ({bit_width(self.result.type)} bits)",
        )


@irdl_op_definition
class BroadcastOp(ConversionExpression):
    """Intrinsic: a vector whose lanes all hold the scalar x.

    Example:

        %v = tir.broadcast %x : f32 -> vector<8xf32>
    """

    name = "tir.broadcast"

    def check_types(self) -> None:
        _require(is_scalar(self.input.type), f"broadcast takes a scalar, got {self.input.type}")
        _require(
            isinstance(self.result.type, VectorType)
            and self.result.type.element_type == self.input.type,
            f"broadcast of {self.input.type} must give a vector of {self.input.type}, got {self.result.type}",
        )


@irdl_op_definition
class IsnanOp(ConversionExpression):
    """Intrinsic: x is NaN (lane-wise)."""

    name = "tir.isnan"

    def check_types(self) -> None:
        _require(is_float(self.input.type), f"isnan takes floats, got {self.input.type}")
        _require(
            self.result.type == with_element(self.input.type, i1),
            f"isnan of {self.input.type} gives {with_element(self.input.type, i1)}",
        )


@irdl_op_definition
class SaturatedCastOp(ConversionExpression):
    """Intrinsic: f32/s32 to u8 (clamped to 0..255) or s8 (-128..127); NaN gives 0."""

    name = "tir.saturated_cast"

    def check_types(self) -> None:
        source, target = self.input.type, self.result.type
        _require(
            element_of(source) in (Float32Type(), i32),
            f"saturated_cast takes f32 or i32, got {source}",
        )
        target_element = element_of(target)
        _require(
            isinstance(target_element, IntegerType) and target_element.width.data == 8,
            f"saturated_cast gives ui8 or i8, got {target}",
        )
        _require(lanes_of(source) == lanes_of(target), "saturated_cast keeps the lane count")


@irdl_op_definition
class RoundAndCastOp(ConversionExpression):
    """Intrinsic: round to nearest (like std::roundf), then convert to s32."""

    name = "tir.round_and_cast"

    def check_types(self) -> None:
        _require(is_float(self.input.type), f"round_and_cast takes floats, got {self.input.type}")
        _require(
            self.result.type == with_element(self.input.type, i32),
            f"round_and_cast of {self.input.type} gives {with_element(self.input.type, i32)}",
        )


class VectorReduceExpression(ExpressionOp):
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check_types(self) -> None:
        _require(
            isinstance(self.input.type, VectorType),
            f"'{self.name}' reduces a vector, got {self.input.type}",
        )
        _require(
            self.result.type == element_of(self.input.type),
            f"reducing {self.input.type} gives {element_of(self.input.type)}",
        )


ReduceAddOp = _op_class(VectorReduceExpression, "reduce_add", "intrinsic: sum of the lanes")
ReduceMulOp = _op_class(VectorReduceExpression, "reduce_mul", "intrinsic: product of the lanes")
ReduceMaxOp = _op_class(
    VectorReduceExpression, "reduce_max", "intrinsic: largest lane (NaN if any lane is NaN)"
)
ReduceMinOp = _op_class(
    VectorReduceExpression, "reduce_min", "intrinsic: smallest lane (NaN if any lane is NaN)"
)


@irdl_op_definition
class SelectOp(ExpressionOp):
    """cond ? a : b, lane-wise for vectors."""

    name = "tir.select"
    cond = operand_def()
    true_value = operand_def()
    false_value = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        operands = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            operands.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        cond_type = parser.parse_type()
        parser.parse_punctuation(",")
        value_type = parser.parse_type()
        resolved = [parser.resolve_operand(operands[0], cond_type)] + [
            parser.resolve_operand(o, value_type) for o in operands[1:]
        ]
        return cls.create(operands=resolved, result_types=[value_type], attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.cond.type}, {self.result.type}")

    def check_types(self) -> None:
        _require(
            is_bool(self.cond.type),
            f"the condition has type {self.cond.type}, expected i1 or a vector of i1",
        )
        _require(
            self.true_value.type == self.false_value.type == self.result.type,
            "both values and the result must have the same type",
        )
        _require(
            lanes_of(self.cond.type) == lanes_of(self.result.type),
            f"the condition has {lanes_of(self.cond.type)} lanes, the values {lanes_of(self.result.type)}",
        )


@irdl_op_definition
class FmaddOp(ExpressionOp):
    """Intrinsic: a * b + c, fused.

    Example:

        %y = tir.fmadd %a, %b, %c : vector<8xf32>
    """

    name = "tir.fmadd"
    a = operand_def()
    b = operand_def()
    c = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> FmaddOp:
        return _parse_same_type(cls, parser, 3)

    def print(self, printer: Printer) -> None:
        _print_same_type(self, printer)

    def check_types(self) -> None:
        _require(is_float(self.result.type), f"fmadd works on floats, got {self.result.type}")


def _parse_same_type(cls, parser: Parser, count: int) -> IRDLOperation:
    """`op %a, %b, ... attr-dict : T` where every operand and the result are T."""
    operands = [parser.parse_unresolved_operand()]
    for _ in range(count - 1):
        parser.parse_punctuation(",")
        operands.append(parser.parse_unresolved_operand())
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    type_ = parser.parse_type()
    properties = {
        name: attributes.pop(name)
        for name in list(attributes)
        if name in cls.get_irdl_definition().properties
    }
    return cls.create(
        operands=[parser.resolve_operand(o, type_) for o in operands],
        result_types=[type_],
        properties=properties,
        attributes=attributes,
    )


def _print_same_type(op: IRDLOperation, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list(op.operands, printer.print_operand)
    printer.print_op_attributes({**op.properties, **op.attributes})
    printer.print_string(" : ")
    printer.print_attribute(op.results[0].type)


class VectorPairExpression(ExpressionOp):
    """An x86-style lane shuffle of two vectors of the same type."""

    a = operand_def(VectorType)
    b = operand_def(VectorType)
    result = result_def(VectorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser):
        return _parse_same_type(cls, parser, 2)

    def print(self, printer: Printer) -> None:
        _print_same_type(self, printer)

    def check_types(self) -> None:
        _require(
            self.a.type == self.b.type == self.result.type,
            "both vectors and the result must have the same type",
        )


@irdl_op_definition
class UnpackLowOp(VectorPairExpression):
    """Intrinsic: interleave the low halves of each 128-bit lane of a and b."""

    name = "tir.unpack_low"
    elem_bits = prop_def(IntegerAttr[I64])


@irdl_op_definition
class UnpackHighOp(VectorPairExpression):
    """Intrinsic: interleave the high halves of each 128-bit lane of a and b."""

    name = "tir.unpack_high"
    elem_bits = prop_def(IntegerAttr[I64])


@irdl_op_definition
class ShuffleOp(VectorPairExpression):
    """Intrinsic: x86 shuffle of a and b selected by the `imm` control byte."""

    name = "tir.shuffle"
    imm = prop_def(IntegerAttr[I64])
    elem_bits = prop_def(IntegerAttr[I64])


@irdl_op_definition
class PermuteOp(VectorPairExpression):
    """Intrinsic: x86 permute of 128-bit lanes of a and b by `imm`."""

    name = "tir.permute"
    imm = prop_def(IntegerAttr[I64])


@irdl_op_definition
class Permutex2varOp(ExpressionOp):
    """Intrinsic: lanes of a and b picked by the integer vector idx."""

    name = "tir.permutex2var"
    a = operand_def(VectorType)
    idx = operand_def(VectorType)
    b = operand_def(VectorType)
    result = result_def(VectorType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> Permutex2varOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        parser.parse_punctuation(",")
        idx_type = parser.parse_type()
        types = [value_type, idx_type, value_type]
        operands = [parser.resolve_operand(n, t) for n, t in zip(names, types, strict=True)]
        return cls.create(operands=operands, result_types=[value_type], attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.a.type}, {self.idx.type}")

    def check_types(self) -> None:
        _require(
            self.a.type == self.b.type == self.result.type,
            "a, b and the result must have the same type",
        )
        _require(
            is_integer(self.idx.type) and lanes_of(self.idx.type) == lanes_of(self.a.type),
            f"idx must be an integer vector with {lanes_of(self.a.type)} lanes, got {self.idx.type}",
        )
