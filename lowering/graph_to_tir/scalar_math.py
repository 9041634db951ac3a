"""The per-element math of the element-wise templates (templates.py):
erf and GELU, sigmoid, softplus, the ELU family, sign and mod, written
as tir expressions over a scalar or a vector of lanes."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import Kernel
from graphcompiler.passes.tir.expand_math import has_fma

f32 = Float32Type()


_ERF_NUMERATOR = (
    -1.333440291517718e-08,
    4.717478987004142e-06,
    0.00038035979378037155,
    0.0038323828484863043,
    0.05427819490432739,
    0.18470218777656555,
    1.128379225730896,
)
_ERF_DENOMINATOR = (
    6.341592961689457e-05,
    0.0013050143606960773,
    0.015430915169417858,
    0.11377575248479843,
    0.4970215857028961,
    1.0,
)
"""erf(x) = x * N(x^2) / D(x^2) on |x| <= _ERF_CLAMP (highest degree
first; a least-squares fit with Lawson weights, max error 1.4e-9 in f64)."""

_ERF_CLAMP = 3.92
"""erf(3.92) = 1 - 1.6e-8 rounds to 1 in f32; the rational reaches 1 there."""


def _horner(k: Kernel, x: SSAValue, coefficients: tuple[float, ...]) -> SSAValue:
    """The polynomial with `coefficients` (highest degree first) at x, one
    FMA a step where the target has FMA (erf's two polynomials were most
    of a GELU: it ran 1.5x onnxruntime's time with a multiply and an add
    a step), else a multiply and an add."""
    result = k.const(coefficients[0], x)
    for coefficient in coefficients[1:]:
        result = _multiply_add(k, result, x, k.const(coefficient, x))
    return result


def _multiply_add(k: Kernel, a: SSAValue, b: SSAValue, addend: SSAValue) -> SSAValue:
    """a * b + addend: one FMA (one rounding) where the target has FMA."""
    if has_fma(k.target) and tir.element_of(a.type) == f32:
        op = tir.FmaddOp.create(operands=[a, b, addend], result_types=[a.type])
        return k.b.insert(op).result
    return k.b.add(k.b.mul(a, b), addend)


def erf(k: Kernel, x: SSAValue) -> SSAValue:
    """erf in f32 as one rational function of the clamped x, absolute error
    < 4e-7 (relative < 3e-7 near 0): no exp and no branches, 13 FMAs and a
    division. The two-branch form it replaced (a polynomial below 1, 1 -
    exp(-x^2) * T above) was accurate to 1e-7 but cost three times the ops,
    which a GELU in a matmul's epilogue paid per element (ViT-B/16's fc1:
    0.7 ms of its 7). The result is clamped to [-1, 1] so that large |x| give
    exactly +-1; NaN stays NaN and -0 stays -0."""
    b = k.b
    clamped = b.binary(tir.MinOp, b.binary(tir.MaxOp, x, -_ERF_CLAMP), _ERF_CLAMP)
    square = b.mul(clamped, clamped)
    ratio = b.div(
        b.mul(clamped, _horner(k, square, _ERF_NUMERATOR)), _horner(k, square, _ERF_DENOMINATOR)
    )
    return b.binary(tir.MinOp, b.binary(tir.MaxOp, ratio, -1.0), 1.0)


def type_limit(op: Operation) -> str | None:
    """Why `op` cannot be compiled for its element type, or None: the erf
    polynomial is accurate to f32 only, so f64 erf (and exact gelu) would
    silently lose precision."""
    uses_erf = isinstance(op, graph.ErfOp) or (
        isinstance(op, graph.GeluOp) and op.approximate.data == "none"
    )
    if uses_erf and isinstance(op.results[0].type.element_type, Float64Type):
        return "is not compiled for f64 (its erf is accurate to f32 only): cast to f32 around it"
    return None


def gelu(k: Kernel, op: graph.GeluOp, x: SSAValue) -> SSAValue:
    """0.5 x (1 + erf(x / sqrt 2)), or with tanh(sqrt(2 / pi) (x + 0.044715 x^3))
    for erf; a product, not 0.5 x + 0.5 x * erf, whose zeros lose numpy's sign."""
    b = k.b
    if op.approximate.data == "tanh":
        cubic = _multiply_add(k, b.mul(0.044715, b.mul(x, x)), x, x)
        curve = b.unary(tir.TanhOp, b.mul(math.sqrt(2.0 / math.pi), cubic))
    else:
        curve = erf(k, b.mul(x, 1.0 / math.sqrt(2.0)))
    return b.mul(b.mul(0.5, x), b.add(1.0, curve))


def clamp(k: Kernel, op: graph.ClampOp, x: SSAValue) -> SSAValue:
    low, high = op.min_value, op.max_value
    if not tir.is_float(x.type):  # the reference clips in float, then truncates
        low, high = math.trunc(low), math.trunc(high)
    return k.b.binary(tir.MinOp, k.b.binary(tir.MaxOp, x, low), high)


def leaky_relu(k: Kernel, op: graph.LeakyReluOp, x: SSAValue) -> SSAValue:
    alpha = op.alpha_value
    return k.b.select(k.b.binary(tir.GeOp, x, 0.0), x, k.b.mul(alpha, x))


def sigmoid(k: Kernel, x: SSAValue) -> SSAValue:
    """1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|): relative
    accuracy (< 2.5e-7) also where sigmoid(x) is tiny (denormal for x < -87)."""
    b = k.b
    e = b.unary(tir.ExpOp, b.sub(0.0, b.unary(tir.AbsOp, x)))
    positive = b.div(1.0, b.add(1.0, e))
    return b.select(b.binary(tir.GeOp, x, 0.0), positive, b.mul(e, positive))


