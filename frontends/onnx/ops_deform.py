"""Converters of the ONNX ops that sample their input at computed positions
with bilinear weights: DeformConv and RoiAlign. Both are composed from
graph ops, every sample position at once:

- DeformConv: each output position's kernel taps sit at the regular
  convolution's positions plus the offsets input; each tap reads the
  four pixels around it (bilinear weights, a pixel outside the image
  reads 0, as onnx's reference samples with GridSample), scaled by the
  mask. The sampled columns [N, C * K, P] then meet the weights in one
  grouped matmul, as an im2col convolution.
- RoiAlign: each region of interest's output bin averages (or takes the
  max of) sampling_ratio x sampling_ratio bilinear samples, clamped at
  the borders as onnxruntime and onnx's reference do; a sample beyond
  one pixel outside the image counts as 0. sampling_ratio 0 (adaptive)
  would make the sample count depend on the rois' values: refused.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, cast, converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis


class _Corners:
    """Bilinear taps of coordinate tensors of one float type."""

    def __init__(self, node: Node, like: SSAValue):
        self.node, self.like = node, like

    def c(self, value: float) -> SSAValue:
        return self.node.scalar(value, self.like)

    def op(self, name: str, *operands: SSAValue) -> SSAValue:
        return self.node.make(name, list(operands))

    def zero_padded(self, x: SSAValue, size: int) -> list[tuple[SSAValue, SSAValue]]:
        """(clamped pixel index, weight) of the two pixels around x; a
        pixel outside [0, size) weighs 0."""
        low = self.op("floor", x)
        t = self.op("sub", x, low)
        taps = []
        for index, weight in ((low, self.op("sub", self.c(1.0), t)),
                              (self.op("add", low, self.c(1.0)), t)):  # fmt: skip
            inside = self.op("logical_and", self.op("greater_equal", index, self.c(0.0)),
                             self.op("less_equal", index, self.c(size - 1.0)))  # fmt: skip
            weight = self.op("mul", weight, cast(self.node, inside, self.like.type.element_type))
            taps.append((self.clamp(index, size), weight))
        return taps

    def clamped(self, x: SSAValue, size: int) -> list[tuple[SSAValue, SSAValue]]:
        """RoiAlign's two pixels around x: x below 0 reads pixel 0, and from
        the last pixel on both taps are the last pixel."""
        x = self.op("maximum", x, self.c(0.0))
        low = self.op("floor", x)
        at_end = self.op("greater_equal", low, self.c(size - 1.0))
        low = self.op("select", at_end, self.c(size - 1.0), low)
        x = self.op("select", at_end, self.c(size - 1.0), x)
        high = self.op("select", at_end, low, self.op("add", low, self.c(1.0)))
        t = self.op("sub", x, low)
        return [(low, self.op("sub", self.c(1.0), t)), (high, t)]

    def clamp(self, index: SSAValue, size: int) -> SSAValue:
        return self.op("minimum", self.op("maximum", index, self.c(0.0)), self.c(size - 1.0))


def _gather_pixels(node: Node, image: SSAValue, index: SSAValue) -> SSAValue:
    """image [..., C, H * W] read at float pixel indices [..., 1, S] (every
    channel at the same pixels)."""
    *outer, channels, _ = image.type.get_shape()
    samples = index.type.get_shape()[-1]
    where = node.make(
        "broadcast_to", [cast(node, index, i64)], TensorType(i64, [*outer, channels, samples])
    )
    return node.make("gather_elements", [image, where], axis=len(outer) + 1)


def _image(node: Node) -> tuple[SSAValue, list[int]]:
    """Input 0 and its shape, which must be [N, C, H, W] (2-D only)."""
    x = _float_input(node)
    if len(x.type.get_shape()) != 4:
        raise node.error(
            f"input has shape {x.type.get_shape()}; 2-D {node.op_type} only (N, C, H, W)"
        )
    return x, list(x.type.get_shape())


@converter("DeformConv")
def _deform_conv(node: Node) -> list:
    x, (n, channels, height, width) = _image(node)
    weight, offset = node.value(1), node.value(2)
    out_channels, group_channels, *kernel = weight.type.get_shape()
    kernel = list(node.attr("kernel_shape", kernel))
    strides = list(node.attr("strides", [1, 1]))
    dilations = list(node.attr("dilations", [1, 1]))
    pads = list(node.attr("pads", [0, 0, 0, 0]))
    groups, offset_groups = int(node.attr("group", 1)), int(node.attr("offset_group", 1))
    taps = math.prod(kernel)
    out = [
        (size + pads[d] + pads[d + 2] - dilations[d] * (kernel[d] - 1) - 1) // strides[d] + 1
        for d, size in enumerate((height, width))
    ]
    if (
        group_channels * groups != channels
        or out_channels % groups
        or channels % offset_groups
        or list(offset.type.get_shape()) != [n, offset_groups * taps * 2, *out]
    ):
        raise node.error(
            f"X {x.type.get_shape()}, W {weight.type.get_shape()} and offset "
            f"{offset.type.get_shape()} do not fit group {groups}, offset_group "
            f"{offset_groups}, kernel {kernel} (offset [{n}, {offset_groups * taps * 2}, "
            f"{out[0]}, {out[1]}] expected)"
        )
    points = math.prod(out)
    corners = _Corners(node, x)
    element = x.type.element_type
    # base[d][k, p]: tap k's regular position along d at output position p
    kernel_grid = np.indices(kernel).reshape(2, taps)
    out_grid = np.indices(out).reshape(2, points)
    offsets = reshape(node, offset, [n, offset_groups, taps, 2, points])
    samples = []
    for d, size in enumerate((height, width)):
        base = out_grid[d][None, :] * strides[d] - pads[d] + kernel_grid[d][:, None] * dilations[d]
        moved = reshape(node, _slice_axis(node, offsets, 3, d, 1), [n, offset_groups, taps, points])
        position = node.make(
            "add", [moved, node.importer.constant_value(base.astype(float), element, node.label)]
        )
        samples.append(
            corners.zero_padded(reshape(node, position, [n, offset_groups, 1, taps * points]), size)
        )
    image = reshape(node, x, [n, offset_groups, channels // offset_groups, height * width])
    sampled = None
    for row, row_weight in samples[0]:
        for column, column_weight in samples[1]:
            index = corners.op("add", corners.op("mul", row, corners.c(float(width))), column)
            value = node.make(
                "mul",
                [_gather_pixels(node, image, index), corners.op("mul", row_weight, column_weight)],
            )
            sampled = value if sampled is None else node.make("add", [sampled, value])
    if node.has_input(4):
        mask = reshape(node, node.value(4), [n, offset_groups, 1, taps * points])
        sampled = node.make("mul", [sampled, cast(node, mask, element)])
    columns = reshape(node, sampled, [n, groups, group_channels * taps, points])
    weights = reshape(
        node, cast(node, weight, element), [groups, out_channels // groups, group_channels * taps]
    )
    result = reshape(node, node.make("matmul", [weights, columns]), [n, out_channels, *out])
    if node.has_input(3):
        bias = reshape(node, cast(node, node.value(3), element), [1, out_channels, 1, 1])
        result = node.make("add", [result, bias])
    return [result]


@converter("RoiAlign")
def _roi_align(node: Node) -> list:
    x, (n, channels, height, width) = _image(node)
    rois, batch_indices = node.value(1), node.value(2)
    count = rois.type.get_shape()[0] if len(rois.type.get_shape()) == 2 else -1
    if list(rois.type.get_shape()) != [count, 4] or list(batch_indices.type.get_shape()) != [count]:
        raise node.error(
            f"rois {rois.type.get_shape()} and batch_indices {batch_indices.type.get_shape()} "
            "must be [R, 4] and [R]"
        )
    out = [int(node.attr("output_height", 1)), int(node.attr("output_width", 1))]
    ratio = int(node.attr("sampling_ratio", 0))
    if ratio <= 0:
        raise node.error(
            f"attribute 'sampling_ratio' = {ratio} (adaptive) is not supported: the sample "
            "count would depend on the rois' values"
        )
    mode = node.require_attr("mode", ["avg", "max"], "avg")
    half_pixel = (
        node.require_attr(
            "coordinate_transformation_mode", ["half_pixel", "output_half_pixel"], "half_pixel"
        )
        == "half_pixel"
    )
    scale = float(node.attr("spatial_scale", 1.0))
    element = x.type.element_type
    corners = _Corners(node, x)
    boxes = node.make("mul", [cast(node, rois, element), corners.c(scale)])
    if half_pixel:
        boxes = node.make("sub", [boxes, corners.c(0.5)])
    per_axis = []
    for d, size in enumerate((height, width)):  # rois hold x1, y1, x2, y2
        start = _slice_axis(node, boxes, 1, 1 - d, 1)
        extent = node.make("sub", [_slice_axis(node, boxes, 1, 3 - d, 1), start])
        if not half_pixel:  # malformed rois become 1 x 1
            extent = node.make("maximum", [extent, corners.c(1.0)])
        steps = (np.arange(out[d])[:, None] + (np.arange(ratio) + 0.5) / ratio).reshape(1, -1)
        fraction = node.importer.constant_value(steps / out[d], element, node.label)
        position = node.make("add", [start, node.make("mul", [extent, fraction])])  # [R, S_d]
        outside = node.make(
            "logical_or",
            [node.make("less", [position, corners.c(-1.0)]),
             node.make("greater", [position, corners.c(float(size))])],
        )  # fmt: skip
        per_axis.append((outside, corners.clamped(position, size)))
    rows, columns = out[0] * ratio, out[1] * ratio
    (rows_outside, row_taps), (columns_outside, column_taps) = per_axis
    outside = node.make(
        "logical_or",
        [
            reshape(node, rows_outside, [count, rows, 1]),
            reshape(node, columns_outside, [count, 1, columns]),
        ],
    )
    inside = cast(node, node.make("logical_not", [outside]), element)
    image = node.make(
        "gather", [reshape(node, x, [n, channels, height * width]), batch_indices], axis=0
    )
    taps = []
    for row, row_weight in row_taps:
        for column, column_weight in column_taps:
            index = node.make(
                "add",
                [reshape(node, node.make("mul", [row, corners.c(float(width))]), [count, rows, 1]),
                 reshape(node, column, [count, 1, columns])],
            )  # fmt: skip
            weight = node.make(
                "mul",
                [
                    reshape(node, row_weight, [count, rows, 1]),
                    reshape(node, column_weight, [count, 1, columns]),
                ],
            )
            weight = reshape(node, node.make("mul", [weight, inside]), [count, 1, rows * columns])
            value = _gather_pixels(node, image, reshape(node, index, [count, 1, rows * columns]))
            taps.append(node.make("mul", [value, weight]))
    combine = "add" if mode == "avg" else "maximum"
    sampled = taps[0]
    for tap in taps[1:]:
        sampled = node.make(combine, [sampled, tap])
    bins = reshape(node, sampled, [count, channels, out[0], ratio, out[1], ratio])
    reduction = "reduce_sum" if mode == "avg" else "reduce_max"
    result = node.make(reduction, [bins], axes=[3, 5], keep_dims=False)
    if mode == "avg":
        result = node.make("div", [result, corners.c(float(ratio * ratio))])
    return [result]
