"""Converters of ONNX's Tan, inverse trigonometric (Atan, Asin, Acos) and
hyperbolic (Sinh, Cosh, Asinh, Acosh, Atanh) ops, composed from graph ops
(registered in `ops.CONVERTERS`); graph-fuse makes each one kernel.

The formulas avoid the cancellations of the textbook ones, so the results
are within a few ulp of numpy's in float32 over the whole domain:
- atan, asin, acos: Cephes' float32 minimax polynomials after argument
  reduction (atan: to |x| <= tan(pi/8); asin and acos: to |x| <= 0.5, by
  asin(x) = pi/2 - 2 asin(sqrt((1 - x) / 2)));
- sinh near 0 (|x| < 1): its Taylor series to x^11; elsewhere from exp,
  which is taken at |x| - 88 beyond 88 so that sinh and cosh overflow
  where numpy's do, not at exp's own limit;
- asinh, acosh, atanh: log1p of a rewritten argument, log1p(t) computed as
  log(u) * t / (u - 1) with u = 1 + t (Goldberg), exact where u rounds to 1;
  asinh and acosh of huge x (where x^2 overflows) are log(x) + log(2).
The polynomials are float32's: float64 inputs get float32 accuracy;
float16 and bfloat16 are computed in float32 and rounded once.
NaN propagates and the infinities and ±0 give numpy's results.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, cast, converter

_HUGE = 2.0**28
"""Beyond this, sqrt(x^2 ± 1) is x in float32 (and x^2 may overflow)."""

_EXP_LIMIT = 88.0
"""exp overflows float32 just past 88.72; exp(|x| - 88) * e^88 / 2 goes on to sinh's own limit."""


