"""Converters of the ONNX ops that map window positions back to the input:
MaxPool's Indices output, MaxUnpool and Col2Im (torch's nn.Fold).

- MaxPool's indices: the window's taps (strided slices of the input padded
  with the type's lowest value) are stacked on a new last axis; argmax
  picks the first tap holding the maximum (row-major window order, as
  onnxruntime scans), and the tap's position in the input follows by
  integer arithmetic on it, as a flat index over the whole input tensor
  (row-major, or column-major planes with storage_order 1).
- MaxUnpool writes each value at its flat index of a zero tensor of the
  inferred shape (graph.scatter_elements over one axis), placed at the
  start of `output_shape` when given (onnx's reference).
- Col2Im adds each column's block elements at their image positions: one
  scatter_elements with reduction add along the flattened image, its
  indices known at import; a position in the padding gets an index
  outside the image, which writes nothing.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, reshape
from graphcompiler.frontends.onnx.ops_window import (
    _kernel,
    _lowest,
    _pad_spatial,
    _pool_window,
    _slice_axis,
    _spatial_rank,
    _window,
    pool,
)


def _wants_indices(node: Node) -> bool:
    return len(node.proto.output) > 1 and node.proto.output[1] != ""


def _max_pool_indices(node: Node, x: SSAValue, kernel: list[int]) -> SSAValue:
    """The flat input index of each window's (first) maximum."""
    n, c, *spatial = x.type.get_shape()
    rank = len(spatial)
    storage_order = int(node.attr("storage_order", 0))
    if storage_order not in (0, 1) or (storage_order and rank != 2):
        raise node.unsupported_attribute("storage_order", "column-major indices of 2-D pools only")
    strides, dilations, begins, ends, extra, counts = _pool_window(node, spatial, kernel)
    if 0 in counts or 0 in x.type.get_shape():
        return node.importer.constant_value(np.zeros([n, c, *counts]), i64, node.label)
    ends = [e + more for e, more in zip(ends, extra, strict=True)]
    padded = _pad_spatial(node, x, begins, ends, _lowest(x.type.element_type))
    taps = []
    for tap in itertools.product(*(range(k) for k in kernel)):
        value = padded
        for d in range(rank):
            value = _slice_axis(node, value, 2 + d, tap[d] * dilations[d], counts[d], strides[d])
        taps.append(reshape(node, value, [n, c, *counts, 1]))
    stacked = node.make("concat", taps, axis=2 + rank) if len(taps) > 1 else taps[0]
    chosen = node.make("argmax", [stacked], axis=2 + rank, keep_dims=False)

    plane_strides = [
        math.prod(spatial[:d] if storage_order else spatial[d + 1 :]) for d in range(rank)
    ]
    index = node.importer.constant_value(
        (np.arange(n * c) * math.prod(spatial)).reshape([n, c] + [1] * rank), i64, node.label
    )
    for d in range(rank):
        inner = math.prod(kernel[d + 1 :])
        tap_d = node.make("mod", [node.make("div", [chosen, node.scalar(inner, chosen)]),
                                  node.scalar(kernel[d], chosen)])  # fmt: skip
        starts = np.arange(counts[d]) * strides[d] - begins[d]
        start = node.importer.constant_value(
            starts.reshape([counts[d]] + [1] * (rank - 1 - d)), i64, node.label
        )
        position = node.make(
            "add", [node.make("mul", [tap_d, node.scalar(dilations[d], tap_d)]), start]
        )
        index = node.make(
            "add", [index, node.make("mul", [position, node.scalar(plane_strides[d], position)])]
        )
    return index


@converter("MaxPool")
def _max_pool(node: Node) -> list:
    x = node.value(0)
    _spatial_rank(node, x)
    kernel = _kernel(node)
    _, dilations, pads = _window(node, x.type.get_shape()[2:], kernel)
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)] * 2
    if min(pads) < 0 or any(p >= e for p, e in zip(pads, extents, strict=True)):
        raise node.unsupported_attribute("pads", "each pad must be smaller than the window")
    values = pool(node, x, "max", kernel)
    if not _wants_indices(node):
        node.attr("storage_order")  # only orders the indices
        return [values]
    return [values, _max_pool_indices(node, x, kernel)]


