"""The converters of ONNX's GridSample and AffineGrid (registered in
`ops.CONVERTERS`). GridSample:
X [N, C, D1, ..., Dk] sampled at grid [N, O1, ..., Om, k] (normalized
coordinates in [-1, 1], the last dim first) into [N, C, O1, ..., Om].

Composed from graph ops as onnx's reference computes it:
1. each coordinate is denormalized (align_corners: -1 and 1 are the
   corner pixels' centres, else their outer edges), rounded half to even
   for "nearest", and, where it lies outside the image, clamped (border)
   or reflected (reflection);
2. its taps: the pixel ("nearest"), the two around it with linear
   weights, or the four with Keys' cubic weights (a = -0.75);
3. each tap's pixel index follows the padding mode (zeros: 0 outside,
   selected, not weighted, so an inf pixel it clamps to stays out; border: clamped; reflection: reflected), the k indices make
   one flat index into X's pixels, and graph.gather_elements reads every
   channel's pixel there; the weighted taps are summed.

AffineGrid's grid is theta times the homogeneous coordinates of every
output pixel (a constant: the sizes are static), one graph.matmul.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, cast, converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis
from graphcompiler.ir.element_types import compute_dtype

MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest",
         "bicubic": "cubic", "cubic": "cubic"}  # fmt: skip
CUBIC_A = -0.75


class _Sampler:
    """Formulas on [N, P] coordinate tensors of the grid's type."""

    def __init__(self, node: Node, like: SSAValue, align_corners: bool, padding: str):
        self.node, self.like = node, like
        self.align_corners, self.padding = align_corners, padding

    def c(self, value: float) -> SSAValue:
        return self.node.scalar(value, self.like)

    def op(self, name: str, *operands, **properties) -> SSAValue:
        return self.node.make(name, list(operands), **properties)

    def bounds(self, size: int) -> tuple[float, float]:
        """The coordinates that are inside: the pixel centres' or edges' span."""
        return (0.0, size - 1.0) if self.align_corners else (-0.5, size - 0.5)

    def denormalize(self, g: SSAValue, size: int) -> SSAValue:
        if self.align_corners:
            return self.op("mul", self.op("add", g, self.c(1.0)), self.c((size - 1) / 2))
        return self.op(
            "mul",
            self.op(
                "sub", self.op("mul", self.op("add", g, self.c(1.0)), self.c(size)), self.c(1.0)
            ),
            self.c(0.5),
        )

    def clamp(self, x: SSAValue, low: float, high: float) -> SSAValue:
        return self.op("minimum", self.op("maximum", x, self.c(low)), self.c(high))

    def reflect(self, x: SSAValue, low: float, high: float) -> SSAValue:
        """x folded back into [low, high] by the nearer border, as often as needed."""
        span = high - low
        if span <= 0:
            return self.op("add", self.op("mul", x, self.c(0.0)), self.c(low))
        below = self.op("less", x, self.c(low))
        distance = self.op(
            "select", below, self.op("sub", self.c(low), x), self.op("sub", x, self.c(high))
        )
        turns = self.op("floor", self.op("div", distance, self.c(span)))
        rest = self.op("sub", distance, self.op("mul", turns, self.c(span)))
        even = self.op("equal", self.op("mod", turns, self.c(2.0)), self.c(0.0))
        from_low, from_high = self.op("add", self.c(low), rest), self.op("sub", self.c(high), rest)
        folded = self.op("select", below, self.op("select", even, from_low, from_high),
                         self.op("select", even, from_high, from_low))  # fmt: skip
        inside = self.op("logical_and", self.op("greater_equal", x, self.c(low)),
                         self.op("less_equal", x, self.c(high)))  # fmt: skip
        return self.op("select", inside, x, folded)

    def coordinate(self, x: SSAValue, size: int) -> SSAValue:
        """Step 1's adjustment of a coordinate outside the image."""
        low, high = self.bounds(size)
        if self.padding == "border":
            outside = self.op(
                "logical_or", self.op("less", x, self.c(low)), self.op("greater", x, self.c(high))
            )
            return self.op("select", outside, self.clamp(x, 0.0, size - 1.0), x)
        if self.padding == "reflection":
            return self.reflect(x, low, high)
        return x

    def tap(self, index: SSAValue, size: int) -> tuple[SSAValue, SSAValue | None]:
        """(the pixel index to read, validity or None) for an integral index."""
        if self.padding == "zeros":
            valid = self.op("logical_and", self.op("greater_equal", index, self.c(0.0)),
                            self.op("less_equal", index, self.c(size - 1.0)))  # fmt: skip
            return self.clamp(index, 0.0, size - 1.0), valid
        if self.padding == "border":
            return self.clamp(index, 0.0, size - 1.0), None
        reflected = self.reflect(index, *self.bounds(size))
        truncated = self.op("select", self.op("less", reflected, self.c(0.0)),
                            self.op("ceil", reflected), self.op("floor", reflected))  # fmt: skip
        return self.clamp(truncated, 0.0, size - 1.0), None

    def taps(self, x: SSAValue, mode: str) -> list[tuple[SSAValue, SSAValue | None]]:
        """(index, weight) of each tap of coordinate x (weight None: 1)."""
        if mode == "nearest":
            truncated = self.op(
                "select", self.op("less", x, self.c(0.0)), self.op("ceil", x), self.op("floor", x)
            )
            return [(truncated, None)]
        start = self.op("floor", x)
        t = self.op("sub", x, start)
        if mode == "linear":
            return [
                (start, self.op("sub", self.c(1.0), t)),
                (self.op("add", start, self.c(1.0)), t),
            ]
        weights = [self._cubic(self.op("add", t, self.c(1.0)), True), self._cubic(t, False),
                   self._cubic(self.op("sub", self.c(1.0), t), False),
                   self._cubic(self.op("sub", self.c(2.0), t), True)]  # fmt: skip
        return [
            (self.op("add", start, self.c(float(k))), w)
            for k, w in zip(range(-1, 3), weights, strict=True)
        ]

    def _cubic(self, s: SSAValue, outer: bool) -> SSAValue:
        """Keys' kernel at distance s: 1 < s < 2 (outer) or s <= 1."""
        a = CUBIC_A
        if outer:  # ((a s - 5a) s + 8a) s - 4a
            inner = self.op(
                "add",
                self.op("mul", self.op("sub", self.op("mul", s, self.c(a)), self.c(5 * a)), s),
                self.c(8 * a),
            )
            return self.op("sub", self.op("mul", inner, s), self.c(4 * a))
        inner = self.op(
            "sub", self.op("mul", s, self.c(a + 2)), self.c(a + 3)
        )  # ((a+2) s - (a+3)) s s + 1
        return self.op("add", self.op("mul", self.op("mul", inner, s), s), self.c(1.0))


