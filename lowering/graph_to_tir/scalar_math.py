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


_ERF_SMALL = (
    7.882497448008507e-05,
    -0.0008018855005502701,
    0.005189312156289816,
    -0.02685432881116867,
    0.11283597350120544,
    -0.3761262595653534,
    0.12837916612625122,
)
"""erf(x) / x - 1 as a polynomial in x^2 on |x| <= 1 (least squares on
Chebyshev nodes; the 1 is kept apart so that x + x * S rounds once, at the end)."""

_ERF_TAIL = (
    -4.269337239293236e-07,
    1.6718017832317855e-06,
    -3.7444333429448307e-06,
    1.4353662663779687e-05,
    -5.9529527788981795e-05,
    0.00021297208149917424,
    -0.0007331467350013554,
    0.0024659824557602406,
    -0.008001696318387985,
    0.024938203394412994,
    -0.07434733957052231,
    0.21080635488033295,
)
"""erfc(a) * exp(a^2) as a polynomial in a - 2.5 on 1 <= a <= 4 (least squares)."""


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
    """erf in f32, absolute error < 1e-7 (relative near 0): x + x * S(x^2)
    for |x| <= 1, else sign(x) * (1 - exp(-a^2) * T(a - 2.5)) with
    a = min(|x|, 4) (erf(4) rounds to 1). Both branches are computed and
    selected, so vectors need no control flow; NaN stays NaN."""
    b = k.b
    small = _multiply_add(k, x, _horner(k, b.mul(x, x), _ERF_SMALL), x)
    ax = b.unary(tir.AbsOp, x)
    a = b.binary(tir.MinOp, ax, 4.0)
    erfc = b.mul(b.unary(tir.ExpOp, b.sub(0.0, b.mul(a, a))), _horner(k, b.sub(a, 2.5), _ERF_TAIL))
    tail = b.sub(1.0, erfc)
    signed_tail = b.select(b.binary(tir.LtOp, x, 0.0), b.sub(0.0, tail), tail)
    return b.select(b.binary(tir.LeOp, ax, 1.0), small, signed_tail)


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
