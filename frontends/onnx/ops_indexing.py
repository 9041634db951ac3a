"""Converters of ONNX's indexing ops (registered in `ops.CONVERTERS`):
GatherElements, GatherND, ScatterElements and ScatterND map one to one to
graph ops, which compute their output shapes from the input types (ONNX
shape inference is not needed). NonZero and Unique have output shapes that
depend on the data, which static graphs cannot hold: they are rejected
with a reason.
"""

from __future__ import annotations

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter


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


@converter("ScatterElements")
def _scatter_elements(node: Node) -> list:
    operands = [node.value(i) for i in range(3)]
    axis = int(node.attr("axis", 0))
    return [node.make("scatter_elements", operands, axis=axis, reduction=_reduction(node))]


@converter("ScatterND")
def _scatter_nd(node: Node) -> list:
    operands = [node.value(i) for i in range(3)]
    return [node.make("scatter_nd", operands, reduction=_reduction(node))]


@converter("NonZero", "Unique")
def _data_dependent_shape(node: Node) -> list:
    raise node.error(
        "the output shape depends on the input values, and graphs need static shapes "
        "(not supported)"
    )
