"""One converter per ONNX op type: `CONVERTERS[op_type](node) -> outputs`.

A converter reads the node's inputs and attributes (see importer.Node) and
returns its outputs: graph values, or numpy arrays when the result is known
at import time (Shape, Constant). ONNX semantics the graph dialect lacks are
composed from graph ops (Gemm's alpha/beta/transposes, Mean, Celu, Mish,
the ReduceL2 family, LayerNormalization's statistics outputs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType, Signedness, TensorType
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.element_types import element_type
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.ir.narrow_floats import FORMATS

Converter = Callable[[Node], list]
f64, i1, ui8 = Float64Type(), IntegerType(1), IntegerType(8, Signedness.UNSIGNED)
CONVERTERS: dict[str, Converter] = {}


def converter(*op_types: str, domain: str = "") -> Callable[[Converter], Converter]:
    """Register a converter of `op_types` (of ONNX's default operator set,
    or of `domain`: keyed `domain:op_type`)."""

    def register(function: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[f"{domain}:{op_type}" if domain else op_type] = function
        return function

    return register


def _retype(type_: TensorType, shape: Sequence[int]) -> TensorType:
    return TensorType(type_.element_type, list(shape))


def reshape(node: Node, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    if list(value.type.get_shape()) == list(shape):
        return value
    return node.make("reshape", [value], _retype(value.type, shape))


def _is_float(value: SSAValue) -> bool:
    return graph.is_float(value.type.element_type)


def in_f32(node: Node, x: SSAValue) -> tuple[SSAValue, Callable[[SSAValue], SSAValue]]:
    """x in f32 where it is f16 or bf16, whose squares overflow from 256 on
    (onnxruntime computes these in f32), and what casts a result back."""
    element = x.type.element_type
    if graph.is_float(element) and element.bitwidth < 32:
        return cast(node, x, Float32Type()), lambda value: cast(node, value, element)
    return x, lambda value: value


# --- element-wise ------------------------------------------------------------------

_UNARY = {
    "Relu": "relu", "Abs": "abs", "Neg": "neg", "Sigmoid": "sigmoid", "Tanh": "tanh",
    "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Erf": "erf", "Reciprocal": "reciprocal",
    "Not": "logical_not", "Softplus": "softplus", "HardSwish": "hard_swish",
}  # fmt: skip

_BINARY = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div",
    "Greater": "greater", "Less": "less", "Equal": "equal",
    "GreaterOrEqual": "greater_equal", "LessOrEqual": "less_equal",
    "And": "logical_and", "Or": "logical_or", "Xor": "logical_xor", "PRelu": "prelu",
}  # fmt: skip


@converter(*_UNARY)
def _unary(node: Node) -> list:
    return [node.make(_UNARY[node.op_type], [node.value(0)])]


@converter(*_BINARY)
def _binary(node: Node) -> list:
    return [node.make(_BINARY[node.op_type], [node.value(0), node.value(1)])]


@converter("Pow")
def _pow(node: Node) -> list:
    """An integer base is raised in f64 and converted back (as onnxruntime
    does); an integer exponent's result is a whole number, rounded first."""
    base, exponent = node.value(0), node.value(1)
    element = base.type.element_type
    if graph.is_float(element):
        return [node.make("pow", [base, cast(node, exponent, element)])]
    integral = not graph.is_float(exponent.type.element_type)
    power = node.make("pow", [cast(node, base, f64), cast(node, exponent, f64)])
    return [cast(node, node.make("round", [power]) if integral else power, element)]


def cast(node: Node, value: SSAValue, to) -> SSAValue:
    if value.type.element_type == to:
        return value
    return node.make("cast", [value], TensorType(to, value.type.get_shape()))


@converter("Cast", "CastLike")
def _cast(node: Node) -> list:
    """graph.cast rounds to a float8 without saturating: `saturate` (the
    default) clamps to its largest finite value first (NaN stays NaN)."""
    saturate = node.require_attr("saturate", [0, 1], 1)
    if node.op_type == "Cast":
        to = element_type(node.attr("to"), f"node '{node.label}' ({node.op_type})")
    else:
        to = node.value(1).type.element_type
    x = node.value(0)
    if saturate and str(to) in FORMATS and x.type.element_type != to:
        x = saturated(node, x, FORMATS[str(to)].max_value)
    return [cast(node, x, to)]


@converter("BitCast")
def _bitcast(node: Node) -> list:
    to = element_type(node.attr("to"), f"node '{node.label}' (BitCast)")
    x = node.value(0)
    return [node.make("bitcast", [x], TensorType(to, x.type.get_shape()))]


