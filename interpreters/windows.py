"""Reference semantics of the windowed ops (conv2d, max_pool2d,
avg_pool2d) and the channel-blocked layout (to_blocked, from_blocked,
blocked_conv2d), in numpy; reference.py runs them. A window reads the
padding value outside the input (a max pool's is -inf, so a NaN in a
window still gives NaN); a blocked op computes what its plain twin does on
the channels its blocks hold."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from graphcompiler.dialects import graph
from graphcompiler.ir.element_types import compute_dtype, max_identity

Array = np.ndarray


def _windows(
    x: Array, kernel: list[int], op: graph.HasWindow, dilations: list[int], pad_value: float
) -> Array:
    """[N, C, OH, OW, KH, KW] views of the padded NCHW input."""
    strides = op.window_strides
    top, left, bottom, right = op.window_padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=pad_value)
    extent = [dilations[d] * (kernel[d] - 1) + 1 for d in range(2)]
    windows = np.lib.stride_tricks.sliding_window_view(padded, extent, axis=(2, 3))
    return windows[:, :, :: strides[0], :: strides[1], :: dilations[0], :: dilations[1]]


def _conv2d(op: graph.Conv2dOp, x: Array, weight: Array) -> Array:
    groups = op.group_count
    integers = x.dtype.kind in "iu"
    if integers:  # exact sums, wrapped to the result type as the kernels'
        x, weight = x.astype(np.int64), weight.astype(np.int64)
    windows = _windows(x, list(weight.shape[2:]), op, op.window_dilations, op.padding_value)
    n, c, oh, ow, kh, kw = windows.shape
    grouped = windows.reshape(n, groups, c // groups, oh, ow, kh, kw)
    grouped_weight = weight.reshape(groups, weight.shape[0] // groups, c // groups, kh, kw)
    out = np.einsum("ngchwij,gocij->ngohw", grouped, grouped_weight)
    out = out.reshape(n, weight.shape[0], oh, ow)
    return out.astype(compute_dtype(op.result.type.element_type)) if integers else out  # wraps


def to_blocked_array(x: Array, block: int) -> Array:
    """[N, C, *spatial] -> [N, ceil(C / block), *spatial, block], the lanes
    past C zero (graph.to_blocked)."""
    n, c, *spatial = x.shape
    blocks = -(-c // block)
    padded = np.zeros((n, blocks * block, *spatial), x.dtype)
    padded[:, :c] = x
    split = padded.reshape(n, blocks, block, *spatial)
    return np.ascontiguousarray(np.moveaxis(split, 2, -1))


def from_blocked_array(x: Array, channels: int | None = None) -> Array:
    """[N, C / b, *spatial, b] -> [N, C, *spatial] (graph.from_blocked),
    `channels` of them (default: every lane)."""
    n, blocks, *spatial, block = x.shape
    plain = np.moveaxis(x, -1, 2).reshape(n, blocks * block, *spatial)
    return np.ascontiguousarray(plain[:, : blocks * block if channels is None else channels])


def _blocked_conv2d(op: graph.BlockedConv2dOp, x: Array, weight: Array) -> Array:
    if x.ndim == 5:  # else a plain input
        x = from_blocked_array(x, weight.shape[1] * op.group_count)
    return to_blocked_array(_conv2d(op, x, weight), op.result.type.get_shape()[-1])


def _blocked_pool(pool: Callable[[Operation, Array], Array]) -> Callable[[Operation, Array], Array]:
    """`pool` also on a channel-blocked input, as the plain channels it holds."""
    return lambda op, x: (
        pool(op, x)
        if x.ndim == 4
        else to_blocked_array(pool(op, from_blocked_array(x)), x.shape[-1])
    )


@_blocked_pool
def _max_pool2d(op: graph.MaxPool2dOp, x: Array) -> Array:
    """Padding counts as -inf; a NaN in a window gives NaN."""
    lowest = max_identity(x.dtype)
    windows = _windows(x, op.window_size, op, [1, 1], lowest)
    return windows.max(axis=(-2, -1), initial=lowest)


@_blocked_pool
def _avg_pool2d(op: graph.AvgPool2dOp, x: Array) -> Array:
    sums = _windows(x, op.window_size, op, [1, 1], 0).sum(axis=(-2, -1))
    inside = np.ones((1, 1, *x.shape[2:]), dtype=x.dtype)
    counts = _windows(inside, op.window_size, op, [1, 1], 0).sum(axis=(-2, -1))
    return sums / counts


WINDOWED: dict[type[Operation], Callable[..., Array]] = {
    graph.Conv2dOp: _conv2d,
    graph.ToBlockedOp: lambda op, x: to_blocked_array(x, op.block_size),
    graph.FromBlockedOp: lambda op, x: from_blocked_array(x, op.result.type.get_shape()[1]),
    graph.BlockedConv2dOp: _blocked_conv2d,
    graph.MaxPool2dOp: _max_pool2d,
    graph.AvgPool2dOp: _avg_pool2d,
}
