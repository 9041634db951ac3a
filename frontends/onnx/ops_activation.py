"""Converters of ONNX ops composed from element-wise, window and gather
graph ops (registered in `ops.CONVERTERS`): Hardmax, Shrink, LRN and
ReverseSequence.

- Hardmax: 1 where argmax along the axis (numpy's first maximum, NaN
  first), else 0: graph.argmax compared with the axis' positions;
- Shrink: x - bias above lambd, x + bias below -lambd, 0 between
  (integers in float, then truncated back: -lambd of a u8 is no wrap);
- LRN: x / (bias + alpha / size * sum of x^2 over the `size` channels
  around each)^beta, the window's sum as shifted slices of the squares
  padded with zeros (size is small: 3 to 5 in the networks that use it);
- ReverseSequence: a gather_elements along time at len - 1 - t for the
  steps t < len of each batch entry, t past it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, TensorType, i64

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, _is_float, cast, converter, in_f32
from graphcompiler.frontends.onnx.ops_window import _slice_axis


@converter("Hardmax")
def _hardmax(node: Node) -> list:
    x = node.value(0)
    shape = list(x.type.get_shape())
    rank = len(shape)
    axis = int(node.attr("axis", -1))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if 0 in shape:  # nothing to pick from: the empty result
        return [x]
    best = node.make("argmax", [x], axis=axis, keep_dims=True)
    positions = np.arange(shape[axis]).reshape([-1 if d == axis else 1 for d in range(rank)])
    where = node.importer.constant_value(positions, i64, node.label)
    return [cast(node, node.make("equal", [where, best]), x.type.element_type)]


@converter("Shrink")
def _shrink(node: Node) -> list:
    x = node.value(0)
    element = x.type.element_type
    if not _is_float(x):  # compared and shifted in float, as onnxruntime does
        wide = element.width.data > 16
        x = cast(node, x, Float64Type() if wide else Float32Type())
    bias, lambd = float(node.attr("bias", 0.0)), float(node.attr("lambd", 0.5))
    zero = node.scalar(0, x)
    above = node.make("greater", [x, node.scalar(lambd, x)])
    below = node.make("less", [x, node.scalar(-lambd, x)])
    shifted_down = node.make("sub", [x, node.scalar(bias, x)])
    shifted_up = node.make("add", [x, node.scalar(bias, x)])
    inner = node.make("select", [below, shifted_up, zero])
    return [cast(node, node.make("select", [above, shifted_down, inner]), element)]


@converter("LRN")
def _lrn(node: Node) -> list:
    x, back = in_f32(node, _float_input(node))
    shape = list(x.type.get_shape())
    if len(shape) < 3:
        raise node.error(f"input of rank {len(shape)} is not supported ([N, C, D1, ...])")
    size = int(node.attr("size"))
    if size < 1:
        raise node.error(f"size {size} must be positive")
    alpha, beta = float(node.attr("alpha", 1e-4)), float(node.attr("beta", 0.75))
    bias = float(node.attr("bias", 1.0))
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    squares = node.make("mul", [x, x])
    pads = [0] * (2 * len(shape))
    pads[1], pads[len(shape) + 1] = before, after
    padded = node.make("pad", [squares], pads=pads) if size > 1 else squares
    total = None
    for offset in range(size):
        window = _slice_axis(node, padded, 1, offset, shape[1])
        total = window if total is None else node.make("add", [total, window])
    scaled = node.make("mul", [total, node.scalar(alpha / size, x)])
    base = node.make("add", [scaled, node.scalar(bias, x)])
    return [back(node.make("div", [x, node.make("pow", [base, node.scalar(beta, x)])]))]


@converter("ReverseSequence")
def _reverse_sequence(node: Node) -> list:
    """Each batch entry's first sequence_lens[b] steps reversed, the rest
    kept: a gather_elements along the time axis at len - 1 - t where t < len."""
    x = node.value(0)
    shape = list(x.type.get_shape())
    time, batch = int(node.attr("time_axis", 0)), int(node.attr("batch_axis", 1))
    if len(shape) < 2 or sorted((time, batch)) != [0, 1]:
        raise node.error(f"time_axis {time} and batch_axis {batch} must be 0 and 1 (rank >= 2)")
    plane = [shape[time], shape[batch]] if time == 0 else [shape[batch], shape[time]]
    steps = np.arange(shape[time]).reshape([-1, 1] if time == 0 else [1, -1])
    positions = node.importer.constant_value(steps, i64, node.label)
    lengths = node.make("reshape", [cast(node, node.value(1), i64)],
                        TensorType(i64, [1, shape[batch]] if time == 0 else [shape[batch], 1]))  # fmt: skip
    backward = node.make("sub", [node.make("sub", [lengths, node.scalar(1, lengths)]), positions])
    inside = node.make("less", [positions, lengths])
    index = node.make(
        "select", [inside, backward, node.make("broadcast_to", [positions], TensorType(i64, plane))]
    )
    index = node.make("reshape", [index], TensorType(i64, [*plane, *[1] * (len(shape) - 2)]))
    index = node.make("broadcast_to", [index], TensorType(i64, shape))
    return [node.make("gather_elements", [x, index], axis=time)]
