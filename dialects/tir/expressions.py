"""Expressions: one result each; constants, binary arithmetic, comparisons
and logic. The unary ones are in `unary.py`."""

from __future__ import annotations

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

    Written as its typed value then the attributes, like graph.constant
    (TypedValueFormat). The parser is hand-written, not an assembly_format,
    so that a type tir has no values of (f80, tensors, ...) is rejected where
    it is written: xDSL runs no extra check in a declarative parser, and such
    an op, once built, could not even be printed in a diagnostic.

    Example:

        %c = tir.const dense<1.0> : vector<8xf32>
    """

    name = "tir.const"
    value = prop_def(AnyAttr())
    result = result_def()
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        """TypedValueFormat's parser, then the value's type checked where it is written."""
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


@irdl_op_definition
class AddOp(BinaryExpression):
    """lhs + rhs

    Example:

        %z = tir.add %x, %i : (f32, index) -> f32
    """

    name = "tir.add"


@irdl_op_definition
class SubOp(BinaryExpression):
    """lhs - rhs

    Example:

        %z = tir.sub %x, %y : (f32, f32) -> f32
    """

    name = "tir.sub"


@irdl_op_definition
class MulOp(BinaryExpression):
    """lhs * rhs

    Example:

        %z = tir.mul %i, %j : (index, index) -> index
    """

    name = "tir.mul"


@irdl_op_definition
class DivOp(BinaryExpression):
    """lhs / rhs (integers truncate toward zero and never trap: x / 0 is 0, INT_MIN / -1 is INT_MIN)

    Example:

        %z = tir.div %x, %y : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    """

    name = "tir.div"


@irdl_op_definition
class ModOp(IntegerBinaryExpression):
    """lhs % rhs, integers only (C remainder; x % 0 and INT_MIN % -1 are 0, no trap)

    Example:

        %z = tir.mod %i, %n : (index, index) -> index
    """

    name = "tir.mod"


@irdl_op_definition
class MinOp(BinaryExpression):
    """intrinsic min(lhs, rhs); NaN if a float operand is NaN

    Example:

        %z = tir.min %x, %y : (f32, f32) -> f32
    """

    name = "tir.min"


@irdl_op_definition
class MaxOp(BinaryExpression):
    """intrinsic max(lhs, rhs); NaN if a float operand is NaN

    Example:

        %z = tir.max %x, %y : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    """

    name = "tir.max"


class FloatBinaryExpression(BinaryExpression):
    """A binary op on floats (vectors of floats lane-wise).

    Example:

        %z = {op} %x, %y : (f32, f32) -> f32
    """

    @classmethod
    def operand_rule(cls, common: Attribute) -> None:
        _require(is_float(common), f"'{cls.name}' needs float operands, got {common}")


@irdl_op_definition
class PowOp(FloatBinaryExpression):
    """lhs ** rhs (extension: not in the design's list)

    Example:

        %z = tir.pow %x, %y : (f32, f32) -> f32
    """

    name = "tir.pow"


@irdl_op_definition
class FModOp(FloatBinaryExpression):
    """C fmod(lhs, rhs): lhs - trunc(lhs / rhs) * rhs, exact, with the sign of
    lhs; NaN if lhs is infinite or rhs is 0 (LLVM's frem; tir.mod is the
    integer remainder)

    Example:

        %z = tir.fmod %x, %y : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    """

    name = "tir.fmod"


@irdl_op_definition
class IntAndOp(IntegerBinaryExpression):
    """intrinsic bitwise lhs & rhs

    Example:

        %z = tir.int_and %a, %b : (i32, i32) -> i32
    """

    name = "tir.int_and"


@irdl_op_definition
class IntOrOp(IntegerBinaryExpression):
    """intrinsic bitwise lhs | rhs

    Example:

        %z = tir.int_or %a, %b : (i32, i32) -> i32
    """

    name = "tir.int_or"


@irdl_op_definition
class IntXorOp(IntegerBinaryExpression):
    """intrinsic bitwise lhs ^ rhs

    Example:

        %z = tir.int_xor %a, %b : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
    """

    name = "tir.int_xor"


@irdl_op_definition
class ShlOp(IntegerBinaryExpression):
    """intrinsic lhs << rhs

    Example:

        %z = tir.shl %a, %b : (i32, i32) -> i32
    """

    name = "tir.shl"


@irdl_op_definition
class ShrOp(IntegerBinaryExpression):
    """intrinsic lhs >> rhs (arithmetic for signed)

    Example:

        %z = tir.shr %a, %b : (i32, i32) -> i32
    """

    name = "tir.shr"


@irdl_op_definition
class GtOp(ComparisonExpression):
    """lhs > rhs (lane-wise on vectors)

    Example:

        %c = tir.gt %x, %y : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
    """

    name = "tir.gt"


@irdl_op_definition
class LtOp(ComparisonExpression):
    """lhs < rhs

    Example:

        %c = tir.lt %i, %n : (index, index) -> i1
    """

    name = "tir.lt"


@irdl_op_definition
class GeOp(ComparisonExpression):
    """lhs >= rhs

    Example:

        %c = tir.ge %x, %y : (f32, f32) -> i1
    """

    name = "tir.ge"


@irdl_op_definition
class LeOp(ComparisonExpression):
    """lhs <= rhs

    Example:

        %c = tir.le %x, %y : (f32, f32) -> i1
    """

    name = "tir.le"


@irdl_op_definition
class EqOp(ComparisonExpression):
    """lhs == rhs

    Example:

        %c = tir.eq %a, %b : (i32, i32) -> i1
    """

    name = "tir.eq"


@irdl_op_definition
class NeOp(ComparisonExpression):
    """lhs != rhs

    Example:

        %c = tir.ne %x, %y : (f32, f32) -> i1
    """

    name = "tir.ne"


@irdl_op_definition
class AndOp(LogicExpression):
    """logical lhs && rhs (lane-wise)

    Example:

        %c = tir.and %p, %q : (i1, i1) -> i1
    """

    name = "tir.and"


@irdl_op_definition
class OrOp(LogicExpression):
    """logical lhs || rhs (lane-wise)

    Example:

        %c = tir.or %p, %q : (vector<8xi1>, vector<8xi1>) -> vector<8xi1>
    """

    name = "tir.or"
