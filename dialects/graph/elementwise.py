"""Element-wise ops: unary ops (with clamp and cast), broadcasting binary,
comparison and logical ops, select (activations with parameters: activations.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, TensorType, i1
from xdsl.irdl import VarConstraint, base, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    _fmt,
    _require_float,
    _require_numeric,
    _require_result_type,
    _require_same_element_type,
    _shape,
    broadcast_shapes,
    float_value,
)


class UnaryOp(GraphOp):
    """f(x) element by element; the result has the input's type.

    Example:

        %y = {op} %x : tensor<4x8xf32>
    """

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($input)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        return operand_types[0]


class FloatUnaryOp(UnaryOp):
    """A unary op defined on floating-point tensors only."""

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return operand_types[0]


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0)"""

    name = "graph.relu"


@irdl_op_definition
class AbsOp(UnaryOp):
    """|x|"""

    name = "graph.abs"


@irdl_op_definition
class NegOp(UnaryOp):
    """-x"""

    name = "graph.neg"


@irdl_op_definition
class SquareOp(UnaryOp):
    """x * x"""

    name = "graph.square"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """1 / (1 + exp(-x))"""

    name = "graph.sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """tanh(x)"""

    name = "graph.tanh"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """e ** x"""

    name = "graph.exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """natural logarithm"""

    name = "graph.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """square root"""

    name = "graph.sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """1 / sqrt(x)"""

    name = "graph.rsqrt"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """the error function; compiled f32 is within 3.3e-7 of it (a rational
    function of x clamped to +-3.92: no exp), relative 2.5e-7 near 0"""

    name = "graph.erf"


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    """1 / x"""

    name = "graph.reciprocal"


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """sine of x radians on the whole range (f32: about 0.5 ulp, see tir-expand-math; f64:
    the math library); +-inf and NaN give NaN"""

    name = "graph.sin"


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """cosine of x radians on the whole range (f32: about 0.5 ulp, see tir-expand-math; f64:
    the math library); +-inf and NaN give NaN"""

    name = "graph.cos"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """the largest whole number <= x (numpy.floor; -0, inf and NaN stay)"""

    name = "graph.floor"


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """the smallest whole number >= x (numpy.ceil; -0, inf and NaN stay)"""

    name = "graph.ceil"


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """the nearest whole number, halves to even (numpy.round, ONNX Round: 2.5 -> 2, -0.5 -> -0)"""

    name = "graph.round"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 as x is negative, zero or positive (numpy.sign: NaN stays NaN, -0 gives 0;
    unsigned integers 0 or 1)"""

    name = "graph.sign"


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """not x on i1 (numpy.logical_not).

    Example:

        %y = graph.logical_not %x : tensor<4x8xi1>
    """

    name = "graph.logical_not"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_bool(cls, operand_types)
        return operand_types[0]


@irdl_op_definition
class ClampOp(UnaryOp):
    """min(max(x, min), max), with f32 bounds (min <= max) converted to the
    element type; NaN stays NaN (numpy.clip).

    Example:

        %y = graph.clamp %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4x8xf32>
    """

    name = "graph.clamp"
    min = prop_def(FloatAttr)
    max = prop_def(FloatAttr)

    @property
    def min_value(self) -> float:
        return self.min.value.data

    @property
    def max_value(self) -> float:
        return self.max.value.data

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        low, high = float_value(properties, "min"), float_value(properties, "max")
        if low > high:
            raise VerifyException(f"min {low} is greater than max {high}")
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class CastOp(GraphOp):
    """Converts each element to the result's element type (C semantics:
    floats truncate toward zero into integers, nonzero becomes true in i1).

    float -> integer saturates: NaN -> 0, values beyond the range (and
    +-inf) -> the type's maximum or minimum; integer -> narrower integer
    wraps; f32 -> f16/bf16 rounds to nearest even. The storage types: to a
    float8 or float4, round to nearest even without saturating (past the
    largest finite value: inf in f8E5M2, NaN in the other float8s, the
    largest value in f4E2M1FN); to i4, ui4, i2 or ui2, the low bits of the
    value truncated toward zero (-9.0 -> i4 7). The shape is kept.

    Example:

        %y = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xi32>
    """

    name = "graph.cast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        return shape_kept(cls, operand_types, result_type)


def shape_kept(cls: type[GraphOp], operand_types, result_type: TensorType | None) -> TensorType:
    """The given result type of a conversion (cast, bitcast), checked to
    keep operand #0's shape."""
    result_type = _require_result_type(cls, result_type)
    if _shape(result_type) != _shape(operand_types[0]):
        raise VerifyException(
            f"result shape {_fmt(_shape(result_type))} differs from {cls.operand_role(0)} "
            f"shape {_fmt(_shape(operand_types[0]))}"
        )
    return result_type


