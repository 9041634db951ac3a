"""Reference semantics of the graph dialect, in numpy: the numerical oracle.

`run(module_or_text, *arrays, entry="main")` interprets a graph function op
by op (a graph.loop runs its step function once per row) and returns one
array or a tuple; indexing.py, normalization.py and windows.py hold the
semantics of those op families. Every later numerical test and
`gc-run --check-reference` compares against it, so it favours clarity over
speed. Tensors are numpy arrays of the element type's dtype; bf16 (which numpy
lacks) travels as float32 rounded to bf16 precision. f16 and bf16 are
computed in f32, then rounded to the result type.

Special values (the compiled code must agree; numpy, onnxruntime and
PyTorch do the same):
- NaN propagates through every arithmetic op: relu, maximum, minimum,
  clamp, sigmoid, gelu, leaky_relu, ... of NaN are NaN; a NaN in a reduced
  slice makes reduce_sum/mean/prod/max/min NaN, a NaN in a pooling window
  makes max_pool2d NaN, a NaN (or +inf, or an all -inf slice) makes the whole
  softmax/log_softmax slice NaN (x - max(x) is NaN there).
- Comparisons with NaN are false (equal(NaN, NaN) too); select picks by its
  condition only.
- float -> integer casts truncate toward zero and saturate: NaN -> 0,
  +inf and values above the range -> the type's maximum, -inf and values
  below -> its minimum (llvm.fptosi.sat / fptoui.sat); float -> i1 is
  `x != 0` (NaN is true); integer -> narrower integer wraps (two's complement).
- Integer division truncates toward zero; x / 0 is 0 and INT_MIN / -1 is
  INT_MIN (no trap); x % 0 and INT_MIN % -1 are 0.
- A reduction over an empty axis gives its identity: sum 0, prod 1, max
  -inf (integers: the type's minimum), min +inf (the maximum), mean NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph
from graphcompiler.interpreters.indexing import INDEXING
from graphcompiler.interpreters.normalization import NORMALIZATION
from graphcompiler.interpreters.windows import (  # noqa: F401 - to/from_blocked_array: API
    WINDOWED,
    from_blocked_array,
    to_blocked_array,
)
from graphcompiler.ir.diagnostics import SourceFile
from graphcompiler.ir.element_types import (
    bit_width,
    compute_dtype,
    dense_values,
    lookup,
    max_identity,
    min_identity,
    round_values,
)
from graphcompiler.ir.parsing import parse_module
from graphcompiler.ir.verifier import verify_module

Array = np.ndarray


def random_input(type_: TensorType, rng: np.random.Generator, low=-1.0, high=1.0) -> Array:
    """Random values for a tensor of `type_`: floats uniform in [low, high)
    (bf16 ones rounded to bf16), integers in -9..9 (0..9 unsigned), booleans
    half true: what gc-run --random-inputs, the fuzzer and tests feed."""
    dtype, shape = compute_dtype(type_.element_type), type_.get_shape()
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        values = rng.integers(0 if dtype.kind == "u" else -9, 10, shape).astype(dtype)
        return round_values(values, type_.element_type)  # i4, i2: wrapped into range
    return round_values(rng.uniform(low, high, shape).astype(dtype), type_.element_type)


def float_to_int(values: Array, dtype: np.dtype) -> Array:
    """Truncation toward zero, saturating: NaN -> 0, out of range -> the
    nearest limit of `dtype` (what llvm.fptosi.sat/fptoui.sat compute)."""
    info = np.iinfo(dtype)
    wide = np.trunc(np.asarray(values, dtype=np.float64))
    low, high = float(info.min), float(info.max) + 1.0  # powers of two: exact in float64
    inside = (wide >= low) & (wide < high)  # false for NaN
    result = np.where(inside, wide, 0.0).astype(dtype)
    result = np.where(wide >= high, info.max, result)
    return np.where(wide < low, info.min, result).astype(dtype)


def to_tensor(values: Any, type_: TensorType) -> Array:
    """`values` as an array of `type_`'s dtype and shape: floats convert to
    integers with `float_to_int`, to i1 as `x != 0`; integers wrap."""
    dtype = compute_dtype(type_.element_type)
    array = np.asarray(values)
    if dtype == np.bool_:
        array = array != 0
    elif dtype.kind in "iu" and array.dtype.kind == "f":  # i4, i2: truncated in i32, then wrapped
        narrow = bit_width(type_.element_type) < 8
        array = float_to_int(array, np.dtype(np.int32) if narrow else dtype)
    result = np.broadcast_to(array.astype(dtype), type_.get_shape()).copy()
    return round_values(result, type_.element_type)


def _compute_dtype(array: Array) -> Array:
    """float16 is computed in float32, like the compiled code does."""
    return array.astype(np.float32) if array.dtype == np.float16 else array


# --- op semantics -------------------------------------------------------------


def _erf(x: Array) -> Array:
    """math.erf per element (NaN -> NaN; exact to double precision)."""
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _gelu(op: graph.GeluOp, x: Array) -> Array:
    if op.approximate.data == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
        return 0.5 * x * (1.0 + np.tanh(inner))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _softplus(x: Array) -> Array:
    """log(1 + exp(x)) without overflow: numpy.logaddexp(0, x)."""
    return np.logaddexp(np.zeros_like(x), x)


def _hard_sigmoid(x: Array, alpha: float, beta: float) -> Array:
    """max(0, min(1, alpha * x + beta)); NaN stays NaN (numpy.clip)."""
    return np.clip(np.asarray(alpha, x.dtype) * x + np.asarray(beta, x.dtype), 0, 1)


def _elu(op: graph.EluOp, x: Array) -> Array:
    alpha = np.asarray(op.alpha_value, x.dtype)
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


def _selu(op: graph.SeluOp, x: Array) -> Array:
    alpha, gamma = (np.asarray(v, x.dtype) for v in (op.alpha_value, op.gamma_value))
    return gamma * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def _divide(lhs: Array, rhs: Array) -> Array:
    """Floats: IEEE division. Integers: truncation toward zero, never a trap:
    x / 0 is 0 and INT_MIN / -1 wraps to INT_MIN (as onnxruntime)."""
    if lhs.dtype == np.bool_:
        return lhs & rhs  # x / 1 = x, x / 0 = 0
    if lhs.dtype.kind in "iu":
        lhs, rhs = np.broadcast_arrays(lhs, rhs)
        minus_one = rhs == -1 if lhs.dtype.kind == "i" else np.zeros(rhs.shape, bool)
        divisor = np.where((rhs == 0) | minus_one, 1, rhs).astype(lhs.dtype)
        quotient = lhs // divisor  # floor; truncation rounds toward zero instead
        inexact = (lhs - quotient * divisor) != 0
        quotient = quotient + (inexact & ((lhs < 0) != (divisor < 0))).astype(lhs.dtype)
        negated = (np.zeros_like(lhs) - lhs).astype(lhs.dtype)  # wraps for INT_MIN
        return np.where(rhs == 0, 0, np.where(minus_one, negated, quotient)).astype(lhs.dtype)
    return lhs / rhs


def _remainder(op: graph.ModOp, lhs: Array, rhs: Array) -> Array:
    """numpy.fmod, or numpy.mod; integers never trap: x % 0 and INT_MIN % -1 are 0."""
    if lhs.dtype.kind == "f":
        return np.fmod(lhs, rhs) if op.truncates else np.mod(lhs, rhs)
    lhs, rhs = np.broadcast_arrays(lhs, rhs)
    special = (rhs == 0) | ((rhs == -1) if lhs.dtype.kind == "i" else False)
    divisor = np.where(special, 1, rhs).astype(lhs.dtype)
    remainder = np.fmod(lhs, divisor) if op.truncates else np.mod(lhs, divisor)
    return np.where(special, 0, remainder).astype(lhs.dtype)


def _matmul(op: graph.MatmulOp, a: Array, b: Array) -> Array:
    if op.a_transposed:
        a = np.swapaxes(a, -1, -2)
    if op.b_transposed:
        b = np.swapaxes(b, -1, -2)
    if op.widens:
        return _integer_matmul(a.astype(np.int64), b.astype(np.int64)).astype(np.int32)
    return _integer_matmul(a, b) if a.dtype.kind in "iu" else np.matmul(a, b)


def _integer_matmul(a: Array, b: Array) -> Array:
    """np.matmul of integers, through f64 BLAS where every partial sum is an
    integer below 2^53, so exact (numpy's integer matmul has no BLAS: 7 s
    for 1024^3 in i64)."""
    if a.size and b.size:
        bound = np.abs(a.astype(np.float64)).max() * np.abs(b.astype(np.float64)).max()
        if bound * a.shape[-1] < 2.0**53:
            exact = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
            return exact.astype(np.result_type(a, b))
    return np.matmul(a, b)


def _mean(x: Array, axis: tuple[int, ...], keepdims: bool) -> Array:
    """sum / count: NaN (0 / 0) over an empty axis, as numpy, without its warning."""
    count = math.prod(x.shape[a] for a in axis)
    return np.sum(x, axis=axis, keepdims=keepdims) / count


REDUCTIONS: dict[type[Operation], Callable[..., Array]] = {
    graph.ReduceSumOp: np.sum,
    graph.ReduceProdOp: np.prod,
    graph.ReduceMeanOp: _mean,
    graph.ReduceMaxOp: lambda x, **kw: np.max(x, initial=max_identity(x.dtype), **kw),
    graph.ReduceMinOp: lambda x, **kw: np.min(x, initial=min_identity(x.dtype), **kw),
}
"""numpy's reductions with their identity over empty axes; NaN propagates."""


