"""Walking an ONNX graph into the branches and bodies of its If, Loop and
Scan nodes: what the importer reads to find the nodes a value comes from
and the values a node reads from outside its bodies."""

from __future__ import annotations

import onnx


def subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """The branches and bodies of an If, a Loop or a Scan."""
    bodies = []
    for attribute in node.attribute:
        if attribute.type == onnx.AttributeProto.GRAPH:
            bodies.append(attribute.g)
        bodies.extend(attribute.graphs)
    return bodies


def all_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The nodes of `graph` and of every branch and body in it."""
    return [inner for node in graph.node for inner in [node, *_nodes_inside(node)]]


def _nodes_inside(node: onnx.NodeProto) -> list[onnx.NodeProto]:
    return [inner for body in subgraphs(node) for inner in all_nodes(body)]


def names_read(node: onnx.NodeProto) -> list[str]:
    """The values `node` reads: its inputs and, through its branches and
    bodies, the names their nodes read from outside."""
    return [i for n in [node, *_nodes_inside(node)] for i in n.input if i]