def _log1p(k: Kernel, e: SSAValue) -> SSAValue:
    """log(1 + e) for e >= 0 to full relative precision: log(u) * e / (u - 1)
    with u = 1 + e rounded (the ratio cancels u's rounding), e where u == 1."""
    b = k.b
    u = b.add(e, 1.0)
    ratio = b.div(b.mul(b.unary(tir.LogOp, u), e), b.sub(u, 1.0))
    return b.select(b.binary(tir.EqOp, u, 1.0), e, ratio)


def softplus(k: Kernel, x: SSAValue) -> SSAValue:
    """max(x, 0) + log1p(exp(-|x|)): numpy.logaddexp(0, x), NaN stays NaN."""
    b = k.b
    tail = _log1p(k, b.unary(tir.ExpOp, b.sub(0.0, b.unary(tir.AbsOp, x))))
    return b.add(b.binary(tir.MaxOp, x, 0.0), tail)


def _hard_sigmoid(k: Kernel, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    b = k.b
    return b.binary(tir.MinOp, b.binary(tir.MaxOp, b.add(b.mul(x, alpha), beta), 0.0), 1.0)


def _elu(k: Kernel, x: SSAValue, alpha: float, gamma: float = 1.0) -> SSAValue:
    """x > 0 ? x : alpha * (exp(x) - 1), times gamma (selu); NaN takes the
    exp branch and stays NaN."""
    b = k.b
    negative = b.mul(b.sub(b.unary(tir.ExpOp, x), 1.0), alpha)
    chosen = b.select(b.binary(tir.GtOp, x, 0.0), x, negative)
    return chosen if gamma == 1.0 else b.mul(chosen, gamma)


def activation(k: Kernel, op: Operation, values: list[SSAValue]) -> SSAValue:
    """The ONNX activations with float parameters."""
    x = values[0]
    match op:
        case graph.EluOp():
            return _elu(k, x, op.alpha_value)
        case graph.SeluOp():
            return _elu(k, x, op.alpha_value, op.gamma_value)
        case graph.HardSigmoidOp():
            return _hard_sigmoid(k, x, op.alpha_value, op.beta_value)
        case graph.HardSwishOp():
            return k.b.mul(x, _hard_sigmoid(k, x, 1 / 6, 0.5))
    raise AssertionError(f"no activation template for {op.name}")


def prelu(k: Kernel, op: Operation, values: list[SSAValue]) -> SSAValue:
    x, slope = values
    return k.b.select(k.b.binary(tir.LtOp, x, 0.0), k.b.mul(slope, x), x)


def is_unsigned(x: SSAValue) -> bool:
    element = tir.element_of(x.type)
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def sign(k: Kernel, x: SSAValue) -> SSAValue:
    """1 above 0, -1 below, else x + 0 (NaN stays, -0 gives 0: numpy.sign)."""
    b, zero = k.b, k.const(0, x)
    rest = b.add(x, zero) if tir.is_float(x.type) else x
    if not is_unsigned(x):
        rest = b.select(b.binary(tir.LtOp, x, zero), k.const(-1, x), rest)
    return b.select(b.binary(tir.GtOp, x, zero), k.const(1, x), rest)


def mod(k: Kernel, op: graph.ModOp, values: list[SSAValue]) -> SSAValue:
    """C's remainder (tir.fmod, or tir.mod: x % 0 = 0); numpy.mod adds the divisor where
    the signs differ and gives a zero remainder the divisor's sign."""
    b, (x, y) = k.b, values
    floats = tir.is_float(x.type)
    remainder = b.binary(tir.FModOp if floats else tir.ModOp, x, y)
    if op.truncates or is_unsigned(x):
        return remainder
    zero = k.const(0, x)
    signs_differ = b.binary(
        tir.NeOp, b.binary(tir.LtOp, remainder, zero), b.binary(tir.LtOp, y, zero)
    )
    shift = b.binary(tir.AndOp, b.binary(tir.NeOp, remainder, zero), signs_differ)
    floored = b.select(shift, b.add(remainder, y), remainder)
    if not floats:
        return floored
    signed_zero = b.select(b.binary(tir.LtOp, y, zero), k.const(-0.0, x), zero)
    return b.select(b.binary(tir.EqOp, remainder, zero), signed_zero, floored)


def shift(
    k: Kernel, op: graph.ShiftLeftOp | graph.ShiftRightOp, values: list[SSAValue]
) -> SSAValue:
    """x << y or x >> y (arithmetic for signed x); an amount outside [0, width)
    (which LLVM leaves undefined) gives the fill: 0, or -1 for a negative x
    shifted right."""
    b, (x, y) = k.b, values
    width = tir.element_of(x.type).width.data
    in_range = b.binary(tir.LtOp, y, k.const(width, y))
    if not is_unsigned(y):
        in_range = b.binary(tir.AndOp, in_range, b.binary(tir.GeOp, y, k.const(0, y)))
    right = isinstance(op, graph.ShiftRightOp)
    shifted = b.binary(tir.ShrOp if right else tir.ShlOp, x, b.select(in_range, y, k.const(0, y)))
    fill = k.const(0, x)
    if right and not is_unsigned(x):
        fill = b.select(b.binary(tir.LtOp, x, fill), k.const(-1, x), fill)
    return b.select(in_range, shifted, fill)


def bitwise_not(k: Kernel, x: SSAValue) -> SSAValue:
    """x ^ all ones (-1, or 2^width - 1 unsigned)."""
    width = tir.element_of(x.type).width.data
    return k.b.binary(tir.IntXorOp, x, k.const((1 << width) - 1 if is_unsigned(x) else -1, x))
