"""Data movement: transpose, reshape, broadcast_to, concat, slice, gather,
pad."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    HasAxis,
    _fmt,
    _require_result_type,
    _require_same_element_type,
    _shape,
    f32_attr,
    float_value,
    int_list,
    int_value,
    normalize_axis,
)


@irdl_op_definition
class TransposeOp(GraphOp):
    """result[i_perm[0], ...] = input[i_0, ...]: result dim d is input dim perm[d]
    (numpy.transpose(input, perm)).

    Example:

        %t = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
    """

    name = "graph.transpose"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(DenseArrayBase)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def permutation(self) -> list[int]:
        """`perm`: result dim d is input dim permutation[d]."""
        return list(self.perm.get_values())

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        shape = _shape(operand_types[0])
        perm = int_list(properties, "perm")
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(
                f"perm {_fmt(perm)} is not a permutation of the {len(shape)} dims of "
                f"{cls.operand_role(0)}"
            )
        return TensorType(operand_types[0].element_type, [shape[p] for p in perm])


class ResultShapedOp(GraphOp):
    """A data-movement op whose result type gives the new shape."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def check_shapes(cls, source: list[int], target: list[int]) -> None:
        raise NotImplementedError

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        target = _shape(_require_result_type(cls, result_type))
        cls.check_shapes(_shape(operand_types[0]), target)
        return TensorType(operand_types[0].element_type, target)


@irdl_op_definition
class ReshapeOp(ResultShapedOp):
    """The same elements in row-major order under the result's shape
    (numpy.reshape; the element counts agree).

    Example:

        %r = graph.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
    """

    name = "graph.reshape"

    @classmethod
    def check_shapes(cls, source, target):
        if math.prod(source) != math.prod(target):
            raise VerifyException(
                f"cannot reshape {cls.operand_role(0)} of shape {_fmt(source)} "
                f"({math.prod(source)} elements) to {_fmt(target)} ({math.prod(target)} elements)"
            )


@irdl_op_definition
class BroadcastToOp(ResultShapedOp):
    """numpy.broadcast_to the result's shape.

    Example:

        %b = graph.broadcast_to %x : tensor<8xf32> -> tensor<4x8xf32>
    """

    name = "graph.broadcast_to"

    @classmethod
    def check_shapes(cls, source, target):
        padded = [1] * (len(target) - len(source)) + source
        if len(source) > len(target) or any(
            s not in (1, t) for s, t in zip(padded, target, strict=True)
        ):
            raise VerifyException(
                f"{cls.operand_role(0)} of shape {_fmt(source)} cannot be broadcast to "
                f"{_fmt(target)}"
            )


@irdl_op_definition
class ConcatOp(HasAxis, GraphOp):
    """Joins the inputs along `axis`; all other dims must agree
    (numpy.concatenate).

    Example:

        %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
    """

    name = "graph.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        if not operand_types:
            raise VerifyException("needs at least one input")
        _require_same_element_type(cls, operand_types)
        first = _shape(operand_types[0])
        axis = normalize_axis(int_value(properties, "axis"), len(first))
        total = 0
        for index, type_ in enumerate(operand_types):
            shape = _shape(type_)
            expected = [*first[:axis], shape[axis] if len(shape) > axis else 0, *first[axis + 1 :]]
            if shape != expected:
                raise VerifyException(
                    f"{cls.operand_role(index)} has shape {_fmt(shape)}, expected "
                    f"{_fmt(expected)} (all dims but {axis} like {cls.operand_role(0)})"
                )
            total += shape[axis]
        return TensorType(operand_types[0].element_type, [*first[:axis], total, *first[axis + 1 :]])


def slice_ranges(properties: Mapping[str, Attribute], shape: Sequence[int]) -> list[range]:
    """Python-slice semantics per dim (negative and out-of-range bounds clamp)."""
    starts, ends, steps = (int_list(properties, n) for n in ("starts", "ends", "steps"))
    steps = steps or [1] * len(shape)
    for name, values in (("starts", starts), ("ends", ends), ("steps", steps)):
        if len(values) != len(shape):
            raise VerifyException(
                f"{name} has {len(values)} entries, expected {len(shape)} (the rank)"
            )
    if any(step <= 0 for step in steps):
        raise VerifyException(f"steps {_fmt(steps)} must be positive")
    return [
        range(*slice(start, end, step).indices(dim))
        for start, end, step, dim in zip(starts, ends, steps, shape, strict=True)
    ]


@irdl_op_definition
class SliceOp(GraphOp):
    """input[starts[0]:ends[0]:steps[0], ...] with Python slice semantics:
    negative bounds count from the end, out-of-range ones clamp; steps
    (default all 1) are positive.

    Example:

        %s = graph.slice %x {starts = array<i64: 0, 2>, ends = array<i64: 4, 8>, steps = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
    """

    name = "graph.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    starts = prop_def(DenseArrayBase)
    ends = prop_def(DenseArrayBase)
    steps = opt_prop_def(DenseArrayBase)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def step_sizes(self) -> list[int]:
        """`steps`, or 1 per dim when absent."""
        if self.steps is None:
            return [1] * len(self.starts.get_values())
        return list(self.steps.get_values())

    def ranges(self, shape: Sequence[int]) -> list[range]:
        """The indices taken along each dim of an input of `shape` (see slice_ranges)."""
        return slice_ranges(self.properties, shape)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        ranges = slice_ranges(properties, _shape(operand_types[0]))
        return TensorType(operand_types[0].element_type, [len(r) for r in ranges])