@converter("GridSample")
def _grid_sample(node: Node) -> list:
    x = _float_input(node)
    grid = node.value(1)
    mode = MODES.get(node.attr("mode", "linear"))  # opset 16's "bilinear", 20's "linear"
    if mode is None:
        raise node.unsupported_attribute("mode")
    padding = node.require_attr("padding_mode", ["zeros", "border", "reflection"], "zeros")
    align_corners = bool(node.attr("align_corners", 0))
    batch, channels, *dims = x.type.get_shape()
    grid_shape = list(grid.type.get_shape())
    if len(dims) < 1 or grid_shape[0] != batch or grid_shape[-1] != len(dims):
        raise node.error(
            f"grid of shape {grid_shape} does not sample an input of shape {[batch, channels, *dims]}"
        )
    out = grid_shape[1:-1]
    points = math.prod(out)
    sampler = _Sampler(node, grid, align_corners, padding)
    per_dim = []
    for k, size in enumerate(dims):  # the grid lists the last dim first
        g = reshape(
            node,
            _slice_axis(node, grid, len(grid_shape) - 1, len(dims) - 1 - k, 1),
            [batch, points],
        )
        coordinate = sampler.denormalize(g, size)
        if mode == "nearest":
            coordinate = node.make("round", [coordinate])
        per_dim.append(
            [
                (*sampler.tap(i, size), w)
                for i, w in sampler.taps(sampler.coordinate(coordinate, size), mode)
            ]
        )
    strides = [math.prod(dims[k + 1 :]) for k in range(len(dims))]
    flat = reshape(node, x, [batch, channels, math.prod(dims)])
    total = None
    for combination in itertools.product(*per_dim):
        index, weight, inside = None, None, None
        for (i, valid, w), stride in zip(combination, strides, strict=True):
            term = sampler.op("mul", i, sampler.c(float(stride))) if stride != 1 else i
            index = term if index is None else sampler.op("add", index, term)
            if w is not None:
                weight = w if weight is None else sampler.op("mul", weight, w)
            if valid is not None:
                inside = valid if inside is None else sampler.op("logical_and", inside, valid)
        index = reshape(node, cast(node, index, i64), [batch, 1, points])
        where = node.make("broadcast_to", [index], TensorType(i64, [batch, channels, points]))
        value = node.make("gather_elements", [flat, where], axis=2)
        if weight is not None:
            value = node.make(
                "mul",
                [value, cast(node, reshape(node, weight, [batch, 1, points]), x.type.element_type)],
            )
        if inside is not None:  # a select, not a 0 weight: inf * 0 would be NaN
            inside = reshape(node, inside, [batch, 1, points])
            value = node.make("select", [inside, value, node.scalar(0.0, value)])
        total = value if total is None else node.make("add", [total, value])
    return [reshape(node, total, [batch, channels, *out])]


