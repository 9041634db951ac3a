"""Intrinsics beyond arithmetic: conversions, vector reductions, select,
fmadd and the lane shuffles (unpack, shuffle, permute)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, IntegerAttr, IntegerType, VectorType, i1, i32
from xdsl.irdl import (
    AnyAttr,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from graphcompiler.dialects.tir.expressions import ExpressionOp
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
    """x converted to the result type under the op's rule.

    Example:

        %y = {op} %x : f32 -> i32
    """

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
    """Intrinsic: the same bits seen as another type of the same width.

    Example:

        %y = tir.reinterpret %x : vector<8xf32> -> vector<8xi32>
    """

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
    """Intrinsic: x is NaN (lane-wise).

    Example:

        %c = tir.isnan %x : vector<8xf32> -> vector<8xi1>
    """

    name = "tir.isnan"

    def check_types(self) -> None:
        _require(is_float(self.input.type), f"isnan takes floats, got {self.input.type}")
        _require(
            self.result.type == with_element(self.input.type, i1),
            f"isnan of {self.input.type} gives {with_element(self.input.type, i1)}",
        )


@irdl_op_definition
class SaturatedCastOp(ConversionExpression):
    """Intrinsic: f32/s32 to u8 (clamped to 0..255) or s8 (-128..127); NaN gives 0.

    Example:

        %y = tir.saturated_cast %x : vector<16xf32> -> vector<16xui8>
    """

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
    """Intrinsic: round to nearest (like std::roundf), then convert to s32.

    Example:

        %y = tir.round_and_cast %x : f32 -> i32
    """

    name = "tir.round_and_cast"

    def check_types(self) -> None:
        _require(is_float(self.input.type), f"round_and_cast takes floats, got {self.input.type}")
        _require(
            self.result.type == with_element(self.input.type, i32),
            f"round_and_cast of {self.input.type} gives {with_element(self.input.type, i32)}",
        )


class VectorReduceExpression(ExpressionOp):
    """A reduction of a vector's lanes to one scalar of its element type.

    Example:

        %s = {op} %v : vector<8xf32> -> f32
    """

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


@irdl_op_definition
class ReduceAddOp(VectorReduceExpression):
    """intrinsic: sum of the lanes

    Example:

        %s = tir.reduce_add %v : vector<8xf32> -> f32
    """

    name = "tir.reduce_add"


@irdl_op_definition
class ReduceMulOp(VectorReduceExpression):
    """intrinsic: product of the lanes

    Example:

        %s = tir.reduce_mul %v : vector<8xi32> -> i32
    """

    name = "tir.reduce_mul"


@irdl_op_definition
class ReduceMaxOp(VectorReduceExpression):
    """intrinsic: largest lane (NaN if any lane is NaN)

    Example:

        %s = tir.reduce_max %v : vector<8xf32> -> f32
    """

    name = "tir.reduce_max"


@irdl_op_definition
class ReduceMinOp(VectorReduceExpression):
    """intrinsic: smallest lane (NaN if any lane is NaN)

    Example:

        %s = tir.reduce_min %v : vector<16xf32> -> f32
    """

    name = "tir.reduce_min"


@irdl_op_definition
class SelectOp(ExpressionOp):
    """cond ? a : b, lane-wise for vectors.

    Example:

        %y = tir.select %c, %a, %b : vector<8xi1>, vector<8xf32>
    """

    name = "tir.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def()
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,` type($result)"
    )

    def check_types(self) -> None:
        _require(
            is_bool(self.cond.type),
            f"the condition has type {self.cond.type}, expected i1 or a vector of i1",
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
    T: ClassVar = VarConstraint("T", AnyAttr())
    a = operand_def(T)
    b = operand_def(T)
    c = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def check_types(self) -> None:
        _require(is_float(self.result.type), f"fmadd works on floats, got {self.result.type}")


class VectorPairExpression(ExpressionOp):
    """An x86-style lane shuffle of two vectors of the same type."""

    T: ClassVar = VarConstraint("T", base(VectorType))
    a = operand_def(T)
    b = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$a `,` $b attr-dict `:` type($result)"

    @property
    def unit_bits(self) -> int:
        """The width of the units the op moves: `elem_bits` where the op has
        it, else whole 128-bit lanes."""
        return 128


class _ElemBits(VectorPairExpression):
    """`elem_bits` is the width of the units moved: a multiple of the element
    width that divides 128."""

    elem_bits = prop_def(IntegerAttr[I64])

    @property
    def unit_bits(self) -> int:
        return self.elem_bits.value.data


class _Imm(VectorPairExpression):
    """`imm` is the x86 control byte."""

    imm = prop_def(IntegerAttr[I64])

    @property
    def imm_value(self) -> int:
        """The control byte `imm`."""
        return self.imm.value.data


@irdl_op_definition
class UnpackLowOp(_ElemBits):
    """Intrinsic: interleave the low halves of each 128-bit lane of a and b.

    Example:

        %y = tir.unpack_low %a, %b {elem_bits = 32 : i64} : vector<8xf32>
    """

    name = "tir.unpack_low"


@irdl_op_definition
class UnpackHighOp(_ElemBits):
    """Intrinsic: interleave the high halves of each 128-bit lane of a and b.

    Example:

        %y = tir.unpack_high %a, %b {elem_bits = 64 : i64} : vector<8xf32>
    """

    name = "tir.unpack_high"


@irdl_op_definition
class ShuffleOp(_Imm, _ElemBits):
    """Intrinsic: x86 shuffle of a and b selected by the `imm` control byte.

    Example:

        %y = tir.shuffle %a, %b {imm = 68 : i64, elem_bits = 32 : i64} : vector<8xf32>
    """

    name = "tir.shuffle"


@irdl_op_definition
class PermuteOp(_Imm):
    """Intrinsic: x86 permute of 128-bit lanes of a and b by `imm`.

    Example:

        %y = tir.permute %a, %b {imm = 32 : i64} : vector<8xf32>
    """

    name = "tir.permute"


@irdl_op_definition
class Permutex2varOp(ExpressionOp):
    """Intrinsic: lanes of a and b picked by the integer vector idx.

    Example:

        %y = tir.permutex2var %a, %idx, %b : vector<8xf32>, vector<8xi32>
    """

    name = "tir.permutex2var"
    T: ClassVar = VarConstraint("T", base(VectorType))
    a = operand_def(T)
    idx = operand_def(VectorType)
    b = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$a `,` $idx `,` $b attr-dict `:` type($a) `,` type($idx)"

    def check_types(self) -> None:
        _require(
            is_integer(self.idx.type) and lanes_of(self.idx.type) == lanes_of(self.a.type),
            f"idx must be an integer vector with {lanes_of(self.a.type)} lanes, got {self.idx.type}",
        )
