"""Expressions: one result each; constants, binary and unary arithmetic,
comparisons and logic."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    NoneType,
    VectorType,
    i1,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.traits import Pure

from graphcompiler.dialects.common import TypedValueFormat
from graphcompiler.dialects.tir.types import (
    TirTensorType,
    _require,
    common_type,
    is_bool,
    is_float,
    is_integer,
    is_value_type,
    with_element,
)


class ExpressionOp(IRDLOperation):
    """An expression: produces one value."""

    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        _require(
            is_value_type(self.results[0].type)
            or isinstance(self.results[0].type, NoneType | TirTensorType),
            f"an expression cannot produce {self.results[0].type}",
        )
        self.check_types()

    def check_types(self) -> None:
        """Raise VerifyException if the operand/result types break the op's typing rule."""


@irdl_op_definition
class ConstOp(TypedValueFormat, ExpressionOp):
    """A scalar or SIMD vector constant.

    Example:

        %c = tir.const dense<1.0> : vector<8xf32>
    """

    name = "tir.const"
    value = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        """Rejects types tir has no values of (f80, tensors, ...) where they
        are written: such an op could not even be printed in a diagnostic."""
        start = parser.pos
        op = super().parse(parser)
        if not is_value_type(op.value.type):
            parser.raise_error(
                f"tir.const cannot have type {op.value.type}: tir values are integers, "
                "index, f16, bf16, f32, f64 or vectors of them",
                start,
                parser.pos,
            )
        return op

    def check_types(self) -> None:
        value = self.value
        _require(
            isinstance(value, IntegerAttr | FloatAttr | DenseIntOrFPElementsAttr),
            f"{value} is not a scalar or vector constant",
        )
        _require(
            value.type == self.result.type,
            f"the constant's type {value.type} differs from the result type {self.result.type}",
        )
        _require(
            not isinstance(value, DenseIntOrFPElementsAttr) or isinstance(value.type, VectorType),
            "a dense constant must have a vector type",
        )


class BinaryExpression(ExpressionOp):
    """lhs (op) rhs with auto-cast: the result has the operands' common type.

    Example:

        %z = {op} %x, %i : (f32, index) -> f32
    """

    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(not is_bool(common), f"'{cls.name}' does not take booleans")

    @classmethod
    def result_for(cls, common: Attribute) -> Attribute:
        return common

    @classmethod
    def infer_type(cls, lhs: Attribute, rhs: Attribute) -> Attribute:
        """The result type for these operand types (auto-cast applied)."""
        common = common_type(lhs, rhs)
        cls.operand_rule(common)
        return cls.result_for(common)

    def check_types(self) -> None:
        expected = self.infer_type(self.lhs.type, self.rhs.type)
        _require(
            self.result.type == expected, f"result type {self.result.type} should be {expected}"
        )


class IntegerBinaryExpression(BinaryExpression):
    """A binary intrinsic on integers (vectors of integers lane-wise).

    Example:

        %z = {op} %a, %b : (i32, i32) -> i32
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_integer(common), f"'{cls.name}' needs integer operands, got {common}")


class ComparisonExpression(BinaryExpression):
    """A comparison after auto-cast; the result is i1 (lane-wise on vectors).

    Example:

        %c = {op} %x, %y : (f32, f32) -> i1
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        pass

    @classmethod
    def result_for(cls, common: Attribute) -> Attribute:
        return with_element(common, i1)


