"""Unary expressions: f(x) of the operand's type; logical not and the math
intrinsics."""

from __future__ import annotations

from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from graphcompiler.dialects.tir.expressions import ExpressionOp
from graphcompiler.dialects.tir.types import _require, is_bool, is_float, is_integer


class UnaryExpression(ExpressionOp):
    """f(x); the result has x's type unless the op says otherwise.

    Example:

        %y = {op} %x : f32 -> f32
    """

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def operand_rule(cls, operand: Attribute) -> None:
        """Raise VerifyException unless the op takes operands of this type
        (here: integers and floats, scalar or vector)."""
        _require(
            is_integer(operand) or is_float(operand),
            f"'{cls.name}' needs a numeric operand, got {operand}",
        )

    def check_types(self) -> None:
        input_type = self.input.type
        self.operand_rule(input_type)
        _require(
            self.result.type == input_type, f"result type {self.result.type} should be {input_type}"
        )


class FloatUnaryExpression(UnaryExpression):
    """A unary op on floats (vectors of floats lane-wise).

    Example:

        %y = {op} %x : vector<8xf32> -> vector<8xf32>
    """

    @classmethod
    def operand_rule(cls, operand: Attribute) -> None:
        _require(is_float(operand), f"'{cls.name}' needs a float operand, got {operand}")


@irdl_op_definition
class NotOp(UnaryExpression):
    """logical !x

    Example:

        %y = tir.not %b : i1 -> i1
    """

    name = "tir.not"

    @classmethod
    def operand_rule(cls, operand: Attribute) -> None:
        _require(is_bool(operand), f"'{cls.name}' needs a bool operand, got {operand}")


@irdl_op_definition
class AbsOp(UnaryExpression):
    """intrinsic |x|

    Example:

        %y = tir.abs %x : f32 -> f32
    """

    name = "tir.abs"


@irdl_op_definition
class RoundOp(FloatUnaryExpression):
    """intrinsic: nearest integer value, halves away from zero

    Example:

        %y = tir.round %x : f32 -> f32
    """

    name = "tir.round"


@irdl_op_definition
class RoundEvenOp(FloatUnaryExpression):
    """intrinsic: nearest integer value, halves to even (IEEE roundToIntegralTiesToEven, numpy.round)

    Example:

        %y = tir.roundeven %x : vector<8xf32> -> vector<8xf32>
    """

    name = "tir.roundeven"


@irdl_op_definition
class FloorOp(FloatUnaryExpression):
    """intrinsic floor(x)

    Example:

        %y = tir.floor %x : f32 -> f32
    """

    name = "tir.floor"


@irdl_op_definition
class CeilOp(FloatUnaryExpression):
    """intrinsic ceil(x)

    Example:

        %y = tir.ceil %x : f32 -> f32
    """

    name = "tir.ceil"


@irdl_op_definition
class ExpOp(FloatUnaryExpression):
    """intrinsic e ** x

    Example:

        %y = tir.exp %x : vector<8xf32> -> vector<8xf32>
    """

    name = "tir.exp"


@irdl_op_definition
class SqrtOp(FloatUnaryExpression):
    """intrinsic sqrt(x)

    Example:

        %y = tir.sqrt %x : f32 -> f32
    """

    name = "tir.sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryExpression):
    """intrinsic 1 / sqrt(x)

    Example:

        %y = tir.rsqrt %x : f32 -> f32
    """

    name = "tir.rsqrt"


# Math the graph lowering needs beyond the seed's intrinsic list.
@irdl_op_definition
class LogOp(FloatUnaryExpression):
    """natural logarithm (extension: not in the design's list)

    Example:

        %y = tir.log %x : f32 -> f32
    """

    name = "tir.log"


@irdl_op_definition
class TanhOp(FloatUnaryExpression):
    """hyperbolic tangent (extension: not in the design's list)

    Example:

        %y = tir.tanh %x : vector<8xf32> -> vector<8xf32>
    """

    name = "tir.tanh"


@irdl_op_definition
class SinOp(FloatUnaryExpression):
    """sine of x radians (extension: not in the design's list)

    Example:

        %y = tir.sin %x : vector<8xf32> -> vector<8xf32>
    """

    name = "tir.sin"


@irdl_op_definition
class CosOp(FloatUnaryExpression):
    """cosine of x radians (extension: not in the design's list)

    Example:

        %y = tir.cos %x : f32 -> f32
    """

    name = "tir.cos"
