"""`graph.constant`: tensor constants."""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.irdl import irdl_op_definition, prop_def, result_def

from graphcompiler.dialects.common import TypedValueFormat
from graphcompiler.dialects.graph.base import GraphOp


@irdl_op_definition
class ConstantOp(TypedValueFormat, GraphOp):
    """A tensor constant: `graph.constant dense<...> : tensor<...>`.

    Example:

        %c = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    """

    name = "graph.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        return properties["value"].type