@converter("MaxUnpool")
def _max_unpool(node: Node) -> list:
    x, indices = node.value(0), node.value(1)
    n, c, *spatial = x.type.get_shape()
    _spatial_rank(node, x)
    kernel = _kernel(node)
    rank = len(spatial)
    strides = list(node.attr("strides", [1] * rank))
    pads = list(node.attr("pads", [0] * 2 * rank))
    if len(kernel) != rank or len(strides) != rank or len(pads) != 2 * rank:
        raise node.error(f"kernel_shape, strides and pads must describe {rank}-D windows")
    if list(indices.type.get_shape()) != [n, c, *spatial]:
        raise node.error(f"the indices' shape {indices.type.get_shape()} differs from X's")
    inferred = [
        (size - 1) * s - pads[d] - pads[rank + d] + k
        for d, (size, s, k) in enumerate(zip(spatial, strides, kernel, strict=True))
    ]
    if min(inferred) <= 0:
        raise node.error(f"the unpooled shape {inferred} is empty")
    shape = [n, c, *inferred]
    if node.has_input(2):
        shape = [int(v) for v in node.constant(2, "output_shape")]
        if (
            len(shape) != rank + 2
            or shape[:2] != [n, c]
            or any(size < want for size, want in zip(shape[2:], inferred, strict=True))
        ):
            raise node.error(f"output_shape {shape} does not hold the unpooled {[n, c, *inferred]}")
    zeros = node.importer.constant_value(
        np.zeros(n * c * math.prod(inferred)), x.type.element_type, node.label
    )
    count = n * c * math.prod(spatial)
    flat_indices = reshape(node, indices, [count])
    if flat_indices.type.element_type != i64:
        flat_indices = node.make("cast", [flat_indices], TensorType(i64, [count]))
    scattered = node.make("scatter_elements", [zeros, flat_indices, reshape(node, x, [count])])
    unpooled = reshape(node, scattered, [n, c, *inferred])
    ends = [want - size for want, size in zip(shape[2:], inferred, strict=True)]
    return [_pad_spatial(node, unpooled, [0] * rank, ends)]


@converter("Col2Im")
def _col2im(node: Node) -> list:
    x = node.value(0)
    image = [int(v) for v in node.constant(1, "image_shape")]
    block = [int(v) for v in node.constant(2, "block_shape")]
    rank = len(image)
    if len(block) != rank or rank == 0:
        raise node.error(f"image_shape {image} and block_shape {block} differ in rank")
    dilations = list(node.attr("dilations", [1] * rank))
    pads = list(node.attr("pads", [0] * 2 * rank))
    strides = list(node.attr("strides", [1] * rank))
    if len(x.type.get_shape()) != 3:
        raise node.error(f"input has shape {x.type.get_shape()}; [N, C * prod(block), L] expected")
    n, channels_blocks, columns = x.type.get_shape()
    taps = math.prod(block)
    counts = [
        (size + pads[d] + pads[rank + d] - dilations[d] * (k - 1) - 1) // strides[d] + 1
        for d, (size, k) in enumerate(zip(image, block, strict=True))
    ]
    if channels_blocks % taps or math.prod(counts) != columns or min(counts) <= 0:
        raise node.error(
            f"input has shape {x.type.get_shape()}; the blocks {block} over the image {image} "
            f"give {math.prod(counts)} columns of C * {taps} values"
        )
    # positions[d][k, l]: the image coordinate of block element k of column l along d
    block_grid = np.indices(block).reshape(rank, taps)
    column_grid = np.indices(counts).reshape(rank, columns)
    flat = np.zeros((taps, columns), np.int64)
    inside = np.ones((taps, columns), bool)
    for d in range(rank):
        at = column_grid[d][None, :] * strides[d] - pads[d] + block_grid[d][:, None] * dilations[d]
        inside &= (at >= 0) & (at < image[d])
        flat = flat * image[d] + at
    pixels = math.prod(image)
    flat = np.where(inside, flat, pixels).reshape(-1)  # outside: writes nothing
    c = channels_blocks // taps
    positions = node.importer.constant_value(flat, i64, node.label)
    positions = node.make("broadcast_to", [positions], TensorType(i64, [n, c, taps * columns]))
    zeros = node.importer.constant_value(np.zeros([n, c, pixels]), x.type.element_type, node.label)
    values = reshape(node, x, [n, c, taps * columns])
    summed = node.make("scatter_elements", [zeros, positions, values], axis=2, reduction="add")
    return [reshape(node, summed, [n, c, *image])]