class LogicExpression(BinaryExpression):
    """A logical op on i1 (lane-wise on vectors).

    Example:

        %c = {op} %p, %q : (i1, i1) -> i1
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_bool(common), f"'{cls.name}' needs boolean operands, got {common}")


def _op_class(base_class: type[IRDLOperation], op_name: str, doc: str) -> type[IRDLOperation]:
    class_name = "".join(part.title() for part in op_name.split("_")) + "Op"
    return irdl_op_definition(
        type(class_name, (base_class,), {"name": f"tir.{op_name}", "__doc__": doc})
    )


AddOp = _op_class(BinaryExpression, "add", "lhs + rhs")
SubOp = _op_class(BinaryExpression, "sub", "lhs - rhs")
MulOp = _op_class(BinaryExpression, "mul", "lhs * rhs")
DivOp = _op_class(
    BinaryExpression,
    "div",
    "lhs / rhs (integers truncate toward zero and never trap: x / 0 is 0, INT_MIN / -1 is INT_MIN)",
)
ModOp = _op_class(
    IntegerBinaryExpression,
    "mod",
    "lhs % rhs, integers only (C remainder; x % 0 and INT_MIN % -1 are 0, no trap)",
)
MinOp = _op_class(BinaryExpression, "min", "intrinsic min(lhs, rhs); NaN if a float operand is NaN")
MaxOp = _op_class(BinaryExpression, "max", "intrinsic max(lhs, rhs); NaN if a float operand is NaN")


class FloatBinaryExpression(BinaryExpression):
    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_float(common), f"'{cls.name}' needs float operands, got {common}")


PowOp = _op_class(FloatBinaryExpression, "pow", "lhs ** rhs (extension: not in the design's list)")
IntAndOp = _op_class(IntegerBinaryExpression, "int_and", "intrinsic bitwise lhs & rhs")
IntOrOp = _op_class(IntegerBinaryExpression, "int_or", "intrinsic bitwise lhs | rhs")
IntXorOp = _op_class(IntegerBinaryExpression, "int_xor", "intrinsic bitwise lhs ^ rhs")
ShlOp = _op_class(IntegerBinaryExpression, "shl", "intrinsic lhs << rhs")
ShrOp = _op_class(IntegerBinaryExpression, "shr", "intrinsic lhs >> rhs (arithmetic for signed)")
GtOp = _op_class(ComparisonExpression, "gt", "lhs > rhs (lane-wise on vectors)")
LtOp = _op_class(ComparisonExpression, "lt", "lhs < rhs")
GeOp = _op_class(ComparisonExpression, "ge", "lhs >= rhs")
LeOp = _op_class(ComparisonExpression, "le", "lhs <= rhs")
EqOp = _op_class(ComparisonExpression, "eq", "lhs == rhs")
NeOp = _op_class(ComparisonExpression, "ne", "lhs != rhs")
AndOp = _op_class(LogicExpression, "and", "logical lhs && rhs (lane-wise)")
OrOp = _op_class(LogicExpression, "or", "logical lhs || rhs (lane-wise)")


class UnaryExpression(ExpressionOp):
    """f(x); the result has x's type unless the op says otherwise.

    Example:

        %y = {op} %x : f32 -> f32
    """

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    RULE: ClassVar[str] = "numeric"  # numeric | float | bool

    def check_types(self) -> None:
        input_type = self.input.type
        checks = {
            "numeric": is_integer(input_type) or is_float(input_type),
            "float": is_float(input_type),
            "bool": is_bool(input_type),
        }
        _require(checks[self.RULE], f"'{self.name}' needs a {self.RULE} operand, got {input_type}")
        _require(
            self.result.type == input_type, f"result type {self.result.type} should be {input_type}"
        )


def _unary(op_name: str, doc: str, rule: str) -> type[IRDLOperation]:
    class_name = "".join(part.title() for part in op_name.split("_")) + "Op"
    namespace = {
        "name": f"tir.{op_name}",
        "__doc__": doc,
        "RULE": rule,
        "__annotations__": {"RULE": ClassVar[str]},
    }
    return irdl_op_definition(type(class_name, (UnaryExpression,), namespace))


NotOp = _unary("not", "logical !x\n\nExample:\n\n    %y = tir.not %b : i1 -> i1", "bool")
AbsOp = _unary("abs", "intrinsic |x|", "numeric")
RoundOp = _unary("round", "intrinsic: nearest integer value, halves away from zero", "float")
FloorOp = _unary("floor", "intrinsic floor(x)", "float")
CeilOp = _unary("ceil", "intrinsic ceil(x)", "float")
ExpOp = _unary("exp", "intrinsic e ** x", "float")
SqrtOp = _unary("sqrt", "intrinsic sqrt(x)", "float")
RsqrtOp = _unary("rsqrt", "intrinsic 1 / sqrt(x)", "float")
# Math the graph lowering needs beyond the seed's intrinsic list.
LogOp = _unary("log", "natural logarithm (extension: not in the design's list)", "float")
TanhOp = _unary("tanh", "hyperbolic tangent (extension: not in the design's list)", "float")
