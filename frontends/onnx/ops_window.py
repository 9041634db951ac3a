"""Converters of ONNX's convolution and pooling ops (registered in
`ops.CONVERTERS`): windows resolved against the static input shape, 1-D
windows run as 2-D ones."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, reshape


def _window(
    node: Node, spatial: Sequence[int], kernel: Sequence[int]
) -> tuple[list[int], list[int], list[int]]:
    """Strides, dilations and pads (begins then ends) of a window op,
    auto_pad resolved against the static input shape."""
    count = len(spatial)
    strides = list(node.attr("strides", [1] * count))
    dilations = list(node.attr("dilations", [1] * count))
    pads = list(node.attr("pads", [0] * 2 * count))
    auto_pad = node.require_attr(
        "auto_pad", ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"], "NOTSET"
    )
    if auto_pad == "VALID":
        pads = [0] * 2 * count
    elif auto_pad.startswith("SAME"):
        for d in range(count):
            extent = (kernel[d] - 1) * dilations[d] + 1
            total = max(
                (math.ceil(spatial[d] / strides[d]) - 1) * strides[d] + extent - spatial[d], 0
            )
            small = total // 2
            pads[d], pads[count + d] = (
                (small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small)
            )
    return strides, dilations, pads


def _as_2d(node: Node, value: SSAValue) -> SSAValue:
    """An N x C x W tensor as N x C x 1 x W (1-D windows run as 2-D ones)."""
    shape = value.type.get_shape()
    if len(shape) == 4:
        return value
    if len(shape) != 3:
        raise node.error(f"{len(shape) - 2}-D windows are not supported (1-D and 2-D only)")
    return reshape(node, value, [shape[0], shape[1], 1, shape[2]])


def _params_2d(values: Sequence[int], fill: int) -> list[int]:
    return list(values) if len(values) == 2 else [fill, *values]


def _pads_2d(pads: Sequence[int]) -> list[int]:
    return list(pads) if len(pads) == 4 else [0, pads[0], 0, pads[1]]


@converter("Conv")
def _conv(node: Node) -> list:
    x, weight = node.value(0), node.value(1)
    spatial, kernel = node.shape(0)[2:], node.shape(1)[2:]
    node.attr("kernel_shape")
    strides, dilations, pads = _window(node, spatial, kernel)
    result = node.make(
        "conv2d",
        [_as_2d(node, x), _as_2d(node, weight)],
        strides=_params_2d(strides, 1),
        dilations=_params_2d(dilations, 1),
        padding=_pads_2d(pads),
        groups=int(node.attr("group", 1)),
    )
    if node.has_input(2):
        channels = result.type.get_shape()[1]
        result = node.make("add", [result, reshape(node, node.value(2), [channels, 1, 1])])
    return [reshape(node, result, node.require_output_type().get_shape())]


def _pool_kernel(node: Node, spatial: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    kernel = list(node.attr("kernel_shape"))
    strides, dilations, pads = _window(node, spatial, kernel)
    if any(d != 1 for d in dilations):
        raise node.unsupported_attribute("dilations")
    return kernel, strides, pads


def _check_output_size(node: Node, result: SSAValue) -> SSAValue:
    """The pooled size is the floor one: ceil_mode only where the windows fit exactly."""
    expected = node.require_output_type().get_shape()
    ceil_mode = node.attr("ceil_mode", 0)
    if list(result.type.get_shape()[4 - len(expected) + 2 :]) != list(expected[2:]):
        if ceil_mode:
            raise node.unsupported_attribute("ceil_mode", "the last window is partial")
        raise node.error(f"pooled shape {result.type} differs from the inferred {expected}")
    return reshape(node, result, expected)


@converter("MaxPool")
def _max_pool(node: Node) -> list:
    node.require_attr("storage_order", [0], 0)
    x = node.value(0)
    kernel, strides, pads = _pool_kernel(node, node.shape(0)[2:])
    if min(pads) < 0 or any(p >= k for p, k in zip(pads, kernel * 2, strict=True)):
        raise node.unsupported_attribute("pads", "each pad must be smaller than the window")
    result = node.make(
        "max_pool2d",
        [_as_2d(node, x)],
        kernel=_params_2d(kernel, 1),
        strides=_params_2d(strides, 1),
        padding=_pads_2d(pads),
    )
    return [_check_output_size(node, result)]


@converter("AveragePool")
def _average_pool(node: Node) -> list:
    x = _as_2d(node, node.value(0))
    kernel, strides, pads = _pool_kernel(node, node.shape(0)[2:])
    kernel, strides, pads = _params_2d(kernel, 1), _params_2d(strides, 1), _pads_2d(pads)
    if node.attr("count_include_pad", 0) and any(pads):  # the zeros count: pad them in
        x = node.make("pad", [x], pads=[0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]])
        pads = [0, 0, 0, 0]
    result = node.make("avg_pool2d", [x], kernel=kernel, strides=strides, padding=pads)
    return [_check_output_size(node, result)]


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(node: Node) -> list:
    x = node.value(0)
    reduction = "reduce_mean" if node.op_type == "GlobalAveragePool" else "reduce_max"
    return [node.make(reduction, [x], axes=list(range(2, len(x.type.get_shape()))), keep_dims=True)]
