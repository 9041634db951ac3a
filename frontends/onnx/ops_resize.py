"""The converter of ONNX Resize (registered in `ops.CONVERTERS`).

Every Resize mode is separable and linear in the input: along each resized
axis, output element o is sum_t weight[o, t] * input[index[o, t]] over a
few taps t (1 for nearest, 2 for linear, 4 for cubic, more for an
antialiased downscale). Shapes are static, so the taps' indices and weights
are computed here with numpy, following onnx's reference implementation
(onnx.reference.ops.op_resize) step by step, and each axis becomes

    graph.gather(x, indices[O, T], axis) * weights[O, T] summed over T

(a single gather for nearest). tf_crop_and_resize's positions outside the
input take extrapolation_value through a select.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter

_TRANSFORMS = [
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
]
_NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def _source_positions(
    transform: str, scale: float, size: int, count: int, roi: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray | None]:
    """Where each of the `count` outputs samples an input of `size`, and
    which lie outside it (tf_crop_and_resize only). The resized length is
    scale * size, a fraction when `scale` was given, as onnx's reference."""
    y = np.arange(count, dtype=np.float64)
    length = scale * size
    if transform == "align_corners":
        x = np.zeros(count) if length == 1 else y * (size - 1) / (length - 1)
    elif transform == "asymmetric":
        x = y / scale
    elif transform == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            x = np.full(count, (end - start) * (size - 1) / 2)
        else:
            x = y * (end - start) * (size - 1) / (length - 1)
        x = x + start * (size - 1)
        return x, (x < 0) | (x > size - 1)
    elif transform == "pytorch_half_pixel":
        x = np.full(count, -0.5) if length == 1 else (y + 0.5) / scale - 0.5
    elif transform == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric: the input's centre maps to the output's
        offset = size / 2 * (1 - count / length)
        x = offset + (y + 0.5) / scale - 0.5
    return x, None


def _coefficients(mode: str, ratio: np.ndarray, scale: float, attrs: dict) -> np.ndarray:
    """[count, taps] weights of the neighbours of each position, `ratio` its
    distance in (0, 1] from the neighbour on its left."""
    if mode == "nearest":
        ceil = {
            "round_prefer_floor": ratio > 0.5,
            "round_prefer_ceil": ratio >= 0.5,
            "floor": np.zeros_like(ratio, bool),
            "ceil": np.ones_like(ratio, bool),
        }[attrs["nearest_mode"]] | (ratio == 1.0)
        return np.stack([~ceil, ceil], axis=1).astype(np.float64)
    shrink = min(scale, 1.0) if attrs["antialias"] else 1.0
    if mode == "linear":
        start = math.floor(-1 / shrink) + 1
        distance = (np.arange(start, 2 - start) - ratio[:, None]) * shrink
        weights = np.clip(1 - np.abs(distance), 0, 1)
    else:
        start = math.floor(-2 / shrink) + 1
        distance = np.abs((np.arange(start, 2 - start) - ratio[:, None]) * shrink)
        a = attrs["cubic_coeff_a"]
        near = ((a + 2) * distance - (a + 3)) * distance * distance + 1
        far = ((a * distance - 5 * a) * distance + 8 * a) * distance - 4 * a
        weights = np.where(distance <= 1, near, np.where(distance < 2, far, 0.0))
    return weights / weights.sum(axis=1, keepdims=True) if attrs["antialias"] else weights


