"""ONNX's Det (registered in `ops.CONVERTERS`): the determinant of the
[..., n, n] matrices of a tensor whose values are known at run time only.

LU factorization with partial pivoting, as LAPACK's getrf that numpy's
det calls, written out over the n columns (n is static): at column k, the
row of the largest |a[i, k]| (i >= k) is swapped into row k (a gather of
the rows; a swap flips the sign), the pivot multiplies the determinant, and
the rows below k lose their multiple of row k. Whole-matrix masked updates
keep every step's shapes the same. A zero pivot (the column is zero from k
on) makes the determinant 0, and its step eliminates nothing.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis

MAX_ORDER = 64
"""Larger matrices would write out thousands of graph ops (n steps each)."""


@converter("Det")
def _det(node: Node) -> list:
    a = _float_input(node)
    shape = list(a.type.get_shape())
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise node.error(f"input of shape {shape} is not [..., n, n]")
    *batch, n, _ = shape
    if n > MAX_ORDER:
        raise node.error(f"matrices of order {n} are not supported (at most {MAX_ORDER})")
    rank = len(shape)
    rows_at = node.importer.constant_value(
        np.arange(n).reshape([1] * (rank - 2) + [n, 1]), i64, node.label
    )
    det = node.scalar(1.0, a)
    for k in range(n):
        a, pivot, sign = _pivoted(node, a, rows_at, k)
        det = node.make("mul", [det, node.make("mul", [pivot, sign])])
        safe = node.make("select", [_equal(node, pivot, 0.0), node.scalar(1.0, pivot), pivot])
        column = _slice_axis(node, a, rank - 1, k, 1)  # [..., n, 1]
        below = node.make("greater", [rows_at, _index(node, k)])
        factors = node.make(
            "select", [below, node.make("div", [column, safe]), node.scalar(0.0, column)]
        )
        row = _slice_axis(node, a, rank - 2, k, 1)  # [..., 1, n]
        a = node.make("sub", [a, node.make("mul", [factors, row])])
    if n == 0:  # the empty product
        det = node.make("broadcast_to", [det], TensorType(a.type.element_type, [*batch, 1, 1]))
    return [reshape(node, det, batch)]


def _pivoted(
    node: Node, a: SSAValue, rows_at: SSAValue, k: int
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """a with the row of column k's largest magnitude (from row k on) swapped
    into row k, that pivot and the swap's sign (-1 or 1): [..., 1, 1]."""
    shape = list(a.type.get_shape())
    rank = len(shape)
    column = _slice_axis(node, a, rank - 1, k, 1)
    magnitude = node.make("abs", [column])
    candidate = node.make("greater_equal", [rows_at, _index(node, k)])
    magnitude = node.make("select", [candidate, magnitude, node.scalar(-1.0, magnitude)])
    best = node.make("argmax", [magnitude], axis=rank - 2, keep_dims=True)  # [..., 1, 1]
    here = _index(node, k)
    swapped = node.make(
        "select",
        [node.make("equal", [rows_at, here]), best,
         node.make("select", [node.make("equal", [rows_at, best]), here, rows_at])],
    )  # fmt: skip
    index = node.make("broadcast_to", [swapped], TensorType(i64, shape))
    a = node.make("gather_elements", [a, index], axis=rank - 2)
    pivot = _slice_axis(node, _slice_axis(node, a, rank - 2, k, 1), rank - 1, k, 1)
    stays = node.make("equal", [best, here])
    sign = node.make("select", [stays, node.scalar(1.0, pivot), node.scalar(-1.0, pivot)])
    return a, pivot, sign


def _index(node: Node, k: int) -> SSAValue:
    return node.importer.constant_value(np.array(k), i64, node.label)


def _equal(node: Node, value: SSAValue, number: float) -> SSAValue:
    return node.make("equal", [value, node.scalar(number, value)])
