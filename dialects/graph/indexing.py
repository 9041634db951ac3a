"""Indexing by tensors of positions: gather_elements, gather_nd,
scatter_elements, scatter_nd (ONNX's GatherElements, GatherND,
ScatterElements, ScatterND); and lookup, a table read at each byte.

They share graph.gather's index rules, so one model behaves the same
whichever of them it uses: indices are integers of any width (not i1); an
index i in [-n, 0) counts from the end of its dim of size n; an index
outside [-n, n) reads 0 (gathers) or writes nothing (scatters), instead of
failing at run time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    HasAxis,
    _fmt,
    _shape,
    int_value,
    normalize_axis,
)

SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")
"""How a scatter combines an update with the element it lands on: "none"
replaces it (the last of several updates to one place wins), the others
are numpy's add, multiply, maximum and minimum (NaN propagates)."""


def _require_indices(cls: type[GraphOp], type_: TensorType, index: int = 1) -> list[int]:
    """The shape of an indices operand, which must hold integers other than i1."""
    element = type_.element_type
    if not isinstance(element, IntegerType) or element == i1:
        raise VerifyException(
            f"{cls.operand_role(index)} has element type {element}, expected an integer type"
        )
    return _shape(type_)


def _require_rank_at_least_one(cls: type[GraphOp], shape: Sequence[int], index: int) -> None:
    if not shape:
        raise VerifyException(f"{cls.operand_role(index)} has rank 0, expected at least 1")


def _check_along_axis(
    cls: type[GraphOp], data: Sequence[int], indices: Sequence[int], axis: int
) -> None:
    """gather/scatter_elements: `indices` has the rank of `data` and fits in
    it on every dim but `axis` (each index picks along `axis` only)."""
    if len(indices) != len(data):
        raise VerifyException(
            f"{cls.operand_role(1)} has rank {len(indices)}, expected {len(data)} (the rank of "
            f"{cls.operand_role(0)})"
        )
    for d, (size, limit) in enumerate(zip(indices, data, strict=True)):
        if d != axis and size > limit:
            raise VerifyException(
                f"{cls.operand_role(1)} of shape {_fmt(indices)} exceeds {cls.operand_role(0)} "
                f"of shape {_fmt(data)} in dim {d} (only dim {axis}, the axis, may differ)"
            )


def _check_updates(
    cls: type[GraphOp], operand_types: Sequence[TensorType], expected: Sequence[int]
) -> None:
    """A scatter's updates: the input's element type, the shape its indices ask for."""
    data, updates = operand_types[0], operand_types[2]
    if updates.element_type != data.element_type:
        raise VerifyException(
            f"{cls.operand_role(2)} has element type {updates.element_type}, expected "
            f"{data.element_type} like {cls.operand_role(0)}"
        )
    if _shape(updates) != list(expected):
        raise VerifyException(
            f"{cls.operand_role(2)} has shape {_fmt(_shape(updates))}, expected {_fmt(expected)}"
        )


def _check_reduction(
    cls: type[GraphOp], properties: Mapping[str, Attribute], element: Attribute
) -> None:
    reduction = properties["reduction"].data
    if reduction not in SCATTER_REDUCTIONS:
        raise VerifyException(
            f'reduction must be one of {", ".join(SCATTER_REDUCTIONS)}, got "{reduction}"'
        )
    if reduction != "none" and element == i1:
        raise VerifyException(
            f'reduction "{reduction}" needs a numeric type, {cls.operand_role(0)} has i1 '
            "(graph.cast booleans first)"
        )


class HasReduction:
    """A scatter with a `reduction` property (one of SCATTER_REDUCTIONS)."""

    @property
    def reduction_kind(self) -> str:
        return self.reduction.data


@irdl_op_definition
class GatherElementsOp(HasAxis, GraphOp):
    """result[p] = input[p with p[axis] replaced by indices[p]]
    (numpy.take_along_axis; ONNX GatherElements): the result has the shape
    of `indices`, which has the input's rank and, on every dim but `axis`,
    at most its size. Indices follow graph.gather: [-n, 0) counts from the
    end, outside [-n, n) reads 0. `axis` defaults to 0.

    Example:

        %g = graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
    """

    name = "graph.gather_elements"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        indices = _require_indices(cls, operand_types[1])
        shape = _shape(operand_types[0])
        _require_rank_at_least_one(cls, shape, 0)
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        _check_along_axis(cls, shape, indices, axis)
        return TensorType(operand_types[0].element_type, indices)


