"""tir.cast to and from the 8- and 4-bit floats and the 4- and 2-bit
integers, in LLVM integer arithmetic. LLVM has no type for either: a float8
value lives as its code in an i8, an i4 sign- (ui4 zero-) extended in an
i8. Every step is lane-wise (shifts, masks, compares, selects), so vector
casts stay vectors: no table lookup, no gather.

Decoding builds the f32 bits of a code: exponent field f > 0 gives
2^(f - bias) x 1.mantissa, re-biased for f32; f = 0 (subnormal) is the
mantissa times its unit, converted exactly. Encoding is
ir/narrow_floats.py's `encode`, step for step, so the compiled code and
the reference round the same way (to nearest even, not saturating).
"""

from __future__ import annotations

from typing import Protocol

from xdsl.dialects import llvm
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness, i32
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.llvm import UIToFPOp, VectorFCmpOp, VectorSelectOp
from graphcompiler.ir.narrow_floats import FORMATS, FloatFormat
from graphcompiler.lowering.tir_to_llvm.types import _icmp, convert_type


class FunctionLowering(Protocol):
    """What these conversions use of function.FunctionLowering (which calls them)."""

    def emit_value(self, op: Operation) -> SSAValue: ...

    def constant(self, value: int | float | bool, type_: Attribute) -> SSAValue: ...

    def intrinsic(self, name: str, args: list[SSAValue], result: Attribute) -> SSAValue: ...

    def float_to_int(self, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue: ...

    def convert_value(self, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue: ...


_QUIET_NAN = 0x7FC00000
_INF = 0x7F800000


def is_narrow_int(type_: Attribute) -> bool:
    element = tir.element_of(type_)
    return isinstance(element, IntegerType) and element.width.data in (4, 2)


class _Lanes:
    """Emits i32 (or <n x i32>) arithmetic shaped like one tir value."""

    def __init__(self, fl: FunctionLowering, like: Attribute):
        self.fl = fl
        self.i32 = convert_type(tir.with_element(like, i32))
        self.f32 = convert_type(tir.with_element(like, Float32Type()))

    def const(self, number: int) -> SSAValue:
        return self.fl.constant(number, self.i32)

    def op(self, kind, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        rhs = self.const(rhs) if isinstance(rhs, int) else rhs
        return self.fl.emit_value(kind(lhs, rhs))

    def compare(self, predicate: str, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
        rhs = self.const(rhs) if isinstance(rhs, int) else rhs
        return self.fl.emit_value(llvm.ICmpOp(lhs, rhs, _icmp(predicate)))

    def select(self, condition: SSAValue, yes: SSAValue | int, no: SSAValue | int) -> SSAValue:
        yes = self.const(yes) if isinstance(yes, int) else yes
        no = self.const(no) if isinstance(no, int) else no
        return self.fl.emit_value(VectorSelectOp(condition, yes, no))

    def bitcast(self, value: SSAValue, type_: Attribute) -> SSAValue:
        return self.fl.emit_value(llvm.BitcastOp(value, type_))


def _format(type_: Attribute) -> FloatFormat:
    return FORMATS[str(tir.element_of(type_))]


def decode(fl: FunctionLowering, code: SSAValue, source: Attribute) -> SSAValue:
    """The f32 value of the code `code` (an i8) of the format of `source`."""
    fmt, lanes = _format(source), _Lanes(fl, source)
    m = fmt.mantissa_bits
    word = fl.emit_value(llvm.ZExtOp(code, lanes.i32))
    magnitude = lanes.op(llvm.AndOp, word, fmt.sign_bit - 1)
    sign = lanes.op(llvm.ShlOp, lanes.op(llvm.AndOp, word, fmt.sign_bit), 32 - fmt.bits)
    field = lanes.op(llvm.LShrOp, magnitude, m)
    mantissa = lanes.op(llvm.AndOp, magnitude, (1 << m) - 1)
    normal = lanes.op(
        llvm.OrOp,
        lanes.op(llvm.ShlOp, lanes.op(llvm.AddOp, field, 127 - fmt.bias), 23),
        lanes.op(llvm.ShlOp, mantissa, 23 - m),
    )
    unit = fl.constant(2.0 ** (fmt.min_exponent - m), lanes.f32)
    subnormal_value = fl.emit_value(llvm.FMulOp(fl.emit_value(UIToFPOp(mantissa, lanes.f32)), unit))
    subnormal = lanes.bitcast(subnormal_value, lanes.i32)
    bits = lanes.select(lanes.compare("eq", field, 0), subnormal, normal)
    if fmt.ieee:
        top = lanes.compare("eq", field, (1 << fmt.exponent_bits) - 1)
        special = lanes.select(lanes.compare("eq", mantissa, 0), _INF, _QUIET_NAN)
        bits = lanes.select(top, special, bits)
    if fmt.nan_code is not None:
        bits = lanes.select(lanes.compare("eq", magnitude, fmt.nan_code), _QUIET_NAN, bits)
    bits = lanes.op(llvm.OrOp, bits, sign)
    if fmt.unsigned_zero:
        bits = lanes.select(lanes.compare("eq", word, fmt.sign_bit), _QUIET_NAN, bits)
    return lanes.bitcast(bits, lanes.f32)


def encode(fl: FunctionLowering, value: SSAValue, target: Attribute) -> SSAValue:
    """The code (an i8) of the f32 `value` in the format of `target`,
    rounded to nearest even; past the largest finite value: inf, NaN, or
    (float4) the largest value, as FloatFormat.encode says."""
    fmt, lanes = _format(target), _Lanes(fl, target)
    m, low = fmt.mantissa_bits, fmt.min_exponent
    bits = lanes.bitcast(value, lanes.i32)
    negative = lanes.op(llvm.LShrOp, bits, 31)
    magnitude_bits = lanes.op(llvm.AndOp, bits, 0x7FFFFFFF)
    is_nan = lanes.compare("ugt", magnitude_bits, _INF)
    magnitude = lanes.bitcast(lanes.select(is_nan, 0, magnitude_bits), lanes.f32)
    limit = fl.constant(2.0 * fmt.max_value, lanes.f32)  # inf and huge values: past the max
    above = fl.emit_value(VectorFCmpOp(magnitude, limit, "ogt"))
    magnitude = fl.emit_value(VectorSelectOp(above, limit, magnitude))
    exponent = lanes.op(
        llvm.SubOp, lanes.op(llvm.LShrOp, lanes.bitcast(magnitude, lanes.i32), 23), 127
    )
    exponent = lanes.select(lanes.compare("slt", exponent, low), low, exponent)
    scale = lanes.bitcast(  # 2^(m - exponent), exactly
        lanes.op(llvm.ShlOp, lanes.op(llvm.SubOp, lanes.const(m + 127), exponent), 23), lanes.f32
    )
    scaled = fl.emit_value(llvm.FMulOp(magnitude, scale))
    rounded = fl.intrinsic("roundeven", [scaled], lanes.f32)
    units = fl.float_to_int(rounded, lanes.f32, tir.with_element(target, i32))
    code = lanes.op(llvm.AddOp, lanes.op(llvm.ShlOp, lanes.op(llvm.SubOp, exponent, low), m), units)
    sign = lanes.op(llvm.ShlOp, negative, fmt.bits - 1)
    signed = lanes.op(llvm.OrOp, code, sign)
    if fmt.unsigned_zero:  # no negative zero
        signed = lanes.select(lanes.compare("eq", code, 0), 0, signed)
    overflow = lanes.compare("sgt", code, fmt.max_code)
    result = lanes.select(overflow, _special_code(lanes, fmt, sign, overflow=True), signed)
    result = lanes.select(is_nan, _special_code(lanes, fmt, sign, overflow=False), result)
    return fl.emit_value(llvm.TruncOp(result, convert_type(target)))


def _special_code(lanes: _Lanes, fmt: FloatFormat, sign: SSAValue, overflow: bool) -> SSAValue:
    """The code of an overflow or of a NaN of sign `sign` (at the sign bit),
    as FloatFormat.overflow and FloatFormat.nan choose them."""
    if fmt.ieee:
        return lanes.op(llvm.OrOp, sign, fmt.max_code + 1 if overflow else fmt.ieee_nan)
    if fmt.unsigned_zero:
        return lanes.const(fmt.sign_bit)
    if fmt.nan_code is not None:
        return lanes.op(llvm.OrOp, sign, fmt.nan_code)
    if overflow:  # no inf, no NaN: saturates
        return lanes.op(llvm.OrOp, sign, fmt.max_code)
    return lanes.op(llvm.XOrOp, sign, fmt.sign_bit)  # a NaN: zero of the other sign


def wrap_int(fl: FunctionLowering, value: SSAValue, source: Attribute, target: Attribute):
    """An integer or float `value` of tir type `source` as the 4- or 2-bit
    integer type `target` (held in an i8): the low bits, as ml_dtypes and
    onnx's Cast keep them (a float is truncated toward zero first)."""
    element = tir.element_of(target)
    unsigned = element.signedness.data == Signedness.UNSIGNED
    word = fl.convert_value(value, source, tir.with_element(target, i32))  # signed, for ui4 too
    byte_type = convert_type(target)
    byte = fl.emit_value(llvm.TruncOp(word, byte_type))
    bits = element.width.data
    if unsigned:
        return fl.emit_value(llvm.AndOp(byte, fl.constant((1 << bits) - 1, byte_type)))
    shift = fl.constant(8 - bits, byte_type)
    return fl.emit_value(llvm.AShrOp(fl.emit_value(llvm.ShlOp(byte, shift)), shift))