class _Formula:
    """Graph ops on values of x's element type, named as in the formulas."""

    def __init__(self, node: Node, x: SSAValue):
        self.node, self.element = node, x.type.element_type
        narrow = self.element.bitwidth < 32  # f16 and bf16 constants would overflow (2^28, e^88)
        self.x = cast(node, x, Float32Type()) if narrow else x

    def result(self, value: SSAValue) -> SSAValue:
        """value in x's own element type (f16 and bf16 are computed in f32)."""
        return cast(self.node, value, self.element)

    def c(self, value: float) -> SSAValue:
        return self.node.scalar(value, self.x)

    def op(self, name: str, *operands: SSAValue) -> SSAValue:
        return self.node.make(name, list(operands))

    def add(self, a, b):
        return self.op("add", a, b)

    def sub(self, a, b):
        return self.op("sub", a, b)

    def mul(self, a, b):
        return self.op("mul", a, b)

    def div(self, a, b):
        return self.op("div", a, b)

    def select(self, condition, a, b):
        return self.op("select", condition, a, b)

    def polynomial(self, z: SSAValue, coefficients: list[float]) -> SSAValue:
        """c0 * z^n + c1 * z^(n-1) + ... + cn, by Horner's rule."""
        total = self.c(coefficients[0])
        for coefficient in coefficients[1:]:
            total = self.add(self.mul(total, z), self.c(coefficient))
        return total

    def with_sign_of_x(self, magnitude: SSAValue) -> SSAValue:
        """magnitude with x's sign (odd functions computed on |x|); ±0 is
        itself, as an odd function gives."""
        negative = self.op("less", self.x, self.c(0.0))
        signed = self.select(negative, self.op("neg", magnitude), magnitude)
        return self.select(self.op("equal", self.x, self.c(0.0)), self.x, signed)

    def log1p(self, t: SSAValue) -> SSAValue:
        u = self.add(self.c(1.0), t)
        ratio = self.div(t, self.sub(u, self.c(1.0)))
        return self.select(self.op("equal", u, self.c(1.0)), t, self.mul(self.op("log", u), ratio))

    def half_exp_pair(self, a: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(e^a / 2, e^-a / 2) for a >= 0, e^a / 2 finite up to a = 88 + 88.7."""
        e = self.op("exp", self.op("minimum", a, self.c(_EXP_LIMIT)))
        beyond = self.mul(
            self.op("exp", self.sub(a, self.c(_EXP_LIMIT))), self.c(math.exp(_EXP_LIMIT) / 2)
        )
        grows = self.select(
            self.op("greater", a, self.c(_EXP_LIMIT)), beyond, self.mul(e, self.c(0.5))
        )
        return grows, self.div(self.c(0.5), e)

    def asin_core(self, s: SSAValue) -> SSAValue:
        """asin(s) for |s| <= 0.5 (Cephes asinf)."""
        z = self.mul(s, s)
        p = self.polynomial(
            z, [4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2, 1.6666752422e-1]
        )
        return self.add(self.mul(self.mul(p, z), s), s)


def _formula(node: Node) -> tuple[_Formula, SSAValue]:
    f = _Formula(node, _float_input(node))
    return f, f.x


@converter("Tan")
def _tan(node: Node) -> list:
    f, x = _formula(node)
    return [f.result(f.div(f.op("sin", x), f.op("cos", x)))]


@converter("Atan")
def _atan(node: Node) -> list:
    """Cephes atanf: |x| reduced to [0, tan(pi/8)] by pi/2 - atan(1/|x|)
    above tan(3pi/8) and pi/4 + atan((|x| - 1) / (|x| + 1)) above tan(pi/8)."""
    f, x = _formula(node)
    a = f.op("abs", x)
    large = f.op("greater", a, f.c(2.414213562373095))
    middle = f.op("greater", a, f.c(0.4142135623730950))
    reduced = f.select(
        large,
        f.div(f.c(-1.0), a),
        f.select(middle, f.div(f.sub(a, f.c(1.0)), f.add(a, f.c(1.0))), a),
    )
    base = f.select(large, f.c(math.pi / 2), f.select(middle, f.c(math.pi / 4), f.c(0.0)))
    z = f.mul(reduced, reduced)
    p = f.polynomial(z, [8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1])
    return [f.result(f.with_sign_of_x(f.add(base, f.add(f.mul(f.mul(p, z), reduced), reduced))))]


@converter("Asin")
def _asin(node: Node) -> list:
    """|x| > 0.5: pi/2 - 2 asin(sqrt((1 - |x|) / 2)); |x| > 1 is NaN (sqrt)."""
    f, x = _formula(node)
    a = f.op("abs", x)
    far = f.op("greater", a, f.c(0.5))
    y = f.asin_core(f.select(far, f.op("sqrt", f.mul(f.sub(f.c(1.0), a), f.c(0.5))), a))
    unfolded = f.sub(f.c(math.pi / 2), f.mul(f.c(2.0), y))
    return [f.result(f.with_sign_of_x(f.select(far, unfolded, y)))]


@converter("Acos")
def _acos(node: Node) -> list:
    """Cephes acosf: 2 asin(sqrt((1 - x) / 2)) above 0.5, pi minus that of
    -x below -0.5, pi/2 - asin(x) between: no cancellation near ±1."""
    f, x = _formula(node)
    a = f.op("abs", x)
    far = f.op("greater", a, f.c(0.5))
    y = f.asin_core(f.select(far, f.op("sqrt", f.mul(f.sub(f.c(1.0), a), f.c(0.5))), x))
    twice = f.mul(f.c(2.0), y)
    outer = f.select(f.op("less", x, f.c(0.0)), f.sub(f.c(math.pi), twice), twice)
    return [f.result(f.select(far, outer, f.sub(f.c(math.pi / 2), y)))]


@converter("Sinh")
def _sinh(node: Node) -> list:
    f, x = _formula(node)
    a = f.op("abs", x)
    z = f.mul(x, x)
    series = f.mul(  # x (1 + x^2/3! + ... + x^10/11!)
        x, f.polynomial(z, [1 / math.factorial(n) for n in (11, 9, 7, 5, 3, 1)])
    )
    grows, shrinks = f.half_exp_pair(a)
    return [
        f.result(
            f.select(f.op("less", a, f.c(1.0)), series, f.with_sign_of_x(f.sub(grows, shrinks)))
        )
    ]


@converter("Cosh")
def _cosh(node: Node) -> list:
    f, x = _formula(node)
    grows, shrinks = f.half_exp_pair(f.op("abs", x))
    return [f.result(f.add(grows, shrinks))]


@converter("Asinh")
def _asinh(node: Node) -> list:
    """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))."""
    f, x = _formula(node)
    a = f.op("abs", x)
    z = f.mul(a, a)
    moderate = f.log1p(f.add(a, f.div(z, f.add(f.c(1.0), f.op("sqrt", f.add(f.c(1.0), z))))))
    huge = f.add(f.op("log", a), f.c(math.log(2)))
    return [f.result(f.with_sign_of_x(f.select(f.op("greater", a, f.c(_HUGE)), huge, moderate)))]


@converter("Acosh")
def _acosh(node: Node) -> list:
    """log1p((x - 1) + sqrt((x - 1)(x + 1))); NaN below 1."""
    f, x = _formula(node)
    below = f.sub(x, f.c(1.0))
    moderate = f.log1p(f.add(below, f.op("sqrt", f.mul(below, f.add(x, f.c(1.0))))))
    huge = f.add(f.op("log", x), f.c(math.log(2)))
    result = f.select(f.op("greater", x, f.c(_HUGE)), huge, moderate)
    return [f.result(f.select(f.op("less", x, f.c(1.0)), f.c(math.nan), result))]


@converter("Atanh")
def _atanh(node: Node) -> list:
    """sign(x) log1p(2|x| / (1 - |x|)) / 2: ±inf at ±1, NaN beyond."""
    f, x = _formula(node)
    a = f.op("abs", x)
    t = f.div(f.mul(f.c(2.0), a), f.sub(f.c(1.0), a))
    magnitude = f.mul(f.log1p(t), f.c(0.5))
    at_one = f.op("equal", a, f.c(1.0))
    return [f.result(f.with_sign_of_x(f.select(at_one, f.c(math.inf), magnitude)))]