@irdl_op_definition
class GatherOp(HasAxis, GraphOp):
    """numpy.take(input, indices, axis) (ONNX Gather): the result has shape
    input.shape[:axis] + indices.shape + input.shape[axis + 1:]. An index i
    in [-n, 0) reads i + n (n = input.shape[axis]); an index outside
    [-n, n) reads 0 (false for i1) instead of failing. `indices` are integers
    of any width (not i1); `axis` defaults to 0.

    Example:

        %g = graph.gather %table, %ids : (tensor<100x16xf32>, tensor<4x8xi64>) -> tensor<4x8x16xf32>
    """

    name = "graph.gather"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        element = operand_types[1].element_type
        if not isinstance(element, IntegerType) or element == i1:
            raise VerifyException(
                f"{cls.operand_role(1)} has element type {element}, expected an integer type"
            )
        shape = _shape(operand_types[0])
        if not shape:
            raise VerifyException(f"{cls.operand_role(0)} has rank 0, expected at least 1")
        axis = normalize_axis(int_value(properties, "axis"), len(shape))
        return TensorType(
            operand_types[0].element_type,
            [*shape[:axis], *_shape(operand_types[1]), *shape[axis + 1 :]],
        )


PAD_MODES = ("constant", "reflect", "edge", "wrap")


def pad_amounts(properties: Mapping[str, Attribute], rank: int) -> list[tuple[int, int]]:
    """(before, after) per dim from ONNX-ordered `pads` [b0, b1, ..., e0, e1, ...]."""
    pads = int_list(properties, "pads")
    if len(pads) != 2 * rank:
        raise VerifyException(f"pads has {len(pads)} entries, expected {2 * rank} (twice the rank)")
    return list(zip(pads[:rank], pads[rank:], strict=True))


@irdl_op_definition
class PadOp(GraphOp):
    """numpy.pad (ONNX Pad): dim d grows by pads[d] elements before and
    pads[rank + d] after; a negative amount removes elements instead (a slice
    first, then numpy.pad of the positive amounts over what is left, as
    onnxruntime). `mode`: "constant" (the default) fills with `value`
    (default 0.0; an integer tensor needs an integral value in its range),
    "reflect" mirrors without repeating the border (amounts at most m - 1 for
    the m elements left; a dim of one element repeats it), "edge" repeats the
    border, "wrap" repeats what is left periodically; the last three need a
    non-empty dim wherever they pad.

    Example:

        %p = graph.pad %x {pads = array<i64: 0, 1, 0, 1>} : tensor<4x8xf32> -> tensor<4x10xf32>
    """

    name = "graph.pad"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    pads = prop_def(DenseArrayBase)
    mode = prop_def(StringAttr, default_value=StringAttr("constant"))
    value = prop_def(FloatAttr, default_value=f32_attr(0.0))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def pad_mode(self) -> str:
        """One of PAD_MODES."""
        return self.mode.data

    @property
    def fill_value(self) -> float:
        """`value`: what "constant" mode pads with."""
        return self.value.value.data

    def amounts(self, rank: int) -> list[tuple[int, int]]:
        """(before, after) per dim (see pad_amounts)."""
        return pad_amounts(self.properties, rank)

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        shape, element = _shape(operand_types[0]), operand_types[0].element_type
        mode = properties["mode"].data
        if mode not in PAD_MODES:
            raise VerifyException(f'mode must be one of {", ".join(PAD_MODES)}, got "{mode}"')
        value = float_value(properties, "value")
        if mode == "constant" and isinstance(element, IntegerType):
            _check_integral(value, element)
        result = []
        amounts = pad_amounts(properties, len(shape))
        for d, (size, (before, after)) in enumerate(zip(shape, amounts, strict=True)):
            left = size + min(before, 0) + min(after, 0)  # after the negative amounts' slice
            if left < 0:
                raise VerifyException(
                    f"pads ({before}, {after}) remove more than the {size} elements of dim {d}"
                )
            padded = max(before, 0) or max(after, 0)
            if mode != "constant" and padded and left == 0:
                raise VerifyException(f'dim {d} is empty: "{mode}" has nothing to pad it with')
            if mode == "reflect" and left > 1 and max(before, after) > left - 1:
                raise VerifyException(
                    f'"reflect" pads dim {d} of {left} elements by {max(before, after)}, at most '
                    f"{left - 1} allowed"
                )
            result.append(size + before + after)
        return TensorType(element, result)


def _check_integral(value: float, element: IntegerType) -> None:
    """A fill value must be exactly representable in the integer type."""
    width = element.width.data
    if element.signedness.data == Signedness.UNSIGNED:
        low, high = 0, 2**width - 1
    elif width == 1:
        low, high = 0, 1
    else:
        low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    if not math.isfinite(value) or value != int(value) or not low <= value <= high:
        raise VerifyException(f"value {value} is not a {element} (an integer in [{low}, {high}])")