class BinaryOp(GraphOp):
    """lhs (op) rhs element by element, with numpy broadcasting; both
    operands have one element type (no implicit promotion: graph.cast first).

    Example:

        %z = {op} %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        return cls.broadcast(operand_types)

    @classmethod
    def broadcast(cls, operand_types: Sequence[TensorType]) -> TensorType:
        _require_same_element_type(cls, operand_types)
        shape = broadcast_shapes(
            [_shape(t) for t in operand_types], [cls.operand_role(i) for i in range(2)]
        )
        return TensorType(operand_types[0].element_type, shape)


class ComparisonOp(BinaryOp):
    """A broadcasting comparison (also of booleans); the result is i1.
    Comparisons with NaN are false, except not_equal (true).

    Example:

        %m = {op} %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    """

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        return TensorType(i1, cls.broadcast(operand_types).get_shape())


@irdl_op_definition
class AddOp(BinaryOp):
    """lhs + rhs"""

    name = "graph.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """lhs - rhs"""

    name = "graph.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """lhs * rhs"""

    name = "graph.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """lhs / rhs (integers: truncating toward zero)"""

    name = "graph.div"


class FloatBinaryOp(BinaryOp):
    """A broadcasting binary op defined on floating-point tensors only."""

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class PowOp(FloatBinaryOp):
    """lhs ** rhs"""

    name = "graph.pow"


@irdl_op_definition
class ModOp(BinaryOp):
    """The remainder of lhs / rhs. `fmod = true`: lhs - trunc(lhs / rhs) * rhs, the sign of
    lhs (C fmod, numpy.fmod; exact for floats). `fmod = false` (the default): lhs -
    floor(lhs / rhs) * rhs, the sign of rhs (numpy.mod, Python's %, ONNX Mod's default): the
    fmod remainder plus rhs where their signs differ (rounded once), a zero one +-0 with
    rhs's sign; so a finite x % +-inf is x if their signs agree, else +-inf. For floats
    inf % y and x % 0 are NaN; for integers x % 0 is 0 (numpy's value, without a trap), as is
    INT_MIN % -1.

    Example:

        %r = graph.mod %x, %y {fmod = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.mod"
    fmod = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    @property
    def truncates(self) -> bool:
        """`fmod`: the remainder takes lhs's sign (C fmod) rather than rhs's (numpy.mod)."""
        return bool(self.fmod.value.data)


@irdl_op_definition
class MaximumOp(BinaryOp):
    """max(lhs, rhs)"""

    name = "graph.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """min(lhs, rhs)"""

    name = "graph.minimum"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """lhs > rhs"""

    name = "graph.greater"


@irdl_op_definition
class LessOp(ComparisonOp):
    """lhs < rhs"""

    name = "graph.less"


@irdl_op_definition
class EqualOp(ComparisonOp):
    """lhs == rhs"""

    name = "graph.equal"


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """lhs >= rhs (numpy.greater_equal: false if either is NaN)"""

    name = "graph.greater_equal"


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """lhs <= rhs (numpy.less_equal: false if either is NaN)"""

    name = "graph.less_equal"


@irdl_op_definition
class NotEqualOp(ComparisonOp):
    """lhs != rhs (numpy.not_equal: true if either is NaN)"""

    name = "graph.not_equal"


def _require_bool(cls: type[GraphOp], types: Sequence[TensorType]) -> None:
    for index, type_ in enumerate(types):
        if type_.element_type != i1:
            raise VerifyException(
                f"{cls.operand_role(index)} has element type {type_.element_type}; {cls.name} "
                "needs i1 (graph.cast or compare first)"
            )


class LogicalBinaryOp(BinaryOp):
    """A broadcasting boolean op: i1 operands, i1 result.

    Example:

        %m = {op} %a, %b : (tensor<4x8xi1>, tensor<8xi1>) -> tensor<4x8xi1>
    """

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_bool(cls, operand_types)
        return cls.broadcast(operand_types)


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """lhs and rhs on i1 (numpy.logical_and)"""

    name = "graph.logical_and"


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """lhs or rhs on i1 (numpy.logical_or)"""

    name = "graph.logical_or"


@irdl_op_definition
class LogicalXorOp(LogicalBinaryOp):
    """lhs != rhs on i1 (numpy.logical_xor)"""

    name = "graph.logical_xor"


@irdl_op_definition
class SelectOp(GraphOp):
    """cond ? true_value : false_value element by element, broadcasting all three
    (numpy.where); `cond` is i1, the values share one element type.

    Example:

        %y = graph.select %c, %x, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    """

    name = "graph.select"
    cond = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        if operand_types[0].element_type != i1:
            raise VerifyException(
                f"{cls.operand_role(0)} has element type {operand_types[0].element_type}, "
                "expected i1"
            )
        _require_same_element_type(cls, operand_types[1:])
        shape = broadcast_shapes(
            [_shape(t) for t in operand_types], [cls.operand_role(i) for i in range(3)]
        )
        return TensorType(operand_types[1].element_type, shape)