def _reduction(op: graph.ReduceOp, x: Array) -> Array:
    axes = tuple(op.reduced_axes(x.ndim))
    return REDUCTIONS[type(op)](x, axis=axes, keepdims=op.keeps_reduced_dims)


def _arg_extreme(op: graph.ArgReduceOp, x: Array) -> Array:
    """numpy.argmax or argmin (a NaN wins); the last of equals: the first in the flipped axis."""
    axis = op.normalized_axis(x.ndim)
    pick = np.argmax if isinstance(op, graph.ArgMaxOp) else np.argmin
    if x.shape[axis] == 0:  # then the result is empty too
        indices = np.zeros(np.delete(x.shape, axis), np.int64)
    elif op.picks_last:
        indices = x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis)
    else:
        indices = pick(x, axis=axis)
    return np.expand_dims(indices, axis) if op.keeps_reduced_dim else indices


def _shift(shift: Callable, x: Array, amount: Array) -> Array:
    """numpy's shift, with an amount outside [0, width) giving the fill (numpy
    leaves negative amounts to the C compiler)."""
    width = np.iinfo(x.dtype).bits
    in_range = (amount >= 0) & (amount < width)
    shifted = shift(x, np.where(in_range, amount, 0).astype(x.dtype))
    fill = np.where(x < 0, -1, 0) if shift is np.right_shift else 0
    return np.where(in_range, shifted, fill).astype(x.dtype)