def saturated(node: Node, x: SSAValue, limit: float) -> SSAValue:
    """x clamped to [-limit, limit], in x's float type (f32 for an integer x)."""
    if not graph.is_float(x.type.element_type) or graph.is_storage_only(x.type.element_type):
        x = cast(node, x, Float32Type())
    return node.make("clamp", [x], min=-limit, max=limit)


@converter("Identity", "Dropout")
def _identity(node: Node) -> list:
    held = node.importer.containers.get(node.proto.input[0])
    if held is not None and node.op_type == "Identity":  # a sequence or an optional: itself
        return [held]
    x = node.value(0)
    if node.op_type != "Dropout":
        return [x]
    node.attr("seed")
    training = node.has_input(2) and node.constant(2, "training_mode").any()
    if training and not (node.has_input(1) and not node.constant(1, "ratio").any()):
        raise node.error("training_mode is not supported with a ratio above 0 (random drops)")
    return [x, np.ones(x.type.get_shape(), np.bool_)]  # every element kept


def _chain(node: Node, name: str) -> SSAValue:
    """Variadic `name` over all inputs, left to right."""
    values = node.values()
    result = values[0]
    for value in values[1:]:
        result = node.make(name, [result, value])
    return result


_VARIADIC = {"Sum": "add", "Max": "maximum", "Min": "minimum"}


@converter(*_VARIADIC)
def _variadic(node: Node) -> list:
    return [_chain(node, _VARIADIC[node.op_type])]


@converter("Mean")
def _mean(node: Node) -> list:
    total = _chain(node, "add")
    return [node.make("div", [total, node.scalar(len(node.values()), total)])]


