"""Reference semantics of the graph dialect, in numpy: the numerical oracle.

`run(module_or_text, *arrays, entry="main")` interprets a graph function op
by op and returns one array or a tuple. Every later numerical test and
`gc-run --check-reference` compares against it, so it favours clarity over
speed. Tensors are numpy arrays of the element type's dtype; bf16 (which numpy
lacks) travels as float32 rounded to bf16 precision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import graph

Array = np.ndarray


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds tensors of `element_type` (bf16 -> float32)."""
    match element_type:
        case Float32Type() | BFloat16Type():
            return np.dtype(np.float32)
        case Float16Type():
            return np.dtype(np.float16)
        case IntegerType() if element_type.width.data == 1:
            return np.dtype(np.bool_)
        case IntegerType():
            return np.dtype(f"int{element_type.width.data}")
    raise ValueError(f"no numpy dtype for element type {element_type}")


def round_to_bf16(values: Array) -> Array:
    """Round float32 values to the nearest bf16 (ties to even), keeping NaN."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isnan(values), values, rounded.view(np.float32)).astype(np.float32)


def to_tensor(values: Any, type_: TensorType) -> Array:
    """`values` as an array of `type_`'s dtype and shape (C casting rules:
    floats truncate into integers, nonzero is true)."""
    dtype = numpy_dtype(type_.element_type)
    array = np.asarray(values)
    if dtype.kind in "iu" and array.dtype.kind == "f":
        array = np.trunc(array)
    if dtype == np.bool_:
        array = array != 0
    result = np.broadcast_to(array.astype(dtype), type_.get_shape()).copy()
    return round_to_bf16(result) if isinstance(type_.element_type, BFloat16Type) else result


def _compute_dtype(array: Array) -> Array:
    """float16 is computed in float32, like the compiled code does."""
    return array.astype(np.float32) if array.dtype == np.float16 else array


# --- op semantics -------------------------------------------------------------


def _erf(x: Array) -> Array:
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _gelu(op: graph.GeluOp, x: Array) -> Array:
    if op.approximate.data == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1.0 + np.tanh(inner))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _divide(lhs: Array, rhs: Array) -> Array:
    if lhs.dtype.kind in "iub":
        # C semantics: truncate toward zero; division by zero gives 0 here.
        quotient = np.abs(lhs) // np.where(rhs == 0, 1, np.abs(rhs))
        return np.where(rhs == 0, 0, np.sign(lhs) * np.sign(rhs) * quotient)
    return lhs / rhs


def _matmul(op: graph.MatmulOp, a: Array, b: Array) -> Array:
    if graph.bool_value(op.properties, "transpose_a"):
        a = np.swapaxes(a, -1, -2)
    if graph.bool_value(op.properties, "transpose_b"):
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


def _reduction(numpy_reduce: Callable[..., Array]) -> Callable[[graph.ReduceOp, Array], Array]:
    def reduce(op: graph.ReduceOp, x: Array) -> Array:
        properties = op.with_defaults(op.properties)
        axes = tuple(graph.reduced_axes(properties, x.ndim))
        return numpy_reduce(x, axis=axes, keepdims=graph.bool_value(properties, "keep_dims"))

    return reduce


def _axis(op: Operation, rank: int) -> int:
    return graph.normalize_axis(graph.int_value(op.with_defaults(op.properties), "axis"), rank)


def _log_softmax(op: Operation, x: Array) -> Array:
    axis = _axis(op, x.ndim)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _softmax(op: Operation, x: Array) -> Array:
    axis = _axis(op, x.ndim)
    exponentials = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)


def _normalize(x: Array, axes: tuple[int, ...], epsilon: float) -> Array:
    mean = np.mean(x, axis=axes, keepdims=True)
    variance = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon)


def _epsilon(op: Operation) -> float:
    return graph.float_value(op.with_defaults(op.properties), "epsilon")


def _layer_norm(op: graph.LayerNormOp, x: Array, gamma: Array, beta: Array) -> Array:
    axes = tuple(range(_axis(op, x.ndim), x.ndim))
    return _normalize(x, axes, _epsilon(op)) * gamma + beta


def _batch_norm(op: graph.BatchNormOp, x: Array, *parameters: Array) -> Array:
    scale, bias, mean, var = (p.reshape([-1] + [1] * (x.ndim - 2)) for p in parameters)
    return (x - mean) / np.sqrt(var + _epsilon(op)) * scale + bias


def _slice(op: graph.SliceOp, x: Array) -> Array:
    ranges = graph.slice_ranges(op.properties, x.shape)
    return x[tuple(slice(r.start, r.stop, r.step) for r in ranges)]


def _constant(op: graph.ConstantOp) -> Array:
    values, shape = np.array(op.value.get_values()), op.value.type.get_shape()
    # A splat holds one value for the whole tensor.
    return to_tensor(
        values.reshape(shape) if values.size == math.prod(shape) else values, op.value.type
    )


def _windows(
    x: Array, kernel: list[int], properties, dilations: list[int], pad_value: float
) -> Array:
    """[N, C, OH, OW, KH, KW] views of the padded NCHW input."""
    strides = graph.int_list(properties, "strides") or [1, 1]
    top, left, bottom, right = graph.int_list(properties, "padding") or [0, 0, 0, 0]
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=pad_value)
    extent = [dilations[d] * (kernel[d] - 1) + 1 for d in range(2)]
    windows = np.lib.stride_tricks.sliding_window_view(padded, extent, axis=(2, 3))
    return windows[:, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]]


def _conv2d(op: graph.Conv2dOp, x: Array, weight: Array) -> Array:
    properties = op.with_defaults(op.properties)
    groups = graph.int_value(properties, "groups")
    dilations = graph.int_list(properties, "dilations")
    windows = _windows(x, list(weight.shape[2:]), properties, dilations, 0)
    n, c, oh, ow, kh, kw = windows.shape
    grouped = windows.reshape(n, groups, c // groups, oh, ow, kh, kw)
    grouped_weight = weight.reshape(groups, weight.shape[0] // groups, c // groups, kh, kw)
    out = np.einsum("ngchwij,gocij->ngohw", grouped, grouped_weight)
    return out.reshape(n, weight.shape[0], oh, ow)


def _kernel(op: Operation) -> list[int]:
    return graph.int_list(op.properties, "kernel")


def _max_pool2d(op: graph.MaxPool2dOp, x: Array) -> Array:
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    windows = _windows(x, _kernel(op), op.with_defaults(op.properties), [1, 1], lowest)
    return windows.max(axis=(-2, -1))


def _avg_pool2d(op: graph.AvgPool2dOp, x: Array) -> Array:
    properties = op.with_defaults(op.properties)
    sums = _windows(x, _kernel(op), properties, [1, 1], 0).sum(axis=(-2, -1))
    inside = np.ones((1, 1, *x.shape[2:]), dtype=x.dtype)
    counts = _windows(inside, _kernel(op), properties, [1, 1], 0).sum(axis=(-2, -1))
    return sums / counts


def _cast(op: graph.CastOp, x: Array) -> Array:
    return to_tensor(x, op.result.type)


def _float(op: Operation, name: str) -> float:
    return graph.float_value(op.with_defaults(op.properties), name)


IMPLEMENTATIONS: dict[type[Operation], Callable[..., Array]] = {
    graph.ReluOp: lambda op, x: np.maximum(x, 0).astype(x.dtype),
    graph.SigmoidOp: lambda op, x: 1.0 / (1.0 + np.exp(-x)),
    graph.TanhOp: lambda op, x: np.tanh(x),
    graph.ExpOp: lambda op, x: np.exp(x),
    graph.LogOp: lambda op, x: np.log(x),
    graph.SqrtOp: lambda op, x: np.sqrt(x),
    graph.RsqrtOp: lambda op, x: 1.0 / np.sqrt(x),
    graph.AbsOp: lambda op, x: np.abs(x),
    graph.NegOp: lambda op, x: -x,
    graph.ErfOp: lambda op, x: _erf(x),
    graph.ReciprocalOp: lambda op, x: 1.0 / x,
    graph.SquareOp: lambda op, x: x * x,
    graph.GeluOp: _gelu,
    graph.LeakyReluOp: lambda op, x: np.where(x >= 0, x, _float(op, "alpha") * x),
    graph.ClampOp: lambda op, x: np.clip(x, _float(op, "min"), _float(op, "max")),
    graph.CastOp: _cast,
    graph.AddOp: lambda op, a, b: a + b,
    graph.SubOp: lambda op, a, b: a - b,
    graph.MulOp: lambda op, a, b: a * b,
    graph.DivOp: lambda op, a, b: _divide(a, b),
    graph.PowOp: lambda op, a, b: np.power(a, b),
    graph.MaximumOp: lambda op, a, b: np.maximum(a, b),
    graph.MinimumOp: lambda op, a, b: np.minimum(a, b),
    graph.GreaterOp: lambda op, a, b: a > b,
    graph.LessOp: lambda op, a, b: a < b,
    graph.EqualOp: lambda op, a, b: a == b,
    graph.SelectOp: lambda op, c, a, b: np.where(c, a, b),
    graph.MatmulOp: _matmul,
    graph.ReduceSumOp: _reduction(np.sum),
    graph.ReduceMeanOp: _reduction(np.mean),
    graph.ReduceMaxOp: _reduction(np.max),
    graph.ReduceMinOp: _reduction(np.min),
    graph.ReduceProdOp: _reduction(np.prod),
    graph.SoftmaxOp: _softmax,
    graph.LogSoftmaxOp: _log_softmax,
    graph.LayerNormOp: _layer_norm,
    graph.BatchNormOp: _batch_norm,
    graph.TransposeOp: lambda op, x: np.transpose(x, graph.int_list(op.properties, "perm")),
    graph.ReshapeOp: lambda op, x: x.reshape(op.result.type.get_shape()),
    graph.BroadcastToOp: lambda op, x: np.broadcast_to(x, op.result.type.get_shape()),
    graph.ConcatOp: lambda op, *xs: np.concatenate(
        xs, axis=graph.normalize_axis(graph.int_value(op.properties, "axis"), xs[0].ndim)
    ),
    graph.SliceOp: _slice,
    graph.ConstantOp: _constant,
    graph.Conv2dOp: _conv2d,
    graph.MaxPool2dOp: _max_pool2d,
    graph.AvgPool2dOp: _avg_pool2d,
}


# --- the interpreter ------------------------------------------------------------


def _find_function(module: ModuleOp, entry: str) -> func.FuncOp:
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if entry not in functions:
        available = ", ".join(sorted(functions)) or "none"
        raise ValueError(f"no function @{entry} in the module (functions: {available})")
    return functions[entry]


def check_arguments(function: func.FuncOp, arrays: tuple[Any, ...]) -> list[Array]:
    """Arrays for the function's inputs; a ValueError names a bad argument."""
    inputs = function.function_type.inputs.data
    if len(arrays) != len(inputs):
        raise ValueError(
            f"@{function.sym_name.data} takes {len(inputs)} arguments, got {len(arrays)}"
        )
    checked = []
    for index, (array, type_) in enumerate(zip(arrays, inputs, strict=True)):
        name = f"argument #{index} of @{function.sym_name.data}"
        array = np.asarray(array)
        expected_dtype = numpy_dtype(type_.element_type)
        if array.dtype != expected_dtype:
            raise ValueError(f"{name} has dtype {array.dtype}, expected {expected_dtype}")
        if array.shape != tuple(type_.get_shape()):
            raise ValueError(
                f"{name} has shape {list(array.shape)}, expected {list(type_.get_shape())}"
            )
        checked.append(array)
    return checked


