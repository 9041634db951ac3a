"""The converter of ONNX's If (registered in `ops.CONVERTERS`): the branch
its condition picks, inlined where the If stands.

The graph dialect has no control flow, so the condition must be known at
import time: a constant, or a graph input bound to its value (optimum's
merged decoders take `use_cache_branch` so). `graphcompiler.compile` binds
such an input from the call, as it fixes symbolic dims, and compiles once
per value it sees; `import_onnx(..., constants={name: value})` binds it by
hand. The branch's nodes are converted as the graph's own (they read the
outer graph's values by name); its outputs become the If's.
"""

from __future__ import annotations

from graphcompiler.frontends.onnx.importer import Node, element_type
from graphcompiler.frontends.onnx.ops import converter
from graphcompiler.frontends.onnx.weights_in_file import initializer_array


@converter("If")
def _if(node: Node) -> list:
    condition = node.constant(0, "the condition")
    if condition.size != 1:
        raise node.error(f"the condition must hold one value, got shape {list(condition.shape)}")
    taken, other = ("then_branch", "else_branch")
    if not bool(condition.reshape(-1)[0]):
        taken, other = other, taken
    branch = node.attr(taken)
    node.attr(other)  # read: the branch not taken is left out
    importer = node.importer
    for tensor in branch.initializer:
        where = f"initializer '{tensor.name}' of node '{node.label}'"
        importer.define_constant(
            tensor.name, initializer_array(tensor), element_type(tensor.data_type, where)
        )
    for proto in branch.node:
        importer.convert(proto)
    return [
        importer.constants[o.name] if o.name in importer.constants else importer.tensor(o.name)
        for o in branch.output
    ]