@irdl_op_definition
class GatherNDOp(GraphOp):
    """Gathers slices by index tuples (ONNX GatherND): with b = batch_dims
    and k = indices.shape[-1] (1 <= k <= rank - b), each k-tuple
    indices[t] picks input[t[:b], indices[t], ...], a slice of shape
    input.shape[b + k:]; the result has shape indices.shape[:-1] +
    input.shape[b + k:]. The first b dims of input and indices agree.
    Indices follow graph.gather: [-n, 0) counts from the end, a tuple with
    an index outside [-n, n) reads a slice of 0.

    Example:

        %g = graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi64>) -> tensor<2x3x8xf32>
    """

    name = "graph.gather_nd"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    batch_dims = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"

    @property
    def batch_dim_count(self) -> int:
        """`batch_dims`: the leading dims input and indices walk together."""
        return self.batch_dims.value.data

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        indices = _require_indices(cls, operand_types[1])
        shape = _shape(operand_types[0])
        _require_rank_at_least_one(cls, shape, 0)
        _require_rank_at_least_one(cls, indices, 1)
        batch = int_value(properties, "batch_dims")
        if not 0 <= batch < min(len(shape), len(indices)):
            raise VerifyException(
                f"batch_dims {batch} is out of range: it must be in [0, {min(len(shape), len(indices))}) "
                "(below both ranks)"
            )
        if shape[:batch] != indices[:batch]:
            raise VerifyException(
                f"the {batch} batch dims of {cls.operand_role(1)} {_fmt(indices[:batch])} differ "
                f"from those of {cls.operand_role(0)} {_fmt(shape[:batch])}"
            )
        depth = indices[-1]
        if not 1 <= depth <= len(shape) - batch:
            raise VerifyException(
                f"{cls.operand_role(1)} has tuples of {depth} indices (its last dim), expected "
                f"1 to {len(shape) - batch} (the rank less batch_dims)"
            )
        return TensorType(operand_types[0].element_type, [*indices[:-1], *shape[batch + depth :]])


@irdl_op_definition
class ScatterElementsOp(HasAxis, HasReduction, GraphOp):
    """The input with updates written along `axis` (ONNX ScatterElements):
    result[p with p[axis] replaced by indices[p]] = updates[p], for every
    position p of `updates`, in row-major order; `indices` and `updates`
    share a shape, which has the input's rank and, on every dim but `axis`,
    at most its size. `reduction` (SCATTER_REDUCTIONS) combines instead of
    replacing; it needs a numeric type. Indices follow graph.gather: [-n, 0)
    counts from the end, an index outside [-n, n) writes nothing. `axis`
    defaults to 0.

    Example:

        %s = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
    """

    name = "graph.scatter_elements"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    reduction = prop_def(StringAttr, default_value=StringAttr("none"))
    assembly_format = (
        "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        indices = _require_indices(cls, operand_types[1])
        shape = _shape(operand_types[0])
        _require_rank_at_least_one(cls, shape, 0)
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        _check_along_axis(cls, shape, indices, axis)
        _check_updates(cls, operand_types, indices)
        _check_reduction(cls, properties, operand_types[0].element_type)
        return TensorType(operand_types[0].element_type, shape)


@irdl_op_definition
class ScatterNDOp(HasReduction, GraphOp):
    """The input with slices written by index tuples (ONNX ScatterND): with
    k = indices.shape[-1] (1 <= k <= rank), for each tuple position t of
    indices.shape[:-1] in row-major order, result[indices[t], ...] =
    updates[t] (a slice of shape input.shape[k:]); `updates` has shape
    indices.shape[:-1] + input.shape[k:]. `reduction` (SCATTER_REDUCTIONS)
    combines instead of replacing; it needs a numeric type. Indices follow
    graph.gather: [-n, 0) counts from the end, a tuple with an index
    outside [-n, n) writes nothing.

    Example:

        %s = graph.scatter_nd %x, %i, %u {reduction = "max"} : (tensor<4x8xf32>, tensor<3x1xi64>, tensor<3x8xf32>) -> tensor<4x8xf32>
    """

    name = "graph.scatter_nd"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    reduction = prop_def(StringAttr, default_value=StringAttr("none"))
    assembly_format = (
        "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        indices = _require_indices(cls, operand_types[1])
        shape = _shape(operand_types[0])
        _require_rank_at_least_one(cls, shape, 0)
        _require_rank_at_least_one(cls, indices, 1)
        depth = indices[-1]
        if not 1 <= depth <= len(shape):
            raise VerifyException(
                f"{cls.operand_role(1)} has tuples of {depth} indices (its last dim), expected "
                f"1 to {len(shape)} (the rank of {cls.operand_role(0)})"
            )
        _check_updates(cls, operand_types, [*indices[:-1], *shape[depth:]])
        _check_reduction(cls, properties, operand_types[0].element_type)
        return TensorType(operand_types[0].element_type, shape)


@irdl_op_definition
class LookupOp(GraphOp):
    """table[x] for each element of an 8-bit integer x (i8 reads table[x +
    128]): an element-wise function of one byte, its 256 results computed
    at compile time. graph-lookup-tables makes it from a quantized model's
    chains (dequantize -> erf, sigmoid, ... -> quantize) of one byte
    tensor, as onnxruntime's QLinearSigmoid reads a table. The table's
    element type is the result's; the shape is kept.

    Example:

        %y = graph.lookup %x {table = dense<7> : tensor<256xui8>} : tensor<4x8xui8> -> tensor<4x8xui8>
    """

    name = "graph.lookup"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    table = prop_def(DenseIntOrFPElementsAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        element = operand_types[0].element_type
        if not isinstance(element, IntegerType) or element.width.data != 8:
            raise VerifyException(
                f"{cls.operand_role(0)} has element type {element}, expected ui8 or i8"
            )
        table = properties["table"].type
        if _shape(table) != [TABLE_ENTRIES]:
            raise VerifyException(
                f"table has shape {_fmt(_shape(table))}, expected [{TABLE_ENTRIES}] (one entry a byte)"
            )
        return TensorType(table.element_type, _shape(operand_types[0]))


TABLE_ENTRIES = 256
"""A lookup table's entries: one for each value of a byte."""