def _interpret(module: ModuleOp, function: func.FuncOp, arrays: list[Array]) -> list[Array]:
    return _run_block(module, function.body.block, arrays, f"@{function.sym_name.data}")


def _run_block(module: ModuleOp, block, arrays: list[Array], where: str) -> list[Array]:
    """Run a function body or a graph.fused region; the terminator's operands are the results."""
    values: dict[SSAValue, Array] = dict(zip(block.args, arrays, strict=True))
    for op in block.ops:
        operands = [values[operand] for operand in op.operands]
        if isinstance(op, func.ReturnOp | graph.YieldOp):
            return operands
        if isinstance(op, func.CallOp):
            callee = _find_function(module, op.callee.root_reference.data)
            results = _interpret(module, callee, operands)
        elif isinstance(op, graph.FusedOp):
            results = _run_block(module, op.body.block, operands, "graph.fused")
        elif type(op) in IMPLEMENTATIONS:
            with np.errstate(all="ignore"):
                computed = IMPLEMENTATIONS[type(op)](op, *map(_compute_dtype, operands))
            results = [to_tensor(computed, op.results[0].type)]
        else:
            raise ValueError(f"the reference interpreter does not know '{op.name}'")
        values.update(zip(op.results, results, strict=True))
    raise ValueError(f"{where} has no terminator")


def run(module_or_text: ModuleOp | str, *arrays: Any, entry: str = "main") -> Array | tuple:
    """Run graph function `entry` on numpy arrays; one result is returned as
    an array, several as a tuple."""
    if isinstance(module_or_text, str):
        import graphcompiler

        module = graphcompiler.parse(module_or_text)
    else:
        module = module_or_text
    function = _find_function(module, entry)
    results = _interpret(module, function, check_arguments(function, arrays))
    return results[0] if len(results) == 1 else tuple(results)