def _running_total(op: graph.RunningOp, x: Array) -> Array:
    """numpy.cumsum (cumprod) in x's dtype, in order; exclusive: of the
    identity (0, 1) then x without its last element."""
    axis = op.normalized_axis(x.ndim)
    x = np.flip(x, axis) if op.is_reversed else x
    if op.is_exclusive:
        n = x.shape[axis]
        first = np.full(
            [min(n, 1) if d == axis else s for d, s in enumerate(x.shape)], op.IDENTITY, x.dtype
        )
        x = np.concatenate([first, np.take(x, np.arange(max(n - 1, 0)), axis)], axis)
    running = np.cumprod if isinstance(op, graph.CumProdOp) else np.cumsum
    totals = running(x, axis=axis, dtype=x.dtype)
    return np.flip(totals, axis) if op.is_reversed else totals


def _top_k_indices(op: graph.TopKIndicesOp, x: Array) -> Array:
    """The first k of a stable sort along the axis (NaN last); for the largest, the sort
    of the flipped axis, flipped back, so that equal elements stay in index order."""
    axis = op.normalized_axis(x.ndim)
    if op.wants_largest:
        flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
        order = x.shape[axis] - 1 - np.flip(flipped, axis)
    else:
        order = np.argsort(x, axis=axis, kind="stable")
    return np.take(order, np.arange(op.count), axis=axis)


