"""One-node ONNX models for the converter tests, built with onnx.helper."""

from __future__ import annotations

from onnx import helper


def node_model(op_type, inputs, outputs, initializers=(), opset=18, input_names=None, **attributes):
    """A model of one `op_type` node: inputs and outputs as (name, onnx type,
    shape); `input_names` (default: the inputs', then the initializers')
    may hold '' for an omitted optional input."""
    if input_names is None:
        input_names = [n for n, *_ in inputs] + [i.name for i in initializers]
    node = helper.make_node(op_type, input_names, [n for n, *_ in outputs], **attributes)
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