def interpolation(
    mode: str, transform: str, scale: float, size: int, count: int, roi, attrs: dict
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(indices [count, taps], weights [count, taps] or None for nearest,
    the outputs that take extrapolation_value or None) of one axis."""
    x, outside = _source_positions(transform, scale, size, count, roi)
    ratio = np.where(x == np.floor(x), 1.0, x - np.floor(x))  # an integer x prefers its left
    weights = _coefficients(mode, ratio, scale, attrs)
    taps = weights.shape[1]
    # the `taps` nearest neighbours of x, ties to the left (the reference's _get_neighbor)
    pad = math.ceil(taps / 2)
    padded = x + pad
    left = np.floor(padded)
    if taps % 2 == 0:
        offset = np.where(padded == left, -(taps // 2), -(taps // 2) + 1)
    else:
        offset = np.where(padded - left <= 0.5, -((taps - 1) // 2), -((taps - 1) // 2) + 1)
    indices = (left + offset).astype(np.int64)[:, None] + np.arange(taps) - pad
    if attrs["exclude_outside"]:
        weights = np.where((indices < 0) | (indices >= size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    indices = np.clip(indices, 0, size - 1)
    if mode == "nearest":  # one tap; exclude_outside may have zeroed it, as the reference
        rows, pick = np.arange(count), weights.argmax(axis=1)
        kept = weights[rows, pick]
        if (kept == 1).all():
            return indices[rows, pick], None, outside
        return indices[rows, pick][:, None], kept[:, None], outside
    return indices, weights, outside


def _resize_axis(node: Node, x: SSAValue, axis: int, indices, weights, outside, fill: float):
    shape = x.type.get_shape()
    element = x.type.element_type
    trailing = [1] * (len(shape) - axis - 1)
    index_value = node.importer.constant_value(indices, i64, node.label)
    result = node.make("gather", [x, index_value], axis=axis)
    if weights is not None:
        weight_value = node.importer.constant_value(
            weights.reshape([*weights.shape, *trailing]), element, node.label
        )
        weighted = node.make("mul", [result, weight_value])
        result = node.make("reduce_sum", [weighted], axes=[axis + 1], keep_dims=False)
    if outside is not None and outside.any():
        mask = node.importer.constant_value(outside.reshape([-1, *trailing]), i1, node.label)
        result = node.make("select", [mask, node.scalar(fill, result), result])
    return result


def _input_array(node: Node, index: int, what: str) -> np.ndarray | None:
    """An optional constant input; an empty one counts as absent."""
    array = node.optional_constant(index, what)
    return None if array is None or array.size == 0 else array.reshape(-1)


@converter("Resize")
def _resize(node: Node) -> list:
    x = node.value(0)
    shape = list(x.type.get_shape())
    rank = len(shape)
    mode = node.require_attr("mode", ["nearest", "linear", "cubic"], "nearest")
    transform = node.require_attr("coordinate_transformation_mode", _TRANSFORMS, "half_pixel")
    attrs = {
        "nearest_mode": node.require_attr("nearest_mode", _NEAREST_MODES, "round_prefer_floor"),
        "cubic_coeff_a": float(node.attr("cubic_coeff_a", -0.75)),
        "antialias": bool(node.attr("antialias", 0)) and mode != "nearest",
        "exclude_outside": bool(node.attr("exclude_outside", 0)),
    }
    fill = float(node.attr("extrapolation_value", 0.0))
    policy = node.require_attr(
        "keep_aspect_ratio_policy", ["stretch", "not_larger", "not_smaller"], "stretch"
    )
    axes = [a % rank if -rank <= a < rank else None for a in node.attr("axes", range(rank))]
    if None in axes or len(set(axes)) != len(axes):
        raise node.unsupported_attribute("axes", f"axes must be distinct, in [-{rank}, {rank})")
    if mode != "nearest" and not graph.is_float(x.type.element_type):
        raise node.error(f"mode '{mode}' needs a floating-point input, not {x.type.element_type}")
    roi = [(0.0, 1.0)] * len(axes)
    if transform == "tf_crop_and_resize":
        given = _input_array(node, 1, "roi")
        if given is None or given.size != 2 * len(axes):
            raise node.error(f"roi must hold {2 * len(axes)} values for tf_crop_and_resize")
        # numpy scalars of roi's type: positions round as in the reference (a tie may hang on it)
        roi = list(zip(given[: len(axes)], given[len(axes) :], strict=True))
    scales, sizes = _input_array(node, 2, "scales"), _input_array(node, 3, "sizes")
    if (scales is None) == (sizes is None):
        raise node.error("exactly one of the scales and sizes inputs must be given")
    given = scales if scales is not None else sizes
    if given.size != len(axes):
        raise node.error(f"{given.size} scales or sizes for {len(axes)} axes")
    lengths = [shape[a] for a in axes]
    if sizes is not None:
        factors = [int(s) / n for s, n in zip(sizes.tolist(), lengths, strict=True)]
        if policy != "stretch":
            factor = (min if policy == "not_larger" else max)(factors)
            factors = [factor] * len(axes)
            sizes = np.array([int(factor * n + 0.5) for n in lengths])
        counts = [int(s) for s in sizes.tolist()]
    else:
        factors = [float(s) for s in scales.tolist()]
        counts = [int(f * n) for f, n in zip(factors, lengths, strict=True)]
    if min(counts) < 0 or min(factors) <= 0:
        raise node.error(f"the output sizes {counts} must not be negative")
    if 0 in counts or 0 in shape:  # an empty result (onnx's reference, onnxruntime)
        out = list(shape)
        for axis, count in zip(axes, counts, strict=True):
            out[axis] = count
        return [node.importer.constant_value(np.zeros(out), x.type.element_type, node.label)]
    result = x
    for axis, factor, count, window in zip(axes, factors, counts, roi, strict=True):
        if math.isclose(factor, 1.0) and count == shape[axis] and window == (0.0, 1.0):
            continue
        taps = interpolation(mode, transform, factor, shape[axis], count, window, attrs)
        result = _resize_axis(node, result, axis, *taps, fill)
    return [result]
