"""Reductions over axes (`graph.reduce_*`), the index of the extreme along an
axis (`graph.argmax`, `graph.argmin`) and the softmax family."""

from __future__ import annotations

import math
from collections.abc import Mapping

from xdsl.dialects.builtin import I64, BoolAttr, DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    HasAxis,
    _require_float,
    _require_numeric,
    _shape,
    bool_value,
    i64_array,
    int_list,
    int_value,
    normalize_axis,
)
from graphcompiler.dialects.graph.elementwise import FloatUnaryOp


def reduced_axes(properties: Mapping[str, Attribute], rank: int) -> list[int]:
    """The normalized `axes` of a reduction; none listed means all."""
    axes = [normalize_axis(a, rank, "axes entry") for a in int_list(properties, "axes")]
    if len(set(axes)) != len(axes):
        raise VerifyException(f"axes {int_list(properties, 'axes')} has duplicates")
    return sorted(axes) if axes else list(range(rank))


class ReduceOp(GraphOp):
    """Reduces `axes` (all if empty), keeping them as size 1 if `keep_dims`.
    Axes may be negative (counted from the end), as in numpy.

    Example:

        %s = {op} %x {axes = array<i64: 1>, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xf32>
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(DenseArrayBase, default_value=i64_array([]))
    keep_dims = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def reduced_axes(self, rank: int) -> list[int]:
        """The dims reduced in an input of `rank`, in [0, rank), sorted (all when `axes` is empty)."""
        return reduced_axes(self.properties, rank)

    @property
    def keeps_reduced_dims(self) -> bool:
        """`keep_dims`: the reduced dims stay, with size 1."""
        return bool(self.keep_dims.value.data)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        shape = _shape(operand_types[0])
        axes = reduced_axes(properties, len(shape))
        keep = bool_value(properties, "keep_dims")
        reduced = [1 if d in axes else s for d, s in enumerate(shape) if keep or d not in axes]
        return TensorType(operand_types[0].element_type, reduced)


class FloatReduceOp(ReduceOp):
    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """sum over axes (0 if empty). Floats are summed reassociated: lane-wise partial sums,
    folded every 64 vectors per lane along a contiguous axis, then a tree; error within a
    few ulp of sum(|x|) (not bitwise numpy's pairwise order); an outer axis is summed in
    order per column, as numpy does. Integers wrap (exact)."""

    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(FloatReduceOp):
    """mean over axes: reduce_sum's order, one division (NaN if empty)"""

    name = "graph.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """maximum over axes: exact; NaN if any element is NaN; -inf if empty"""

    name = "graph.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """minimum over axes: exact; NaN if any element is NaN; +inf if empty"""

    name = "graph.reduce_min"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """product over axes (1 if empty); floats reassociated lane-wise (~n ulp relative), integers wrap"""

    name = "graph.reduce_prod"


class ArgReduceOp(HasAxis, GraphOp):
    """The index (i64) of the extreme element along `axis` (default 0; negative counts from
    the end), the axis kept as size 1 if `keep_dims`. Ties give the first index, or the
    last with `select_last_index`; a NaN beats every number, so the first NaN wins (the last
    with select_last_index), as in numpy.argmax and numpy.argmin. The axis may be empty
    only if the result is.

    Example:

        %i = {op} %x {axis = 1 : i64, keep_dims = true} : tensor<4x8xf32> -> tensor<4x1xi64>
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    keep_dims = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    select_last_index = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def keeps_reduced_dim(self) -> bool:
        """`keep_dims`: the axis stays, with size 1."""
        return bool(self.keep_dims.value.data)

    @property
    def picks_last(self) -> bool:
        """`select_last_index`: ties give the last index instead of the first."""
        return bool(self.select_last_index.value.data)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        shape = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        if shape[axis] == 0 and math.prod(s for d, s in enumerate(shape) if d != axis):
            raise VerifyException(
                f"{cls.operand_role(0)} has an empty axis {axis}: there is no element to pick"
            )
        keep = bool_value(properties, "keep_dims")
        return TensorType(
            i64, [1 if d == axis else s for d, s in enumerate(shape) if keep or d != axis]
        )


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """the index of the largest element along axis (numpy.argmax; ONNX ArgMax)"""

    name = "graph.argmax"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """the index of the smallest element along axis (numpy.argmin, where NaN still wins; ONNX
    ArgMin)"""

    name = "graph.argmin"


class SoftmaxBase(HasAxis, FloatUnaryOp):
    """Normalizes along `axis` (default -1, the innermost; negative counts
    from the end); the result has the input's type.

    Example:

        %p = {op} %x {axis = 1 : i64} : tensor<4x8xf32>
    """

    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        normalize_axis(int_value(properties, "axis"), len(_shape(operand_types[0])))
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class SoftmaxOp(SoftmaxBase):
    """exp(x - max) / sum(exp(x - max)) along axis. Compiled: one pass keeps a running max and a
    rescaled sum per lane (online softmax), a second normalizes; within ~1e-6 relative of the
    reference. NaN for a row holding NaN or +inf or only -inf (inf - inf), as the reference."""

    name = "graph.softmax"


@irdl_op_definition
class LogSoftmaxOp(SoftmaxBase):
    """x - max - log(sum(exp(x - max))) along axis; softmax's algorithm and NaN rules, absolute
    error ~1e-6 + 1 ulp of |x - max|."""

    name = "graph.log_softmax"