def _select(node: Node, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.make("select", [cond, a, b])


@converter("Where")
def _where(node: Node) -> list:
    return [_select(node, node.value(0), node.value(1), node.value(2))]


@converter("IsNaN")
def _is_nan(node: Node) -> list:
    x = node.value(0)
    return [node.make("not_equal", [x, x])]


@converter("IsInf")
def _is_inf(node: Node) -> list:
    x = node.value(0)
    positive = node.make("equal", [x, node.scalar(math.inf, x)])
    negative = node.make("equal", [x, node.scalar(-math.inf, x)])
    detect = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    if detect == (1, 1):
        return [node.make("logical_or", [positive, negative])]
    if detect == (1, 0):
        return [positive]
    if detect == (0, 1):
        return [negative]
    return [np.zeros(x.type.get_shape(), np.bool_)]


@converter("Clip")
def _clip(node: Node) -> list:
    """min(max(x, low), high) as numpy.clip: bounds of any value and type
    (also given at run time), the upper one winning if they cross."""
    result = node.value(0)
    if node.has_input(1):
        result = node.make("maximum", [result, node.value(1)])
    if node.has_input(2):
        result = node.make("minimum", [result, node.value(2)])
    return [result]


# --- activations -------------------------------------------------------------------


def _float_input(node: Node) -> SSAValue:
    x = node.value(0)
    if not _is_float(x):
        raise node.error(
            f"element type {x.type.element_type} is not supported (floating point only)"
        )
    return x


def _linear(node: Node, x: SSAValue, scale: float, offset: float = 0.0) -> SSAValue:
    """scale * x + offset (steps that are identities skipped)."""
    if scale != 1.0:
        x = node.make("mul", [x, node.scalar(scale, x)])
    if offset != 0.0:
        x = node.make("add", [x, node.scalar(offset, x)])
    return x


@converter("LeakyRelu")
def _leaky_relu(node: Node) -> list:
    return [node.make("leaky_relu", [_float_input(node)], alpha=float(node.attr("alpha", 0.01)))]


@converter("Gelu")
def _gelu(node: Node) -> list:
    approximate = node.require_attr("approximate", ["none", "tanh"], "none")
    return [node.make("gelu", [_float_input(node)], approximate=approximate)]


def _positive_or(node: Node, x: SSAValue, negative: SSAValue) -> SSAValue:
    """x where x > 0, else `negative`."""
    return _select(node, node.make("greater", [x, node.scalar(0.0, x)]), x, negative)


@converter("Elu", "Selu", "HardSigmoid")
def _with_parameters(node: Node) -> list:
    """Activations whose ONNX attributes are the graph op's properties."""
    name = {"Elu": "elu", "Selu": "selu", "HardSigmoid": "hard_sigmoid"}[node.op_type]
    properties = graph.OPS_BY_NAME[name].get_irdl_definition().properties
    given = {p: float(node.attr(p)) for p in properties if p in node.attributes}
    return [node.make(name, [_float_input(node)], **given)]


@converter("Celu")
def _celu(node: Node) -> list:
    x, alpha = _float_input(node), float(node.attr("alpha", 1.0))
    negative = _linear(node, node.make("exp", [_linear(node, x, 1.0 / alpha)]), alpha, -alpha)
    return [_positive_or(node, x, negative)]


@converter("ThresholdedRelu")
def _thresholded_relu(node: Node) -> list:
    x, alpha = _float_input(node), float(node.attr("alpha", 1.0))
    above = node.make("greater", [x, node.scalar(alpha, x)])
    return [_select(node, above, x, node.scalar(0.0, x))]


@converter("Swish")
def _swish(node: Node) -> list:
    x = _float_input(node)
    gate = node.make("sigmoid", [_linear(node, x, float(node.attr("alpha", 1.0)))])
    return [node.make("mul", [x, gate])]


@converter("Mish")
def _mish(node: Node) -> list:
    x = _float_input(node)
    return [node.make("mul", [x, node.make("tanh", [node.make("softplus", [x])])])]


@converter("Softsign")
def _softsign(node: Node) -> list:
    x = _float_input(node)
    return [node.make("div", [x, node.make("add", [node.make("abs", [x]), node.scalar(1.0, x)])])]


# --- matrix products -----------------------------------------------------------


@converter("MatMul")
def _matmul(node: Node) -> list:
    return [numpy_matmul(node, node.value(0), node.value(1))]


def numpy_matmul(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    """a @ b as numpy.matmul (and ONNX's MatMul) takes vectors and batches."""
    a_shape, b_shape = list(a.type.get_shape()), list(b.type.get_shape())
    if len(a_shape) == 1:  # numpy: a vector is a row, dropped afterwards
        a = reshape(node, a, [1, *a_shape])
    if len(b_shape) == 1:
        b = reshape(node, b, [*b_shape, 1])
    result = node.make("matmul", [a, b])
    shape = list(result.type.get_shape())
    if len(b_shape) == 1:
        del shape[-1]
    if len(a_shape) == 1:
        del shape[-1 if len(b_shape) == 1 else -2]
    return reshape(node, result, shape)


@converter("Gemm")
def _gemm(node: Node) -> list:
    a, b = node.value(0), node.value(1)
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    result = node.make(
        "matmul",
        [a, b],
        transpose_a=bool(node.attr("transA", 0)),
        transpose_b=bool(node.attr("transB", 0)),
    )
    result = _linear(node, result, alpha)
    if node.has_input(2) and beta != 0.0:
        result = node.make("add", [result, _linear(node, node.value(2), beta)])
    return [result]


# --- reductions and normalizations ----------------------------------------------


def _reduce_axes(node: Node, rank: int) -> list[int] | None:
    """The axes to reduce (normalized), [] for none, or None for all."""
    axes = node.ints("axes", 1)
    noop = node.attr("noop_with_empty_axes", 0)
    if not axes:
        return [] if noop else None
    return sorted(a % rank if -rank <= a < rank else _bad_axis(node, a, rank) for a in axes)


def _bad_axis(node: Node, axis: int, rank: int) -> int:
    raise node.error(f"axis {axis} is out of range for rank {rank}")


_REDUCE = {
    "ReduceSum": ("reduce_sum", None, None),
    "ReduceMean": ("reduce_mean", None, None),
    "ReduceMax": ("reduce_max", None, None),
    "ReduceMin": ("reduce_min", None, None),
    "ReduceProd": ("reduce_prod", None, None),
    "ReduceL1": ("reduce_sum", "abs", None),
    "ReduceL2": ("reduce_sum", "square", "sqrt"),
    "ReduceSumSquare": ("reduce_sum", "square", None),
    "ReduceLogSum": ("reduce_sum", None, "log"),
    "ReduceLogSumExp": ("reduce_sum", "exp", "log"),
}
"""ONNX reduction -> (graph reduction, op before it, op after it)."""


@converter(*_REDUCE)
def _reduce(node: Node) -> list:
    reduction, before, after = _REDUCE[node.op_type]
    x = node.value(0)
    axes = _reduce_axes(node, len(x.type.get_shape()))
    keep_dims = bool(node.attr("keepdims", 1))
    if node.op_type == "ReduceLogSumExp" and axes != [] and graph.is_float(x.type.element_type):
        return [_log_sum_exp(node, x, axes or list(range(len(x.type.get_shape()))), keep_dims)]
    element = x.type.element_type
    if graph.is_float(element) and element.bitwidth < 32 and (before == "square" or after):
        x = cast(node, x, Float32Type())  # f16 squares, sums before a log: in f32, as onnxruntime
    elif element != i1 and not graph.is_float(element):
        if reduction == "reduce_mean" or after or before == "exp":  # in f64, truncated back
            x = cast(node, x, Float64Type())
    if before:  # also with no axes: onnx's reference and onnxruntime take |x| for ReduceL2
        x = node.make(before, [x])
    if axes == []:
        result = x
    elif x.type.element_type == i1 and reduction in ("reduce_max", "reduce_min"):  # any, all
        as_bytes = node.make(reduction, [cast(node, x, ui8)], axes=axes or [], keep_dims=keep_dims)
        result = cast(node, as_bytes, i1)
    else:
        result = node.make(reduction, [x], axes=axes or [], keep_dims=keep_dims)
    if after:
        result = node.make(after, [result])
    return [cast(node, result, element)]


def _log_sum_exp(node: Node, x: SSAValue, axes: list[int], keep_dims: bool) -> SSAValue:
    """log(sum(exp(x - m))) + m with m the (finite) maximum, so that large
    values do not overflow exp; a row of -inf stays -inf, NaN stays NaN."""
    peak = node.make("reduce_max", [x], axes=axes, keep_dims=True)
    finite = node.make("equal", [node.make("sub", [peak, peak]), node.scalar(0.0, peak)])
    peak = node.make("select", [finite, peak, node.scalar(0.0, peak)])
    total = node.make(
        "reduce_sum", [node.make("exp", [node.make("sub", [x, peak])])], axes=axes,
        keep_dims=keep_dims,
    )  # fmt: skip
    return node.make(
        "add", [node.make("log", [total]), reshape(node, peak, total.type.get_shape())]
    )


@converter("Softmax", "LogSoftmax")
def _softmax(node: Node) -> list:
    name = "softmax" if node.op_type == "Softmax" else "log_softmax"
    return [node.make(name, [_float_input(node)], axis=int(node.attr("axis", -1)))]


def _broadcast(node: Node, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    if list(value.type.get_shape()) == list(shape):
        return value
    return node.make("broadcast_to", [value], _retype(value.type, shape))


def _normalized_shape(node: Node, x: SSAValue) -> tuple[int, list[int]]:
    shape = x.type.get_shape()
    axis = int(node.attr("axis", -1))
    if not -len(shape) <= axis < len(shape):
        raise node.error(f"axis {axis} is out of range for rank {len(shape)}")
    return axis % len(shape), list(shape[axis:])


def stashed(node: Node, value: SSAValue) -> SSAValue:
    """A normalization's operand in the type of its stage one, `stash_type`:
    1 (f32, the default) keeps it (f16 and bf16 math runs in f32 anyway),
    11 makes it f64; the caller casts the result back."""
    if _stash_type(node) == 11:
        return cast(node, value, Float64Type())
    return value


def _stash_type(node: Node) -> int:
    return node.require_attr("stash_type", [1, 11], 1)


@converter("LayerNormalization")
def _layer_norm(node: Node) -> list:
    x = _float_input(node)
    axis, parameter_shape = _normalized_shape(node, x)
    element = x.type.element_type
    x = stashed(node, x)
    parameters = [stashed(node, node.value(i)) for i in (1, 2) if node.has_input(i)]
    epsilon = float(node.attr("epsilon", 1e-5))
    if all(_broadcasts(p.type.get_shape(), parameter_shape) for p in parameters):
        scale, *bias = (_broadcast(node, p, parameter_shape) for p in parameters)
        if not bias:
            zeros = np.zeros(parameter_shape)
            bias = [node.importer.constant_value(zeros, x.type.element_type, node.label)]
        result = node.make("layer_norm", [x, scale, *bias], axis=axis, epsilon=epsilon)
    else:  # parameters with more dims than the normalized ones: onnxruntime broadcasts them
        unit, zero = (node.importer.constant_value(np.full(parameter_shape, v), x.type.element_type,
                                                   node.label) for v in (1.0, 0.0))  # fmt: skip
        result = node.make("layer_norm", [x, unit, zero], axis=axis, epsilon=epsilon)
        result = node.make("mul", [result, parameters[0]])
        if len(parameters) > 1:
            result = node.make("add", [result, parameters[1]])
    result = cast(node, result, element)
    if len(node.proto.output) == 1:
        return [result]
    # Mean and InvStdDev in stash_type's f32 (or f64), normalized dims kept as 1
    wide = cast(node, x, Float64Type() if _stash_type(node) == 11 else Float32Type())
    axes = list(range(axis, len(x.type.get_shape())))
    mean = node.make("reduce_mean", [wide], axes=axes, keep_dims=True)
    centred = node.make("square", [node.make("sub", [wide, mean])])
    variance = node.make("reduce_mean", [centred], axes=axes, keep_dims=True)
    epsilon_value = node.scalar(epsilon, variance)
    return [result, mean, node.make("rsqrt", [node.make("add", [variance, epsilon_value])])]


def _broadcasts(shape: Sequence[int], to: Sequence[int]) -> bool:
    """Does numpy broadcast `shape` to `to` (without growing `to`)?"""
    return len(shape) <= len(to) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(to), strict=False)
    )


@converter("RMSNormalization")
def _rms_norm(node: Node) -> list:
    x = _float_input(node)
    axis, parameter_shape = _normalized_shape(node, x)
    scale = stashed(node, _broadcast(node, node.value(1), parameter_shape))
    epsilon = float(node.attr("epsilon", 1e-5))
    result = node.make("rms_norm", [stashed(node, x), scale], axis=axis, epsilon=epsilon)
    return [cast(node, result, x.type.element_type)]


@converter("MeanVarianceNormalization")
def _mean_variance_normalization(node: Node) -> list:
    """(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`, in x's type
    (f16 and bf16 in f32): the schema's function body, whose f32 epsilon
    would not add to f64."""
    x, back = in_f32(node, _float_input(node))
    rank = len(x.type.get_shape())
    axes = sorted({a % rank for a in node.attr("axes", [0, 2, 3])})
    mean = node.make("reduce_mean", [x], axes=axes, keep_dims=True)
    mean_of_squares = node.make(
        "reduce_mean", [node.make("mul", [x, x])], axes=axes, keep_dims=True
    )
    variance = node.make("sub", [mean_of_squares, node.make("mul", [mean, mean])])
    deviation = node.make("add", [node.make("sqrt", [variance]), node.scalar(1e-9, x)])
    return [back(node.make("div", [node.make("sub", [x, mean]), deviation]))]


@converter("LpNormalization")
def _lp_normalization(node: Node) -> list:
    x, back = in_f32(node, _float_input(node))
    axis = _normalized_shape(node, x)[0]
    p = node.require_attr("p", [1, 2], 2)
    magnitude = node.make("abs" if p == 1 else "square", [x])
    norm = node.make("reduce_sum", [magnitude], axes=[axis], keep_dims=True)
    norm = norm if p == 1 else node.make("sqrt", [norm])
    zero = node.scalar(0.0, x)  # a zero norm gives 0, not 0 / 0
    return [
        back(_select(node, node.make("equal", [norm, zero]), zero, node.make("div", [x, norm])))
    ]


@converter("BatchNormalization")
def _batch_norm(node: Node) -> list:
    """Inference normalizes with the given statistics; training mode with
    the batch's own (mean and biased variance over all axes but the
    channels: BiT's weight standardization is exported so) and gives the
    running statistics updated by `momentum` as well."""
    momentum = float(node.attr("momentum", 0.9))
    x = _float_input(node)
    epsilon = float(node.attr("epsilon", 1e-5))
    parameters = [cast(node, node.value(i), x.type.element_type) for i in range(1, 5)]
    if not node.attr("training_mode", 0):
        return [node.make("batch_norm", [x, *parameters], epsilon=epsilon)]
    shape = x.type.get_shape()
    axes = [0, *range(2, len(shape))]
    mean = node.make("reduce_mean", [x], axes=axes, keep_dims=False)
    centered = node.make("sub", [x, reshape(node, mean, [shape[1], *[1] * (len(shape) - 2)])])
    variance = node.make(
        "reduce_mean", [node.make("square", [centered])], axes=axes, keep_dims=False
    )
    y = node.make("batch_norm", [x, *parameters[:2], mean, variance], epsilon=epsilon)
    running = [
        node.make("add", [node.make("mul", [given, node.scalar(momentum, given)]),
                          node.make("mul", [batch, node.scalar(1 - momentum, batch)])])
        for given, batch in ((parameters[2], mean), (parameters[3], variance))
    ]  # fmt: skip
    return [y, *running]


@converter("InstanceNormalization")
def _instance_norm(node: Node) -> list:
    inputs = [_float_input(node), node.value(1), node.value(2)]
    return [node.make("instance_norm", inputs, epsilon=float(node.attr("epsilon", 1e-5)))]
