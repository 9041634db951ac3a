"""Converters of ONNX's convolution and pooling ops (registered in
`ops.CONVERTERS`) over 1-D, 2-D and 3-D windows of the static input shape.

The graph dialect has 2-D windows only (conv2d, max_pool2d, avg_pool2d), so
the rest is composed from them and from data movement:

- 1-D windows run as 2-D ones over an N x C x 1 x W view.
- A 3-D Conv folds depth into the batch: the KD depth slices a kernel
  sees are stacked as channels (an im2col along depth only), so one conv2d
  with KD times the input channels computes it.
- ConvTranspose (ops_conv_transpose.py) is one convolution of the input
  per output phase, interleaved.
- Pooling is separable: the last two spatial axes run as one 2-D pool (the
  leading ones folded into the channels); a dilated axis and the depth axis
  of a 3-D pool take the max or sum of their window's taps (strided slices).
  ceil_mode adds end padding that is never counted, as onnx's reference.

Output shapes follow from the input shapes and attributes (the graph ops'
infer_type), never from ONNX shape inference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, in_f32, reshape

_AUTO_PADS = ["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"]


def _spatial_rank(node: Node, value: SSAValue) -> int:
    rank = len(value.type.get_shape()) - 2
    if rank not in (1, 2, 3):
        raise node.error(f"{rank}-D windows are not supported (1-D, 2-D and 3-D only)")
    return rank


def _window(
    node: Node, spatial: Sequence[int], kernel: Sequence[int]
) -> tuple[list[int], list[int], list[int]]:
    """Strides, dilations and pads (begins then ends) of a window op,
    auto_pad resolved against the static input shape."""
    count = len(spatial)
    strides = list(node.attr("strides", [1] * count))
    dilations = list(node.attr("dilations", [1] * count))
    pads = list(node.attr("pads", [0] * 2 * count))
    auto_pad = node.require_attr("auto_pad", _AUTO_PADS, "NOTSET")
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


def _pad_spatial(
    node: Node, x: SSAValue, begins: Sequence[int], ends: Sequence[int], fill: float = 0.0
) -> SSAValue:
    """x padded (or, by negative amounts, cropped) along its spatial dims."""
    if not any(begins) and not any(ends):
        return x
    return node.make("pad", [x], pads=[0, 0, *begins, 0, 0, *ends], value=fill)


def _slice_axis(
    node: Node, x: SSAValue, axis: int, start: int, count: int, step: int = 1
) -> SSAValue:
    """`count` elements of dim `axis` from `start`, `step` apart."""
    shape = list(x.type.get_shape())
    starts = [start if d == axis else 0 for d in range(len(shape))]
    ends = [start + (count - 1) * step + 1 if d == axis else s for d, s in enumerate(shape)]
    steps = [step if d == axis else 1 for d in range(len(shape))]
    return node.make("slice", [x], starts=starts, ends=ends, steps=steps)


# --- convolution --------------------------------------------------------------------


def convolution(
    node: Node,
    x: SSAValue,
    weight: SSAValue,
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    groups: int,
) -> SSAValue:
    """ONNX Conv without bias over a 1-D, 2-D or 3-D input; negative pads
    crop the input first."""
    rank = len(strides)
    if min(pads) < 0:
        x = _pad_spatial(node, x, pads[:rank], pads[rank:])
        pads = [0] * 2 * rank
    (n, c, *spatial), (o, i, *kernel) = x.type.get_shape(), weight.type.get_shape()
    if c % groups or o % groups or i * groups != c:
        raise node.error(
            f"group {groups} does not fit {c} input channels, {o} outputs and weight {[o, i]}"
        )
    if rank == 1:
        result = node.make(
            "conv2d",
            [reshape(node, x, [n, c, 1, *spatial]), reshape(node, weight, [o, i, 1, *kernel])],
            strides=[1, *strides],
            dilations=[1, *dilations],
            padding=[0, pads[0], 0, pads[1]],
            groups=groups,
        )
        return reshape(node, result, [n, o, result.type.get_shape()[3]])
    if rank == 3:
        return _conv3d(node, x, weight, strides, dilations, pads, groups)
    return node.make(
        "conv2d", [x, weight], strides=strides, dilations=dilations, padding=pads, groups=groups
    )


def _conv3d(node: Node, x, weight, strides, dilations, pads, groups: int) -> SSAValue:
    """Depth folded into the batch: the KD depth taps of each output depth
    stacked as channels ([group, tap, channel] order, so groups still split
    them), against the weight's taps stacked the same way."""
    (n, c, depth, h, w), (o, i, kd, kh, kw) = x.type.get_shape(), weight.type.get_shape()
    out_depth = (depth + pads[0] + pads[3] - dilations[0] * (kd - 1) - 1) // strides[0] + 1
    if out_depth <= 0:
        raise node.error(f"the window does not fit the input depth {depth}")
    x = _pad_spatial(node, x, [pads[0], 0, 0], [pads[3], 0, 0])
    taps = [
        reshape(
            node,
            _slice_axis(node, x, 2, tap * dilations[0], out_depth, strides[0]),
            [n, groups, 1, c // groups, out_depth, h, w],
        )
        for tap in range(kd)
    ]
    stacked = taps[0] if kd == 1 else node.make("concat", taps, axis=2)
    stacked = node.make("transpose", [stacked], perm=[0, 4, 1, 2, 3, 5, 6])
    folded = reshape(node, stacked, [n * out_depth, kd * c, h, w])
    weight = node.make("transpose", [weight], perm=[0, 2, 1, 3, 4])
    result = node.make(
        "conv2d",
        [folded, reshape(node, weight, [o, kd * i, kh, kw])],
        strides=strides[1:],
        dilations=dilations[1:],
        padding=[pads[1], pads[2], pads[4], pads[5]],
        groups=groups,
    )
    out_h, out_w = result.type.get_shape()[2:]
    result = reshape(node, result, [n, out_depth, o, out_h, out_w])
    return node.make("transpose", [result], perm=[0, 2, 1, 3, 4])


def _with_bias(node: Node, result: SSAValue) -> SSAValue:
    if not node.has_input(2):
        return result
    _, channels, *spatial = result.type.get_shape()
    bias = reshape(node, node.value(2), [channels] + [1] * len(spatial))
    return node.make("add", [result, bias])


@converter("Conv")
def _conv(node: Node) -> list:
    x, weight = node.value(0), node.value(1)
    _spatial_rank(node, x)
    node.attr("kernel_shape")
    strides, dilations, pads = _window(node, node.shape(0)[2:], node.shape(1)[2:])
    groups = int(node.attr("group", 1))
    return [_with_bias(node, convolution(node, x, weight, strides, dilations, pads, groups))]


# --- pooling -----------------------------------------------------------------------


def _pool_window(node: Node, spatial: Sequence[int], kernel: Sequence[int]):
    """(strides, dilations, begins, ends, extra, counts): the window of a
    pooling node, `extra` the end padding a last window sticking out of the
    padded input adds, never counted (ceil_mode's; the last window may start
    in the input or the begin padding), `counts` the windows along each dim."""
    rank = len(spatial)
    if len(kernel) != rank:
        raise node.error(f"kernel_shape {list(kernel)} does not fit {rank}-D windows")
    strides, dilations, pads = _window(node, spatial, kernel)
    ceil_mode = node.attr("ceil_mode", 0)
    begins, ends, extra, counts = pads[:rank], pads[rank:], [], []
    for d in range(rank):
        extent = (kernel[d] - 1) * dilations[d] + 1
        room = spatial[d] + begins[d] + ends[d] - extent
        # C's division, as onnxruntime and onnx's shape inference: a window
        # sticking out past the padded input by less than a stride still counts
        count = (room // strides[d] if room >= 0 else -(-room // strides[d])) + 1
        if ceil_mode:
            count = -(-room // strides[d]) + 1
            if (count - 1) * strides[d] >= spatial[d] + begins[d]:
                count -= 1  # as onnxruntime and torch; onnx's shape inference keeps it
                node.beyond_shape_inference = True
        count = max(count, 0)  # no window at all: an empty result
        counts.append(count)
        extra.append(max(0, (count - 1) * strides[d] + extent - spatial[d] - begins[d] - ends[d]))
    return strides, dilations, begins, ends, extra, counts


def pool(
    node: Node, x: SSAValue, kind: str, kernel: Sequence[int], count_pads: bool = False
) -> SSAValue:
    """Max, average or sum (`kind`) pooling of the node's window over a
    1-D, 2-D or 3-D input; `count_pads`: the average counts the zero pads."""
    rank = len(kernel)
    strides, dilations, begins, ends, extra, counts = _pool_window(
        node, x.type.get_shape()[2:], kernel
    )
    if 0 in counts or 0 in x.type.get_shape():
        shape = [*x.type.get_shape()[:2], *counts]
        return node.importer.constant_value(np.zeros(shape), x.type.element_type, node.label)
    if kind == "sum" or count_pads:  # the pads count: make them zeros of the input
        counted = extra if kind == "sum" else [0] * rank  # a sum counts ceil_mode's pads too
        x = _pad_spatial(node, x, begins, [e + more for e, more in zip(ends, counted, strict=True)])
        begins, ends = [0] * rank, [more - c for more, c in zip(extra, counted, strict=True)]
    else:
        ends = [e + more for e, more in zip(ends, extra, strict=True)]
    native = [d for d in range(max(0, rank - 2), rank) if dilations[d] == 1]
    if native:
        x = _pool_2d(node, x, kind, native, kernel, strides, begins, ends)
    for d in range(rank):
        if d not in native:
            window = (kernel[d], strides[d], dilations[d], begins[d], ends[d])
            x = _pool_taps(node, x, kind, 2 + d, *window)
    return x


def _pool_2d(node: Node, x, kind: str, native, kernel, strides, begins, ends) -> SSAValue:
    """One max_pool2d / avg_pool2d over the spatial axes `native` (among
    the last two); the other spatial axes are folded into the channels."""
    n, c, *spatial = x.type.get_shape()
    rank = len(spatial)
    axes = [rank - 2, rank - 1]  # the 2-D view's H and W (H is a unit dim for 1-D)
    view = [n, c * math.prod(spatial[:-2]), *[spatial[d] if d >= 0 else 1 for d in axes]]

    def params(values: Sequence[int], other: int) -> list[int]:
        return [values[d] if d in native else other for d in axes]

    pooled = node.make(
        "max_pool2d" if kind == "max" else "avg_pool2d",
        [reshape(node, x, view)],
        kernel=params(kernel, 1),
        strides=params(strides, 1),
        padding=params(begins, 0) + params(ends, 0),
    )
    if kind == "sum":  # every tap is in the (explicitly padded) input
        pooled = node.make("mul", [pooled, node.scalar(math.prod(params(kernel, 1)), pooled)])
    out = pooled.type.get_shape()[2:]
    return reshape(node, pooled, [n, c, *spatial[:-2], *out[-min(rank, 2) :]])


def _pool_taps(node: Node, x, kind: str, axis: int, kernel, stride, dilation, begin, end):
    """Pooling along one axis as the max or sum of the window's taps,
    strided slices of the padded input; the average divides by the count
    of taps inside the input, known at import time."""
    shape = x.type.get_shape()
    size = shape[axis]
    count = (size + begin + end - dilation * (kernel - 1) - 1) // stride + 1
    fill = _lowest(x.type.element_type) if kind == "max" else 0.0
    pads = [begin if d == axis else 0 for d in range(len(shape))] + [
        end if d == axis else 0 for d in range(len(shape))
    ]
    padded = node.make("pad", [x], pads=pads, value=fill) if begin or end else x
    combine = "maximum" if kind == "max" else "add"
    result = None
    for tap in range(kernel):
        value = _slice_axis(node, padded, axis, tap * dilation, count, stride)
        result = value if result is None else node.make(combine, [result, value])
    if kind == "avg":
        positions = np.arange(count)[:, None] * stride + np.arange(kernel) * dilation - begin
        inside = ((positions >= 0) & (positions < size)).sum(axis=1)
        counts = inside.reshape([count] + [1] * (len(shape) - axis - 1))
        divisor = node.importer.constant_value(counts, x.type.element_type, node.label)
        result = node.make("div", [result, divisor])
    return result


def _lowest(element) -> float:
    """What max pooling pads with: -inf, or the integer type's minimum."""
    if graph.is_float(element):
        return -math.inf
    if not isinstance(element, IntegerType) or element.signedness.data == Signedness.UNSIGNED:
        return 0.0
    return float(-(2 ** (element.width.data - 1)))


def _kernel(node: Node) -> list[int]:
    kernel = node.attr("kernel_shape")
    if kernel is None:
        raise node.error("attribute 'kernel_shape' is missing")
    return list(kernel)


@converter("AveragePool")
def _average_pool(node: Node) -> list:
    x = node.value(0)
    _spatial_rank(node, x)
    return [pool(node, x, "avg", _kernel(node), bool(node.attr("count_include_pad", 0)))]


@converter("LpPool", "GlobalLpPool")
def _lp_pool(node: Node) -> list:
    """(sum over the window of |x| ** p) ** (1 / p), the pads zeros; the
    global form's window is all of the spatial dims."""
    x, back = in_f32(node, node.value(0))
    rank = _spatial_rank(node, x)
    p = int(node.attr("p", 2))
    if p <= 0:
        raise node.unsupported_attribute("p", "p must be positive")
    powered = {1: "abs", 2: "square"}.get(p)
    powered = (
        node.make(powered, [x])
        if powered
        else node.make("pow", [node.make("abs", [x]), node.scalar(float(p), x)])
    )
    if node.op_type == "GlobalLpPool":
        spatial = list(range(2, 2 + rank))
        total = node.make("reduce_sum", [powered], axes=spatial, keep_dims=True)
    else:
        total = pool(node, powered, "sum", _kernel(node))
    if p == 1:
        return [back(total)]
    if p == 2:
        return [back(node.make("sqrt", [total]))]
    return [back(node.make("pow", [total, node.scalar(1.0 / p, total)]))]


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(node: Node) -> list:
    x = node.value(0)
    reduction = "reduce_mean" if node.op_type == "GlobalAveragePool" else "reduce_max"
    return [node.make(reduction, [x], axes=list(range(2, len(x.type.get_shape()))), keep_dims=True)]
