"""Expressions: constants, binary and unary arithmetic, comparisons, casts,
select and fmadd. After tir-legalize-types both operands of a binary op have
the type it computes in and no math is left in bf16, so each op maps to its
llvm ops one to one."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.llvm import VectorFCmpOp, VectorSelectOp
from graphcompiler.lowering.tir_to_llvm.function import FunctionLowering
from graphcompiler.lowering.tir_to_llvm.types import (
    _fail,
    _icmp,
    _is_unsigned,
    _llvm_scalar,
    _llvm_values,
    _mangle,
    convert_type,
    is_stored_as_bits,
)


def _lower_const(fl: FunctionLowering, op: tir.ConstOp) -> None:
    result_type = convert_type(op.result.type)
    value = op.value
    if isinstance(op.result.type, IndexType):  # known to index_arithmetic, which folds
        fl.values[op.result] = fl.constant(value.value.data, result_type)
        return

    def attribute() -> Attribute:
        if isinstance(value, IntegerAttr | FloatAttr):
            return _llvm_scalar(value, op.result.type)
        values = _llvm_values(value.get_values(), tir.element_of(op.result.type))
        return DenseIntOrFPElementsAttr.from_list(
            result_type, values * (1 if len(values) > 1 else result_type.get_shape()[0])
        )

    key = ("tir", value, op.result.type)  # xDSL compares float attributes bit for bit
    fl.values[op.result] = fl.constant_value(key, attribute, result_type)


_INT_BINARY: dict[type, Callable[..., Operation]] = {
    tir.AddOp: llvm.AddOp,
    tir.SubOp: llvm.SubOp,
    tir.MulOp: llvm.MulOp,
    tir.IntAndOp: llvm.AndOp,
    tir.IntOrOp: llvm.OrOp,
    tir.IntXorOp: llvm.XOrOp,
    tir.ShlOp: llvm.ShlOp,
    tir.AndOp: llvm.AndOp,
    tir.OrOp: llvm.OrOp,
}
_SIGNED_INT_BINARY = {
    tir.DivOp: (llvm.SDivOp, llvm.UDivOp),
    tir.ModOp: (llvm.SRemOp, llvm.URemOp),
    tir.ShrOp: (llvm.AShrOp, llvm.LShrOp),
}
_FLOAT_BINARY = {
    tir.AddOp: llvm.FAddOp,
    tir.SubOp: llvm.FSubOp,
    tir.MulOp: llvm.FMulOp,
    tir.DivOp: llvm.FDivOp,
    tir.FModOp: llvm.FRemOp,  # no x86 instruction: LLVM calls fmodf/fmod per lane
}
_COMPARISONS = {
    tir.GtOp: "gt",
    tir.LtOp: "lt",
    tir.GeOp: "ge",
    tir.LeOp: "le",
    tir.EqOp: "eq",
    tir.NeOp: "ne",
}


def _compare(
    fl: FunctionLowering, relation: str, lhs: SSAValue, rhs: SSAValue, type_: Attribute
) -> SSAValue:
    if tir.is_float(type_):
        predicate = "une" if relation == "ne" else f"o{relation}"
        return fl.emit_value(VectorFCmpOp(lhs, rhs, predicate))
    if relation in ("eq", "ne"):
        predicate = relation
    else:
        unsigned = _is_unsigned(type_) or tir.is_bool(type_)  # true > false, as numpy
        predicate = ("u" if unsigned else "s") + relation
    return fl.emit_value(llvm.ICmpOp(lhs, rhs, _icmp(predicate)))


def _float_min_max(fl: FunctionLowering, is_max: bool, a: SSAValue, b: SSAValue) -> SSAValue:
    """numpy's maximum/minimum: a NaN operand gives NaN (llvm.maxnum/minnum
    would drop it), ties give `a`. `b > a ? b : a` is one x86 max/min
    instruction (whose NaN answer is `a`), then a NaN `b` is selected; for a
    constant `b` (relu, clamp) that second select folds away."""
    b_wins = fl.emit_value(VectorFCmpOp(b, a, "ogt" if is_max else "olt"))
    chosen = fl.emit_value(VectorSelectOp(b_wins, b, a))
    b_is_nan = fl.emit_value(VectorFCmpOp(b, b, "uno"))
    return fl.emit_value(VectorSelectOp(b_is_nan, b, chosen))


def _safe_divisor(divisor: SSAValue) -> bool:
    """A constant other than 0 and -1: integer division by it cannot trap."""
    if not isinstance(divisor.owner, tir.ConstOp):
        return False
    value = divisor.owner.value
    values = (
        value.get_values() if isinstance(value, DenseIntOrFPElementsAttr) else [value.value.data]
    )
    return all(v not in (0, -1) for v in values)


_INDEX_ARITHMETIC = {
    tir.AddOp: "add",
    tir.SubOp: "sub",
    tir.MulOp: "mul",
    tir.DivOp: "sdiv",
    tir.ModOp: "srem",
}
"""Index ops folded where their operands are known (FunctionLowering.index_arithmetic)."""


def _safe_divisor_or_other(kind: type, divisor: SSAValue) -> bool:
    return kind not in (tir.DivOp, tir.ModOp) or _safe_divisor(divisor)


def _guarded_division(
    fl: FunctionLowering, kind: type, lhs: SSAValue, rhs: SSAValue, type_: Attribute
) -> SSAValue:
    """Integer div/mod that cannot trap (x86 raises SIGFPE for x / 0 and
    INT_MIN / -1): those divide by 1 instead (so x % 0 = x % -1 = 0), then
    x / -1 is -x (wrapping) and x / 0 is 0."""
    llvm_type = convert_type(type_)
    zero, unsigned = fl.constant(0, llvm_type), _is_unsigned(type_)
    is_zero = fl.emit_value(llvm.ICmpOp(rhs, zero, _icmp("eq")))
    special = is_zero
    if not unsigned:
        is_minus_one = fl.emit_value(llvm.ICmpOp(rhs, fl.constant(-1, llvm_type), _icmp("eq")))
        special = fl.emit_value(llvm.OrOp(is_zero, is_minus_one))
    divisor = fl.emit_value(VectorSelectOp(special, fl.constant(1, llvm_type), rhs))
    signed_op, unsigned_op = _SIGNED_INT_BINARY[kind]
    result = fl.emit_value((unsigned_op if unsigned else signed_op)(lhs, divisor))
    if kind is tir.ModOp:
        return result
    if not unsigned:
        negated = fl.emit_value(llvm.SubOp(zero, lhs))
        result = fl.emit_value(VectorSelectOp(is_minus_one, negated, result))
    return fl.emit_value(VectorSelectOp(is_zero, zero, result))


def _require_legal(op: Operation, type_: Attribute) -> None:
    """What tir-legalize-types guarantees (convert-tir-to-llvm runs its
    patterns first): one operand type, and no bf16 math."""
    if any(operand.type != type_ for operand in op.operands) or is_stored_as_bits(
        tir.element_of(type_)
    ):
        types = ", ".join(str(operand.type) for operand in op.operands)
        raise _fail(op, f"has operands of types {types}: run tir-legalize-types first")


def _lower_binary(fl: FunctionLowering, op: tir.BinaryExpression) -> None:
    type_ = op.lhs.type
    _require_legal(op, type_)
    lhs, rhs = fl.value(op.lhs), fl.value(op.rhs)
    kind = type(op)
    if kind in _COMPARISONS:
        result = _compare(fl, _COMPARISONS[kind], lhs, rhs, type_)
    elif tir.is_float(type_) and kind in _FLOAT_BINARY:
        result = fl.emit_value(_FLOAT_BINARY[kind](lhs, rhs))
    elif tir.is_float(type_) and kind in (tir.MinOp, tir.MaxOp):
        result = _float_min_max(fl, kind is tir.MaxOp, lhs, rhs)
    elif tir.is_float(type_) and kind is tir.PowOp:
        result = fl.intrinsic("pow", [lhs, rhs], lhs.type)
    elif kind in (tir.MinOp, tir.MaxOp):
        lhs_wins = _compare(fl, "lt" if kind is tir.MinOp else "gt", lhs, rhs, type_)
        result = fl.emit_value(VectorSelectOp(lhs_wins, lhs, rhs))
    elif (
        isinstance(type_, IndexType)
        and kind in _INDEX_ARITHMETIC
        and _safe_divisor_or_other(kind, op.rhs)
    ):
        result = fl.index_arithmetic(_INDEX_ARITHMETIC[kind], lhs, rhs)
    elif kind in (tir.DivOp, tir.ModOp) and not _safe_divisor(op.rhs):
        result = _guarded_division(fl, kind, lhs, rhs, type_)
    elif kind in _SIGNED_INT_BINARY:
        signed, unsigned = _SIGNED_INT_BINARY[kind]
        result = fl.emit_value((unsigned if _is_unsigned(type_) else signed)(lhs, rhs))
    else:
        result = fl.emit_value(_INT_BINARY[kind](lhs, rhs))
    fl.values[op.result] = result


_FLOAT_UNARY = {  # f32 exp, log, tanh, sin and cos are expanded first (tir-expand-math)
    tir.FloorOp: "floor",
    tir.CeilOp: "ceil",
    tir.ExpOp: "exp",
    tir.SqrtOp: "sqrt",
    tir.LogOp: "log",
    tir.RoundOp: "round",
    tir.RoundEvenOp: "roundeven",
    tir.TanhOp: "tanh",
    tir.SinOp: "sin",
    tir.CosOp: "cos",
}


def _lower_unary(fl: FunctionLowering, op: tir.UnaryExpression) -> None:
    _require_legal(op, op.input.type)
    kind, x, type_ = type(op), fl.value(op.input), convert_type(op.input.type)
    if kind in _FLOAT_UNARY:
        result = fl.intrinsic(_FLOAT_UNARY[kind], [x], type_)
    elif kind is tir.RsqrtOp:
        root = fl.intrinsic("sqrt", [x], type_)
        result = fl.emit_value(llvm.FDivOp(fl.constant(1.0, type_), root))
    elif kind is tir.NotOp:
        result = fl.emit_value(llvm.XOrOp(x, fl.constant(1, type_)))
    elif kind is tir.AbsOp and tir.is_float(op.input.type):
        result = fl.intrinsic("fabs", [x], type_)
    else:  # integer abs
        negative = fl.emit_value(llvm.ICmpOp(x, fl.constant(0, type_), _icmp("slt")))
        negated = fl.emit_value(llvm.SubOp(fl.constant(0, type_), x))
        result = fl.emit_value(VectorSelectOp(negative, negated, x))
    fl.values[op.result] = result


def _lower_cast(fl: FunctionLowering, op: tir.CastOp) -> None:
    fl.values[op.result] = fl.convert_value(fl.value(op.input), op.input.type, op.result.type)


def _lower_reinterpret(fl: FunctionLowering, op: tir.ReinterpretOp) -> None:
    x, type_ = fl.value(op.input), convert_type(op.result.type)
    # i32 <-> ui32 are one llvm type: nothing to do
    fl.values[op.result] = x if x.type == type_ else fl.emit_value(llvm.BitcastOp(x, type_))


def _lower_isnan(fl: FunctionLowering, op: tir.IsnanOp) -> None:
    x = fl.value(op.input)
    fl.values[op.result] = fl.emit_value(VectorFCmpOp(x, x, "uno"))


def _clamp(fl: FunctionLowering, x: SSAValue, source: Attribute, low: int, high: int) -> SSAValue:
    type_ = convert_type(source)
    for bound, relation in ((low, "lt"), (high, "gt")):
        limit = fl.constant(bound, type_)
        outside = _compare(fl, relation, x, limit, source)
        x = fl.emit_value(VectorSelectOp(outside, limit, x))
    return x


def _lower_saturated_cast(fl: FunctionLowering, op: tir.SaturatedCastOp) -> None:
    source = op.input.type
    if tir.is_float(source):  # fptosi/fptoui.sat: clamped to the range, NaN -> 0
        value = fl.value(op.input)
        fl.values[op.result] = fl.float_to_int(value, convert_type(source), op.result.type)
        return
    low, high = (0, 255) if _is_unsigned(op.result.type) else (-128, 127)
    clamped = _clamp(fl, fl.value(op.input), source, low, high)
    fl.values[op.result] = fl.emit_value(llvm.TruncOp(clamped, convert_type(op.result.type)))


def _lower_round_and_cast(fl: FunctionLowering, op: tir.RoundAndCastOp) -> None:
    type_ = convert_type(op.input.type)
    rounded = fl.emit_value(
        llvm.CallIntrinsicOp(f"llvm.round.{_mangle(type_)}", [fl.value(op.input)], [type_])
    )
    fl.values[op.result] = fl.float_to_int(rounded, type_, op.result.type)


def _lower_select(fl: FunctionLowering, op: tir.SelectOp) -> None:
    fl.values[op.result] = fl.emit_value(
        VectorSelectOp(fl.value(op.cond), fl.value(op.true_value), fl.value(op.false_value))
    )


def _lower_fmadd(fl: FunctionLowering, op: tir.FmaddOp) -> None:
    fl.values[op.result] = fl.emit_value(llvm.FMAOp(fl.value(op.a), fl.value(op.b), fl.value(op.c)))


PATTERNS = {
    tir.ConstOp: _lower_const,
    tir.CastOp: _lower_cast,
    tir.ReinterpretOp: _lower_reinterpret,
    tir.IsnanOp: _lower_isnan,
    tir.SaturatedCastOp: _lower_saturated_cast,
    tir.RoundAndCastOp: _lower_round_and_cast,
    tir.SelectOp: _lower_select,
    tir.FmaddOp: _lower_fmadd,
    **{op: _lower_binary for op in tir.TIR_OPS if issubclass(op, tir.BinaryExpression)},
    **{op: _lower_unary for op in tir.TIR_OPS if issubclass(op, tir.UnaryExpression)},
}
