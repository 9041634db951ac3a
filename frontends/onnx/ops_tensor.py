"""Converters of ONNX's constants, shape and data-movement ops (registered
in `ops.CONVERTERS`).

Shapes are static, so the ops that compute shapes (Shape, Size,
ConstantOfShape) give numpy arrays, and the ops that only rearrange
elements (Reshape, Flatten, Squeeze, Unsqueeze, Expand) compute their
output shape from the input's. The random ops (RandomUniform, RandomNormal
and their *Like forms) are constants too: drawn once, at import time.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
from onnx import TensorProto, numpy_helper
from xdsl.dialects.builtin import BFloat16Type, IntegerType, i1, i64
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.element_types import array_type, element_type
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _broadcast, converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis
from graphcompiler.ir.element_types import compute_dtype, round_to_bf16

# --- constants and shapes ---------------------------------------------------------

_CONSTANT_ATTRIBUTES = {
    "value": numpy_helper.to_array,
    "value_float": lambda v: np.array(v, np.float32),
    "value_floats": lambda v: np.array(v, np.float32),
    "value_int": lambda v: np.array(v, np.int64),
    "value_ints": lambda v: np.array(v, np.int64),
}


@converter("Constant")
def _constant(node: Node) -> list:
    given = [name for name in node.attributes if name in _CONSTANT_ATTRIBUTES]
    if len(given) != 1:
        name = next(iter(node.attributes), None)
        if name is None:
            raise node.error("has no value attribute")
        raise node.unsupported_attribute(name)
    array = _CONSTANT_ATTRIBUTES[given[0]](node.attr(given[0]))
    array_type(array, node.where)  # an element type we can hold
    return [array]


@converter("ConstantOfShape")
def _constant_of_shape(node: Node) -> list:
    shape = [int(d) for d in node.constant(0, "shape")]
    value = node.attr("value")
    fill = (
        numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    )
    return [np.full(shape, fill[0], fill.dtype)]


@converter("Shape")
def _shape(node: Node) -> list:
    shape = node.shape(0)
    start, end = node.attr("start", 0), node.attr("end", len(shape))
    return [np.array(shape[slice(start, end)], np.int64)]


@converter("Size")
def _size(node: Node) -> list:
    return [np.array(math.prod(node.shape(0)), np.int64)]


@converter("Range")
def _range(node: Node) -> list:
    """Scalars, or one-element tensors (as onnx's AffineGrid body passes them)."""
    bounds = []
    for index, name in enumerate(("start", "limit", "delta")):
        value = np.asarray(node.constant(index, name))
        if value.size != 1:
            raise node.error(f"{name} has shape {list(value.shape)}, expected a scalar")
        bounds.append(value.reshape(()))
    start, limit, delta = bounds
    if delta == 0:
        raise node.error("delta is 0")
    return [np.arange(start, limit, delta, dtype=start.dtype)]


# --- random values --------------------------------------------------------------------

RANDOM_SEED = 0
"""The seed of a random op without a `seed` attribute: its values come from
numpy.random.default_rng([RANDOM_SEED, crc32(its first output's name)]), so
two unseeded nodes differ, and every import of a model draws the same."""


def _generator(node: Node) -> np.random.Generator:
    seed = node.attr("seed")
    if seed is None:
        name = node.proto.output[0] if node.proto.output else node.label
        return np.random.default_rng([RANDOM_SEED, zlib.crc32(name.encode())])
    seed = float(seed)
    if seed.is_integer() and seed >= 0:
        return np.random.default_rng(int(seed))
    return np.random.default_rng([1, int(np.float32(seed).view(np.uint32))])  # its bits


def _round(values: np.ndarray, element) -> np.ndarray:
    """float64 values as `element` holds them (bf16: rounded, in float32)."""
    if isinstance(element, BFloat16Type):
        return round_to_bf16(values.astype(np.float32))
    return values.astype(compute_dtype(element))


def _next_down(values: np.ndarray, element) -> np.ndarray:
    """The `element` value just below each of `values`."""
    if not isinstance(element, BFloat16Type):
        return np.nextafter(values, values.dtype.type(-np.inf))
    bits = values.view(np.uint32).astype(np.int64)
    bits = np.where(values > 0, bits - 0x10000, np.where(values < 0, bits + 0x10000, 0x80010000))
    return bits.astype(np.uint32).view(np.float32)


@converter("RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike")
def _random(node: Node) -> list:
    """Values drawn ONCE, at import (compile) time, with numpy's Generator
    (seeded by the `seed` attribute, else as RANDOM_SEED says): a constant,
    so every call of the compiled model returns the same values. No runtime's
    random bits can be matched (onnxruntime's differ from numpy's anyway);
    the shape (attribute `shape`, or the input's for *Like), element type
    (`dtype`, or the input's for *Like) and distribution (uniform in
    [low, high), normal of mean and scale) are the model's."""
    if node.op_type.endswith("Like"):
        shape = node.shape(0)
        dtype = node.attr("dtype")
        element = (
            element_type(dtype, node.where)
            if dtype is not None
            else node.input_type(0).element_type
        )
    else:
        shape = node.attr("shape")
        if shape is None:
            raise node.error("attribute 'shape' is missing (a static shape is needed)")
        shape = [int(d) for d in shape]
        if any(d < 0 for d in shape):
            raise node.error(f"shape {shape} is not static (a dim is negative)")
        element = element_type(node.attr("dtype", TensorProto.FLOAT), node.where)
    if not graph.is_float(element):
        raise node.error(f"element type {element} is not supported (floating point only)")
    generator = _generator(node)
    if node.op_type.startswith("RandomUniform"):
        low, high = float(node.attr("low", 0.0)), float(node.attr("high", 1.0))
        if not low < high:
            raise node.error(f"low {low} is not below high {high}")
        values = _round(generator.uniform(low, high, shape), element)
        too_high = values >= high  # rounded up to high: the value below it
        values[too_high] = _next_down(values[too_high], element)
    else:
        mean, scale = float(node.attr("mean", 0.0)), float(node.attr("scale", 1.0))
        values = _round(generator.normal(mean, scale, shape), element)
    if isinstance(element, BFloat16Type):  # numpy has no bf16 array
        return [node.importer.constant_value(values, element, node.label)]
    return [values]


# --- reshaping ----------------------------------------------------------------------


@converter("Reshape", "Flatten", "Squeeze", "Unsqueeze")
def _reshape(node: Node) -> list:
    """Each only renames the dims: the output shape follows from the input's
    and the (import-time) target shape or axes."""
    x = node.value(0)
    shape = list(x.type.get_shape())
    if node.op_type == "Reshape":
        target = [int(d) for d in node.constant(1, "shape")]
        if not node.attr("allowzero", 0):
            target = [shape[i] if d == 0 else d for i, d in enumerate(target)]
        if -1 in target:
            known = math.prod(d for d in target if d != -1)
            target[target.index(-1)] = math.prod(shape) // known if known else 0
    elif node.op_type == "Flatten":
        axis = int(node.attr("axis", 1))
        axis = axis + len(shape) if -len(shape) <= axis < 0 else axis
        if not 0 <= axis <= len(shape):
            raise node.error(f"axis {node.attr('axis')} is out of range for rank {len(shape)}")
        target = [math.prod(shape[:axis]), math.prod(shape[axis:])]
    elif node.op_type == "Squeeze":
        axes = {_axis(node, a, len(shape)) for a in node.ints("axes", 1, [])}
        target = [d for i, d in enumerate(shape) if not (i in axes or (not axes and d == 1))]
    else:
        axes = node.ints("axes", 1)
        rank = len(shape) + len(axes)
        ones = {_axis(node, a, rank) for a in axes}
        rest = iter(shape)
        target = [1 if i in ones else next(rest) for i in range(rank)]
    return [reshape(node, x, target)]


@converter("Expand")
def _expand(node: Node) -> list:
    x = node.value(0)
    shape = [int(d) for d in node.constant(1, "shape")]
    try:
        target = np.broadcast_shapes(tuple(x.type.get_shape()), tuple(shape))
    except ValueError:
        raise node.error(f"shape {shape} does not broadcast with the input's") from None
    return [_broadcast(node, x, target)]


@converter("Trilu")
def _trilu(node: Node) -> list:
    """select(mask, x, 0) with the triangle's mask known at import time."""
    x = node.value(0)
    *_, rows, columns = x.type.get_shape()
    k = int(node.constant(1, "k")) if node.has_input(1) else 0
    offset = np.arange(columns)[None, :] - np.arange(rows)[:, None]
    mask = offset >= k if node.attr("upper", 1) else offset <= k
    mask_value = node.importer.constant_value(mask, i1, node.label)
    return [node.make("select", [mask_value, x, node.scalar(0, x)])]


@converter("EyeLike")
def _eye_like(node: Node) -> list:
    x = node.value(0)
    if len(x.type.get_shape()) != 2:
        raise node.error("the input must have rank 2")
    dtype = node.attr("dtype")
    type_ = element_type(dtype, node.where) if dtype is not None else x.type.element_type
    eye = np.eye(*x.type.get_shape(), k=int(node.attr("k", 0)))
    return [node.importer.constant_value(eye, type_, node.label)]


@converter("Transpose")
def _transpose(node: Node) -> list:
    x = node.value(0)
    rank = len(x.type.get_shape())
    perm = node.attr("perm", list(range(rank))[::-1])
    return [node.make("transpose", [x], perm=list(perm))]


@converter("Concat")
def _concat(node: Node) -> list:
    return [node.make("concat", node.values(), axis=int(node.attr("axis")))]


def _slice(node: Node, x: SSAValue, starts, ends, steps=None) -> SSAValue:
    shape = x.type.get_shape()
    if list(starts) == [0] * len(shape) and list(ends) == list(shape) and not steps:
        return x
    return node.make(
        "slice",
        [x],
        starts=list(starts),
        ends=list(ends),
        **({"steps": list(steps)} if steps else {}),
    )


def _axis(node: Node, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


@converter("Split")
def _split(node: Node) -> list:
    """Slices along the axis: the sizes given (input `split`), else
    `num_outputs` (or one per output) parts of ceil(n / parts), the last
    one smaller."""
    x = node.value(0)
    shape = x.type.get_shape()
    axis = _axis(node, int(node.attr("axis", 0)), len(shape))
    sizes = node.ints("split", 1)
    parts = int(node.attr("num_outputs", len(node.proto.output)))
    if sizes is None:
        chunk = -(-shape[axis] // parts)
        sizes = [min(chunk, max(shape[axis] - i * chunk, 0)) for i in range(parts)]
    if len(sizes) != len(node.proto.output) or sum(sizes) != shape[axis] or min(sizes) < 0:
        raise node.error(
            f"split sizes {sizes} do not cut axis {axis} of size {shape[axis]} "
            f"into {len(node.proto.output)} outputs"
        )
    outputs, offset = [], 0
    for size in sizes:
        starts = [offset if d == axis else 0 for d in range(len(shape))]
        ends = [offset + size if d == axis else s for d, s in enumerate(shape)]
        outputs.append(_slice(node, x, starts, ends))
        offset += size
    return outputs


@converter("Slice")
def _slice_op(node: Node) -> list:
    x = node.value(0)
    shape = list(x.type.get_shape())
    rank = len(shape)
    starts, ends = node.constant(1, "starts"), node.constant(2, "ends")
    axes = node.ints("axes", 3, range(len(starts)))
    steps = node.ints("steps", 4, [1] * len(starts))
    full_starts, full_ends, full_steps = [0] * rank, list(shape), [1] * rank
    backward = {}  # axis: the indices a negative step takes (numpy's), read by a gather
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        axis = _axis(node, axis, rank)
        if step == 0:
            raise node.error("step 0 is not a slice")
        if step < 0:
            backward[axis] = np.array(_backward_range(shape[axis], int(start), int(end), int(step)))
            continue
        full_starts[axis], full_ends[axis], full_steps[axis] = int(start), int(end), int(step)
    x = _slice(
        node, x, full_starts, full_ends, full_steps if any(s != 1 for s in full_steps) else None
    )
    for axis, indices in backward.items():  # torch.flip, x[::-1]
        where = node.importer.constant_value(indices.astype(np.int64), i64, node.label)
        x = node.make("gather", [x, where], axis=axis)
    return [x]


def _backward_range(size: int, start: int, end: int, step: int) -> range:
    """The indices a negative step takes, as ONNX clamps them: a negative
    start or end counts from the end, then the start lies in [0, size - 1]
    and the end in [-1, size - 1], -1 meaning before the first element
    (numpy would read it as the last)."""
    if size == 0:
        return range(0)
    start, end = (v + size if v < 0 else v for v in (start, end))
    return range(min(max(start, 0), size - 1), min(max(end, -1), size - 1), step)


@converter("Gather")
def _gather(node: Node) -> list:
    x = node.value(0)
    axis = _axis(node, int(node.attr("axis", 0)), len(x.type.get_shape()))
    return [node.make("gather", [x, node.value(1)], axis=axis)]


@converter("Tile")
def _tile(node: Node) -> list:
    x = node.value(0)
    for axis, count in enumerate(int(r) for r in node.constant(1, "repeats")):
        if count == 0:  # an empty axis: a slice that keeps nothing
            x = _slice_axis(node, x, axis, 0, 0) if x.type.get_shape()[axis] else x
        elif count != 1:
            x = node.make("concat", [x] * count, axis=axis)
    return [x]


@converter("Pad")
def _pad(node: Node) -> list:
    mode = node.require_attr("mode", ["constant", "reflect", "edge", "wrap"], "constant")
    x = node.value(0)
    rank = len(x.type.get_shape())
    pads = [int(p) for p in node.constant(1, "pads")]
    value = node.optional_constant(2, "constant_value")
    axes = node.ints("axes", 3, range(rank))
    full = [0] * (2 * rank)
    for index, axis in enumerate(axes):
        axis = _axis(node, axis, rank)
        full[axis], full[rank + axis] = pads[index], pads[len(axes) + index]
    fill = value.reshape(-1)[0].item() if value is not None and value.size else 0
    if float(np.float32(fill)) == fill or mode != "constant":
        return [node.make("pad", [x], pads=full, mode=mode, value=float(fill))]
    # an integer f32 cannot hold (2^31 - 1, 2^53 + 1): zeros, then the value where the pads are
    padded = node.make("pad", [x], pads=full, value=0.0)
    marks = node.importer.constant_value(
        np.zeros(x.type.get_shape(), np.int8), IntegerType(8), node.label
    )
    border = node.make(
        "equal", [node.make("pad", [marks], pads=full, value=1.0), node.scalar(1, marks)]
    )
    element = x.type.element_type
    filled = node.importer.constant_value(
        np.array(fill, compute_dtype(element)), element, node.label
    )
    return [node.make("select", [border, filled, padded])]


@converter("DepthToSpace", "SpaceToDepth")
def _depth_space(node: Node) -> list:
    x = node.value(0)
    n, c, h, w = x.type.get_shape()
    b = int(node.attr("blocksize"))
    mode = node.require_attr("mode", ["DCR", "CRD"], "DCR")  # SpaceToDepth's since opset 28
    if node.op_type == "SpaceToDepth":  # channel (row * b + column) * C + c, or c * b * b + ...
        x = reshape(node, x, [n, c, h // b, b, w // b, b])
        perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
        x = node.make("transpose", [x], perm=perm)
        return [reshape(node, x, [n, c * b * b, h // b, w // b])]
    if mode == "DCR":
        x = reshape(node, x, [n, b, b, c // (b * b), h, w])
        x = node.make("transpose", [x], perm=[0, 3, 4, 1, 5, 2])
    else:
        x = reshape(node, x, [n, c // (b * b), b, b, h, w])
        x = node.make("transpose", [x], perm=[0, 1, 4, 2, 5, 3])
    return [reshape(node, x, [n, c // (b * b), h * b, w * b])]