def _slice(op: graph.SliceOp, x: Array) -> Array:
    ranges = op.ranges(x.shape)
    return x[tuple(slice(r.start, r.stop, r.step) for r in ranges)]


def _gather(op: graph.GatherOp, x: Array, indices: Array) -> Array:
    """numpy.take; an index outside [-n, n) reads 0."""
    axis = op.normalized_axis(x.ndim)
    n = x.shape[axis]
    indices = indices.astype(np.int64)
    if n == 0:
        return np.zeros([*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]], x.dtype)
    inside = (indices >= -n) & (indices < n)
    taken = np.take(x, np.where(inside, indices, 0), axis=axis)
    mask = inside.reshape([*[1] * axis, *indices.shape, *[1] * (x.ndim - axis - 1)])
    return np.where(mask, taken, np.zeros((), x.dtype))


def _pad(op: graph.PadOp, x: Array) -> Array:
    """A slice for the negative amounts, then numpy.pad of the positive ones."""
    amounts = op.amounts(x.ndim)
    mode = op.pad_mode
    crop = tuple(slice(-min(b, 0), x.shape[d] + min(a, 0)) for d, (b, a) in enumerate(amounts))
    grow = [(max(b, 0), max(a, 0)) for b, a in amounts]
    if mode == "constant":
        fill = to_tensor(op.fill_value, TensorType(op.result.type.element_type, []))
        return np.pad(x[crop], grow, constant_values=fill)
    return np.pad(x[crop], grow, mode=mode)  # edge, reflect, wrap: numpy's names


def _constant(op: graph.ConstantOp) -> Array:
    return _dense(op.value)


def _dense(attr: DenseIntOrFPElementsAttr) -> Array:
    values, shape = dense_values(attr), attr.type.get_shape()
    # A splat holds one value for the whole tensor.
    return to_tensor(
        values.reshape(shape) if values.size == math.prod(shape) else values, attr.type
    )


def _arith_constant(op: arith.ConstantOp) -> Array:
    """MLIR's own constant, as a graph may hold it: a dense tensor, or a
    scalar (a 0-d array)."""
    if isinstance(op.value, DenseIntOrFPElementsAttr):
        return _dense(op.value)
    if isinstance(op.value, IntegerAttr | FloatAttr):
        return to_tensor(op.value.value.data, TensorType(op.value.type, []))
    raise ValueError(f"the reference interpreter does not know 'arith.constant' of {op.value}")


def _cast(op: graph.CastOp, x: Array) -> Array:
    return to_tensor(x, op.result.type)