@converter("AffineGrid")
def _affine_grid(node: Node) -> list:
    """grid[n, ..., :] = theta[n] @ (x, y[, z], 1) of each pixel of `size`
    ([N, C, H, W] or [N, C, D, H, W]), the last spatial dim first; a
    coordinate is -1 + 2i / (n - 1) with align_corners, else
    -1 + (2i + 1) / n. A dim of size 1 with align_corners has no single
    answer (onnx's reference: -1, torch: 0); it is 1 as in onnxruntime,
    whose results models are checked against."""
    theta = _float_input(node)
    size = [int(v) for v in node.constant(1, "size")]
    spatial = size[2:]
    rank = len(spatial)
    if rank not in (2, 3) or list(theta.type.get_shape()) != [size[0], rank, rank + 1]:
        raise node.error(
            f"theta of shape {list(theta.type.get_shape())} and size {size}: expected "
            f"[N, 2, 3] with [N, C, H, W] or [N, 3, 4] with [N, C, D, H, W]"
        )
    align_corners = bool(node.attr("align_corners", 0))
    axes = [
        -1 + 2.0 * np.arange(n) / (n - 1) if align_corners and n > 1
        else np.ones(1) if align_corners
        else -1.0 + (2.0 * np.arange(n) + 1) / n
        for n in spatial
    ]  # fmt: skip
    mesh = np.meshgrid(*axes, indexing="ij")  # each [D, H, W]
    homogeneous = np.stack([*mesh[::-1], np.ones(spatial)], axis=0).reshape(rank + 1, -1)
    element = theta.type.element_type
    points = node.importer.constant_value(
        homogeneous.astype(compute_dtype(element)), element, node.label
    )  # [rank + 1, pixels]
    grid = node.make("matmul", [theta, points])  # [N, rank, pixels]
    pixels = node.make("transpose", [grid], perm=[0, 2, 1])
    return [reshape(node, pixels, [size[0], *spatial, rank])]
