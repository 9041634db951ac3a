"""Converters of ONNX's trigonometric, rounding and remainder ops (Sin, Cos,
Sign, Round, Floor, Ceil, Mod) and of the ops that walk an axis (ArgMax,
ArgMin, CumSum, CumProd, TopK), registered in `ops.CONVERTERS`.

Each is one graph op, but TopK: `graph.top_k_indices` gives its indices and
`graph.gather_elements` of the input at them its values, so the selection
runs once for both outputs. CumSum's and CumProd's axis and TopK's k are inputs that must
be known at import time; every output shape follows from the input's.
"""

from __future__ import annotations

import numpy as np

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter

_UNARY = {
    "Sin": "sin", "Cos": "cos", "Sign": "sign", "Round": "round", "Floor": "floor", "Ceil": "ceil",
}  # fmt: skip


@converter(*_UNARY)
def _unary(node: Node) -> list:
    return [node.make(_UNARY[node.op_type], [node.value(0)])]


@converter("Mod")
def _mod(node: Node) -> list:
    """fmod=0 (the default) is numpy.mod, for floats too; fmod=1 is C fmod."""
    fmod = node.require_attr("fmod", [0, 1], 0)
    return [node.make("mod", [node.value(0), node.value(1)], fmod=bool(fmod))]


@converter("ArgMax", "ArgMin")
def _arg_extreme(node: Node) -> list:
    return [
        node.make(
            node.op_type.lower(),
            [node.value(0)],
            axis=int(node.attr("axis", 0)),
            keep_dims=bool(node.attr("keepdims", 1)),
            select_last_index=bool(node.attr("select_last_index", 0)),
        )
    ]


def _single(node: Node, index: int, what: str) -> int:
    """Input `index`, a constant holding one integer (rank 0 or 1)."""
    array = np.asarray(node.constant(index, what))
    if array.size != 1 or array.ndim > 1:
        raise node.error(f"{what} must be one integer, got shape {list(array.shape)}")
    return int(array.reshape(-1)[0])


@converter("CumSum", "CumProd")
def _running_total(node: Node) -> list:
    return [
        node.make(
            node.op_type.lower(),
            [node.value(0)],
            axis=_single(node, 1, "axis"),
            exclusive=bool(node.attr("exclusive", 0)),
            reverse=bool(node.attr("reverse", 0)),
        )
    ]


@converter("TopK")
def _top_k(node: Node) -> list:
    """Values and indices, sorted best first whatever `sorted` says (an unsorted
    order is any order, so the sorted one too)."""
    x = node.value(0)
    axis = int(node.attr("axis", -1))
    node.attr("sorted")
    indices = node.make(
        "top_k_indices",
        [x],
        k=_single(node, 1, "k"),
        axis=axis,
        largest=bool(node.attr("largest", 1)),
    )
    return [node.make("gather_elements", [x, indices], axis=axis), indices]


_BITWISE = {"BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor"}


@converter(*_BITWISE)
def _bitwise(node: Node) -> list:
    return [node.make(_BITWISE[node.op_type], [node.value(0), node.value(1)])]


@converter("BitwiseNot")
def _bitwise_not(node: Node) -> list:
    return [node.make("bitwise_not", [node.value(0)])]


@converter("BitShift")
def _bit_shift(node: Node) -> list:
    direction = node.require_attr("direction", ["LEFT", "RIGHT"], None)
    name = "shift_left" if direction == "LEFT" else "shift_right"
    return [node.make(name, [node.value(0), node.value(1)])]