def _bitcast(op: graph.BitcastOp, x: Array) -> Array:
    """The stored bits (bf16's, a float8's code, i1's byte) viewed as the result type."""
    source, target = lookup(op.input.type.element_type), lookup(op.result.type.element_type)
    if target.compute_dtype == np.bool_:
        return x != 0
    stored = source.encode(x) if source.encode else x.astype(source.buffer_dtype)
    viewed = np.array(stored, order="C").view(target.buffer_dtype)  # rank 0 stays rank 0
    if target.decode:
        return target.decode(viewed)
    return round_values(viewed.astype(target.compute_dtype), op.result.type.element_type)


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
    graph.LeakyReluOp: lambda op, x: np.where(x >= 0, x, op.alpha_value * x),
    graph.ClampOp: lambda op, x: np.clip(x, op.min_value, op.max_value),
    graph.CastOp: _cast,
    graph.BitcastOp: _bitcast,
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
    graph.GreaterEqualOp: lambda op, a, b: a >= b,
    graph.LessEqualOp: lambda op, a, b: a <= b,
    graph.NotEqualOp: lambda op, a, b: a != b,
    graph.LogicalAndOp: lambda op, a, b: a & b,
    graph.LogicalOrOp: lambda op, a, b: a | b,
    graph.LogicalXorOp: lambda op, a, b: a ^ b,
    graph.LogicalNotOp: lambda op, x: ~x,
    graph.BitwiseAndOp: lambda op, a, b: a & b,
    graph.BitwiseOrOp: lambda op, a, b: a | b,
    graph.BitwiseXorOp: lambda op, a, b: a ^ b,
    graph.BitwiseNotOp: lambda op, x: ~x,
    graph.ShiftLeftOp: lambda op, a, b: _shift(np.left_shift, a, b),
    graph.ShiftRightOp: lambda op, a, b: _shift(np.right_shift, a, b),
    graph.EluOp: _elu,
    graph.SeluOp: _selu,
    graph.SoftplusOp: lambda op, x: _softplus(x),
    graph.HardSigmoidOp: lambda op, x: _hard_sigmoid(x, op.alpha_value, op.beta_value),
    graph.HardSwishOp: lambda op, x: x * _hard_sigmoid(x, 1 / 6, 0.5),
    graph.PreluOp: lambda op, x, slope: np.where(x < 0, slope * x, x),
    graph.SinOp: lambda op, x: np.sin(x),
    graph.CosOp: lambda op, x: np.cos(x),
    graph.SignOp: lambda op, x: np.sign(x),
    graph.RoundOp: lambda op, x: np.round(x),  # halves to even
    graph.FloorOp: lambda op, x: np.floor(x),
    graph.CeilOp: lambda op, x: np.ceil(x),
    graph.ModOp: _remainder,
    graph.ArgMaxOp: _arg_extreme,
    graph.ArgMinOp: _arg_extreme,
    graph.CumSumOp: _running_total,
    graph.CumProdOp: _running_total,
    graph.TopKIndicesOp: _top_k_indices,
    graph.SelectOp: lambda op, c, a, b: np.where(c, a, b),
    graph.MatmulOp: _matmul,
    **{op: _reduction for op in REDUCTIONS},
    graph.TransposeOp: lambda op, x: np.transpose(x, op.permutation),
    graph.ReshapeOp: lambda op, x: x.reshape(op.result.type.get_shape()),
    graph.BroadcastToOp: lambda op, x: np.broadcast_to(x, op.result.type.get_shape()),
    graph.ConcatOp: lambda op, *xs: np.concatenate(xs, axis=op.normalized_axis(xs[0].ndim)),
    graph.SliceOp: _slice,
    graph.GatherOp: _gather,
    **INDEXING,
    **NORMALIZATION,
    graph.PadOp: _pad,
    graph.ConstantOp: _constant,
    arith.ConstantOp: _arith_constant,
    **WINDOWED,
}


# --- the interpreter ------------------------------------------------------------


def evaluate(op: Operation, operands: list[Array]) -> Array:
    """The result of graph op `op` on `operands`; overflow, NaN and inf are
    values, not warnings."""
    with np.errstate(all="ignore"):
        computed = IMPLEMENTATIONS[type(op)](op, *map(_compute_dtype, operands))
        type_ = op.results[0].type  # a scalar (arith.constant's) as a 0-d tensor
        return to_tensor(
            computed, type_ if isinstance(type_, TensorType) else TensorType(type_, [])
        )


Functions = Mapping[str, func.FuncOp]
"""A module's functions by name: what calls and loops look up."""


def module_functions(module: ModuleOp) -> Functions:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def _find_function(functions: Functions, entry: str) -> func.FuncOp:
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
        expected_dtype = compute_dtype(type_.element_type)
        if array.dtype != expected_dtype:
            raise ValueError(f"{name} has dtype {array.dtype}, expected {expected_dtype}")
        if array.shape != tuple(type_.get_shape()):
            raise ValueError(
                f"{name} has shape {list(array.shape)}, expected {list(type_.get_shape())}"
            )
        checked.append(array)
    return checked


