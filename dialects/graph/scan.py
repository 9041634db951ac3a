"""Ops that walk one axis in order, carrying state from element to element:
`graph.cumsum` and `graph.cumprod` (running totals) and `graph.top_k_indices`
(the best k seen so far). Their lowerings keep that state per line along the axis
(lowering/graph_to_tir/scan.py), with graph.argmax and graph.argmin."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    HasAxis,
    _require_numeric,
    _shape,
    int_value,
    normalize_axis,
)
from graphcompiler.dialects.graph.elementwise import UnaryOp


class RunningOp(HasAxis, UnaryOp):
    """A running total along `axis`: `exclusive` leaves x[i] out of result[i]
    (result[0] is the identity), `reverse` runs from the end of the axis.
    The result has the input's type."""

    axis = prop_def(IntegerAttr[I64])
    exclusive = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    reverse = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    IDENTITY: ClassVar[int] = 0
    """The total of no element."""

    @property
    def is_exclusive(self) -> bool:
        """`exclusive`: each total leaves out the element at its own position."""
        return bool(self.exclusive.value.data)

    @property
    def is_reversed(self) -> bool:
        """`reverse`: each total runs from the end of the axis to its position."""
        return bool(self.reverse.value.data)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        normalize_axis(int_value(properties, "axis"), len(_shape(operand_types[0])))
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class CumSumOp(RunningOp):
    """Running sums along `axis` (numpy.cumsum; ONNX CumSum): result[i] = x[0] + ... + x[i],
    added in that order (floats round as numpy's do; integers wrap). `exclusive` leaves
    x[i] out (result[0] = 0); `reverse` sums from the end instead. The result has the
    input's type.

    Example:

        %s = graph.cumsum %x {axis = 1 : i64, reverse = true} : tensor<4x8xf32>
    """

    name = "graph.cumsum"


@irdl_op_definition
class CumProdOp(RunningOp):
    """Running products along `axis` (numpy.cumprod; ONNX CumProd): result[i] =
    x[0] * ... * x[i], multiplied in that order (floats round as numpy's do;
    integers wrap). `exclusive` leaves x[i] out (result[0] = 1); `reverse`
    multiplies from the end instead. The result has the input's type.

    Example:

        %p = graph.cumprod %x {axis = 0 : i64, exclusive = true} : tensor<4x8xf32>
    """

    name = "graph.cumprod"
    IDENTITY: ClassVar[int] = 1


@irdl_op_definition
class TopKIndicesOp(HasAxis, GraphOp):
    """The indices (i64) of the `k` largest elements along `axis` (the k smallest with
    `largest = false`), best first: the result is the input's shape with k along the axis.
    Equal elements come in index order and NaN counts as larger than every number (numpy's
    sort order). ONNX TopK is this and graph.gather_elements of the input at these indices.
    `axis` defaults to -1; 0 <= k <= the axis' size.

    Example:

        %i = graph.top_k_indices %x {k = 3 : i64, largest = false} : tensor<4x8xf32> -> tensor<4x3xi64>
    """

    name = "graph.top_k_indices"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    k = prop_def(IntegerAttr[I64])
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    largest = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def count(self) -> int:
        """`k`: how many indices each line along the axis gives."""
        return self.k.value.data

    @property
    def wants_largest(self) -> bool:
        """`largest`: the best elements are the largest (else the smallest)."""
        return bool(self.largest.value.data)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        shape = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        k = int_value(properties, "k")
        if not 0 <= k <= shape[axis]:
            raise VerifyException(
                f"k = {k} is not in [0, {shape[axis]}] (the size of axis {axis} of "
                f"{cls.operand_role(0)})"
            )
        return TensorType(i64, [k if d == axis else s for d, s in enumerate(shape)])
