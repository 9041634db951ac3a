"""Converters of ONNX's indexing ops (registered in `ops.CONVERTERS`):
GatherElements, GatherND, ScatterElements and ScatterND map one to one to
graph ops, which compute their output shapes from the input types (ONNX
shape inference is not needed). OneHot is composed: the indices (negative
ones wrapped once by depth) compared with an iota constant along the new
axis, then a select of the on and off values. NonZero and Unique have
output shapes that depend on the data, which static graphs cannot hold:
they are rejected with a reason. TensorScatter (a KV-cache update) is a
scatter_elements along the sequence axis at each batch entry's write index
plus the update's positions.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType, i1, i32, i64
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import cast, converter, reshape


@converter("GatherElements")
def _gather_elements(node: Node) -> list:
    x, indices = node.value(0), node.value(1)
    return [node.make("gather_elements", [x, indices], axis=int(node.attr("axis", 0)))]


@converter("GatherND")
def _gather_nd(node: Node) -> list:
    x, indices = node.value(0), node.value(1)
    return [node.make("gather_nd", [x, indices], batch_dims=int(node.attr("batch_dims", 0)))]


def _reduction(node: Node) -> str:
    return node.require_attr("reduction", graph.SCATTER_REDUCTIONS, "none")


def _scatter(node: Node, op: str, **properties) -> SSAValue:
    """A scatter op on data, indices, updates; booleans combined by a
    reduction go through i32 and back (add and max: or, mul and min: and)."""
    data, indices, updates = (node.value(i) for i in range(3))
    reduction = _reduction(node)
    if data.type.element_type != i1 or reduction == "none":
        return node.make(op, [data, indices, updates], reduction=reduction, **properties)
    wide = [cast(node, v, i32) for v in (data, updates)]
    result = node.make(op, [wide[0], indices, wide[1]], reduction=reduction, **properties)
    return cast(node, result, i1)


@converter("ScatterElements")
def _scatter_elements(node: Node) -> list:
    return [_scatter(node, "scatter_elements", axis=int(node.attr("axis", 0)))]


@converter("TensorScatter")
def _tensor_scatter(node: Node) -> list:
    cache, update = node.value(0), node.value(1)
    shape, update_shape = cache.type.get_shape(), update.type.get_shape()
    rank = len(shape)
    axis = int(node.attr("axis", -2))
    if not -rank < axis < rank or axis % rank == 0:
        raise node.error(f"axis {axis} is not a sequence axis of rank {rank} (batch is 0)")
    axis %= rank
    circular = node.require_attr("mode", ["linear", "circular"], "linear") == "circular"
    if (
        len(update_shape) != rank
        or any(
            u != c for d, (u, c) in enumerate(zip(update_shape, shape, strict=True)) if d != axis
        )
        or update_shape[axis] > shape[axis]
    ):
        raise node.error(f"update of shape {update_shape} does not fit the cache {shape}")
    steps = np.arange(update_shape[axis]).reshape([-1] + [1] * (rank - 1 - axis))
    index = node.importer.constant_value(steps, i64, node.label)
    if node.has_input(2):
        starts = cast(node, node.value(2), i64)
        if list(starts.type.get_shape()) != [shape[0]]:
            raise node.error(f"write_indices must be [{shape[0]}], got {starts.type.get_shape()}")
        index = node.make("add", [reshape(node, starts, [shape[0]] + [1] * (rank - 1)), index])
    if circular:
        index = node.make("mod", [index, node.scalar(shape[axis], index)])
    if list(index.type.get_shape()) != list(update_shape):
        index = node.make("broadcast_to", [index], TensorType(i64, list(update_shape)))
    return [node.make("scatter_elements", [cache, index, update], axis=axis)]


@converter("ScatterND")
def _scatter_nd(node: Node) -> list:
    return [_scatter(node, "scatter_nd")]


@converter("OneHot")
def _one_hot(node: Node) -> list:
    """select(indices == iota, on, off), iota = [0, depth) along `axis` of
    the output (indices.shape with depth inserted there). Indices of any
    numeric type are cast to i64 (floats truncate, as ONNX's cast), those in
    [-depth, 0) count from depth, and any other out of [0, depth) gives an
    all-off row. `depth` must be known at import time (it is a dim)."""
    indices = node.value(0)
    shape = list(indices.type.get_shape())
    rank = len(shape) + 1
    depth_array = np.asarray(node.constant(1, "depth"))
    if depth_array.size != 1 or depth_array.ndim > 1:
        raise node.error(f"depth must be one value, got shape {list(depth_array.shape)}")
    depth = int(depth_array.reshape(-1)[0])
    if depth < 1:
        raise node.error(f"depth {depth} is not positive")
    axis = int(node.attr("axis", -1))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for an output of rank {rank}")
    axis %= rank
    values = node.value(2)
    if math.prod(values.type.get_shape()) != 2:
        raise node.error(
            f"values must be [off, on] (two elements), got shape {list(values.type.get_shape())}"
        )
    values = reshape(node, values, [2])
    off = node.make("slice", [values], starts=[0], ends=[1])
    on = node.make("slice", [values], starts=[1], ends=[2])
    element = indices.type.element_type
    index = cast(node, indices, i64)
    if not (isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED):
        negative = node.make("less", [index, node.scalar(0, index)])
        wrapped = node.make("add", [index, node.scalar(depth, index)])
        index = node.make("select", [negative, wrapped, index])
    index = reshape(node, index, [*shape[:axis], 1, *shape[axis:]])
    iota = np.arange(depth).reshape([depth if d == axis else 1 for d in range(rank)])
    hot = node.make("equal", [index, node.importer.constant_value(iota, i64, node.label)])
    return [node.make("select", [hot, on, off])]


@converter("NonZero")
def _nonzero(node: Node) -> list:
    """The indices of the nonzero elements, [rank, count], of known values
    (a small graph input is bound to them); otherwise the output's shape
    would depend on data."""
    values = np.asarray(node.constant(0, "the values the output shape depends on"))
    if values.ndim == 0:  # one element, [1, count], as onnxruntime (onnx infers rank 0's [0, ?])
        values = values.reshape(1)
        node.beyond_shape_inference = True
    return [np.array(np.nonzero(values), dtype=np.int64).reshape(values.ndim, -1)]


@converter("Unique")
def _unique(node: Node) -> list:
    """numpy.unique of known values (flattened, or slices along `axis`):
    the unique ones, their first indices, each input's index among them,
    and their counts; sorted, or (sorted=0) in order of first occurrence."""
    values = np.asarray(node.constant(0, "the values the output shape depends on"))
    axis = node.attr("axis")
    if axis is not None and not -values.ndim <= axis < values.ndim:
        raise node.error(f"axis {axis} is out of range for rank {values.ndim}")
    unique, first, inverse, counts = np.unique(
        values if axis is not None else values.reshape(-1),
        return_index=True, return_inverse=True, return_counts=True, axis=axis,
    )  # fmt: skip
    inverse = inverse.reshape(-1)
    if not node.attr("sorted", 1):
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        unique = np.take(unique, order, axis=0 if axis is None else axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return [unique, *(a.astype(np.int64) for a in (first, inverse, counts))]


@converter("Compress")
def _compress(node: Node) -> list:
    """numpy.compress: the positions the (known) condition keeps, gathered
    along `axis`, or from the flattened input without one."""
    x = node.value(0)
    condition = np.asarray(node.constant(1, "condition (it decides the output shape)"))
    if condition.ndim != 1:
        raise node.error(f"condition must be 1-D, got shape {list(condition.shape)}")
    axis = node.attr("axis")
    if axis is None:
        x = reshape(node, x, [math.prod(x.type.get_shape())])
        axis = 0
    rank = len(x.type.get_shape())
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    kept = np.flatnonzero(condition[: x.type.get_shape()[axis % rank]])
    where = node.importer.constant_value(kept.astype(np.int64), i64, node.label)
    return [node.make("gather", [x, where], axis=axis % rank)]


@converter("NonMaxSuppression")
def _non_max_suppression(node: Node) -> list:
    """[selected, 3] (batch, class, box) of known boxes and scores, as
    onnx's reference selects them: per batch and class, the boxes above
    score_threshold from the best score down (the lower index first on a
    tie), each kept unless its IoU with a kept one exceeds iou_threshold,
    at most max_output_boxes_per_class (0 when absent). The output's
    length depends on the values, so boxes computed at run time are
    refused (a graph input is bound to its value)."""
    boxes = np.asarray(node.constant(0, "the boxes (the output's length depends on them)"))
    scores = np.asarray(node.constant(1, "the scores (the output's length depends on them)"))
    limit, iou_limit, score_limit = (
        node.optional_constant(i, what) for i, what in ((2, "max_output_boxes_per_class"),
                                                        (3, "iou_threshold"), (4, "score_threshold"))
    )  # fmt: skip
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3:
        raise node.error(f"boxes {list(boxes.shape)} must be [B, N, 4] and scores [B, C, N]")
    if scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
        raise node.error(f"scores {list(scores.shape)} do not match boxes {list(boxes.shape)}")
    keep_most = max(int(limit.reshape(-1)[0]), 0) if limit is not None and limit.size else 0
    iou_limit = float(iou_limit.reshape(-1)[0]) if iou_limit is not None and iou_limit.size else 0.0
    lows, highs = _box_corners(
        boxes.astype(np.float64), node.require_attr("center_point_box", (0, 1), 0)
    )
    selected = []
    for batch, classes in enumerate(scores):
        areas = np.prod(highs[batch] - lows[batch], axis=-1)
        for klass, class_scores in enumerate(classes):
            order = np.argsort(-class_scores, kind="stable")
            if score_limit is not None and score_limit.size:
                order = order[class_scores[order] > float(score_limit.reshape(-1)[0])]
            kept: list[int] = []
            for box in order:
                if len(kept) == keep_most:
                    break
                if kept:
                    inner = np.minimum(highs[batch, kept], highs[batch, box]) - np.maximum(
                        lows[batch, kept], lows[batch, box]
                    )
                    overlap = np.where((inner > 0).all(-1), np.prod(inner, axis=-1), 0.0)
                    union = areas[kept] + areas[box] - overlap
                    valid = (overlap > 0) & (areas[kept] > 0) & (areas[box] > 0) & (union > 0)
                    iou = np.divide(overlap, union, out=np.zeros_like(overlap), where=valid)
                    if (valid & (iou > iou_limit)).any():
                        continue
                kept.append(int(box))
                selected.append((batch, klass, int(box)))
    return [np.array(selected, np.int64).reshape(-1, 3)]


def _box_corners(boxes: np.ndarray, center_point_box: int) -> tuple[np.ndarray, np.ndarray]:
    """Each box's (x, y) low and high corners: from [y1, x1, y2, x2] in
    any order, or (center_point_box=1) [x_center, y_center, width, height]."""
    if center_point_box == 1:
        half = boxes[..., 2:] / 2
        return boxes[..., :2] - half, boxes[..., :2] + half
    xs, ys = boxes[..., [1, 3]], boxes[..., [0, 2]]
    lows = np.stack([xs.min(-1), ys.min(-1)], axis=-1)
    highs = np.stack([xs.max(-1), ys.max(-1)], axis=-1)
    return lows, highs