def _interpret(functions: Functions, function: func.FuncOp, arrays: list[Array]) -> list[Array]:
    return _run_block(functions, function.body.block, arrays, f"@{function.sym_name.data}")


def _run_block(functions: Functions, block, arrays: list[Array], where: str) -> list[Array]:
    """Run a function body or a graph.fused region; the terminator's operands are the results."""
    values: dict[SSAValue, Array] = dict(zip(block.args, arrays, strict=True))
    for op in block.ops:
        operands = [values[operand] for operand in op.operands]
        if isinstance(op, func.ReturnOp | graph.YieldOp):
            return operands
        if isinstance(op, func.CallOp):
            callee = _find_function(functions, op.callee.root_reference.data)
            results = _interpret(functions, callee, operands)
        elif isinstance(op, graph.FusedOp):
            results = _run_block(functions, op.body.block, operands, "graph.fused")
        elif isinstance(op, graph.LoopOp):
            results = run_loop(functions, op, operands)
        elif type(op) in IMPLEMENTATIONS:
            results = [evaluate(op, operands)]
        else:
            raise ValueError(f"the reference interpreter does not know '{op.name}'")
        values.update(zip(op.results, results, strict=True))
    raise ValueError(f"{where} has no terminator")


def run_loop(functions: Functions, op: graph.LoopOp, operands: list[Array]) -> list[Array]:
    """graph.loop's results: the step function once per row of the sequences."""
    step = _find_function(functions, op.body.root_reference.data)
    count, sequences = len(op.states), len(op.sequences)
    states = operands[:count]
    rows, invariants = operands[count : count + sequences], operands[count + sequences :]
    outputs = [
        np.empty(r.type.get_shape(), compute_dtype(r.type.element_type)) for r in op.results[count:]
    ]
    order = range(op.steps - 1, -1, -1) if op.is_reverse else range(op.steps)
    for t in order:
        results = _interpret(functions, step, [*states, *(r[t] for r in rows), *invariants])
        states = results[:count]
        for output, row in zip(outputs, results[count:], strict=True):
            output[t] = row
    return [*states, *outputs]


def _parse_graph(text: str) -> ModuleOp:
    """A graph module from text: the builtin, func and graph dialects are all
    a graph may hold, with arith's constants."""
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    ctx = Context()
    for dialect in (Builtin, Func, Arith, graph.Graph):
        ctx.load_dialect(dialect)
    module = parse_module(ctx, SourceFile("<string>", text))
    verify_module(module)
    return module


def run(module_or_text: ModuleOp | str, *arrays: Any, entry: str = "main") -> Array | tuple:
    """Run graph function `entry` on numpy arrays; one result is returned as
    an array, several as a tuple."""
    if isinstance(module_or_text, str):
        module = _parse_graph(module_or_text)
    else:
        module = module_or_text
    functions = module_functions(module)
    function = _find_function(functions, entry)
    results = _interpret(functions, function, check_arguments(function, arrays))
    return results[0] if len(results) == 1 else tuple(results)


# --- comparing with the reference -----------------------------------------------


def compare_to_reference(got: Any, want: Any, atol: float, rtol: float) -> tuple[bool, float]:
    """Whether output `got` matches reference output `want`, and the max abs
    error over the places where both are finite. NaN must meet NaN and inf
    the same inf (NaN - NaN and inf - inf are NaN, so a plain difference
    fails there); finite places must lie within atol + rtol * max|finite want|
    (a reference inf would make that bound infinite). float64 throughout:
    |INT_MIN| overflows in its own integer type."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False, math.inf
    finite = np.isfinite(got) & np.isfinite(want)
    specials_agree = np.array_equal(got[~finite], want[~finite], equal_nan=True)
    error = float(np.abs(got[finite] - want[finite]).max(initial=0.0))
    scale = float(np.abs(want[np.isfinite(want)]).max(initial=0.0))
    return specials_agree and error <= atol + rtol * scale, error
