"""2-D convolution and pooling over NCHW tensors."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    _fmt,
    _require_float,
    _require_numeric,
    _shape,
    i64_array,
    int_list,
    int_value,
    widened_element,
)


def _window_output(
    size: int, kernel: int, stride: int, pad_before: int, pad_after: int, dilation: int
) -> int:
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def _window_params(properties, name: str, count: int, default: int) -> list[int]:
    values = int_list(properties, name) if name in properties else [default] * count
    if len(values) != count:
        raise VerifyException(f"{name} has {len(values)} entries, expected {count}")
    if name != "padding" and any(v <= 0 for v in values):
        raise VerifyException(f"{name} {_fmt(values)} must be positive")
    if name == "padding" and any(v < 0 for v in values):
        raise VerifyException(f"padding {_fmt(values)} must not be negative")
    return values


def window_output_shape(
    properties, input_shape: Sequence[int], kernel: Sequence[int], dilations: Sequence[int]
) -> list[int]:
    """Output H, W of a 2-D window op (NCHW input, padding = top, left, bottom, right)."""
    strides = _window_params(properties, "strides", 2, 1)
    padding = _window_params(properties, "padding", 4, 0)
    sizes = [
        _window_output(
            input_shape[2 + d], kernel[d], strides[d], padding[d], padding[d + 2], dilations[d]
        )
        for d in range(2)
    ]
    if min(sizes) <= 0:
        raise VerifyException(
            f"the window does not fit: input spatial size {_fmt(input_shape[2:])} gives "
            f"output {_fmt(sizes)}"
        )
    return sizes


def _require_rank(cls: type[GraphOp], types: Sequence[TensorType], index: int, rank: int) -> None:
    if len(_shape(types[index])) != rank:
        raise VerifyException(
            f"{cls.operand_role(index)} has rank {len(_shape(types[index]))}, expected {rank}"
        )


class HasWindow:
    """A 2-D window op's `strides` and `padding` (defaults filled in)."""

    @property
    def window_strides(self) -> list[int]:
        """[h, w]"""
        return list(self.strides.get_values())

    @property
    def window_padding(self) -> list[int]:
        """[top, left, bottom, right]"""
        return list(self.padding.get_values())


def _holds(element: IntegerType, value: int) -> bool:
    """Whether `value` is one of the element type's (signless as signed)."""
    bits = element.width.data
    if element.signedness.data == Signedness.UNSIGNED:
        return 0 <= value < 1 << bits
    return -(1 << bits - 1) <= value < 1 << bits - 1


class ConvolutionOp(HasWindow, GraphOp):
    """The operands and window of a convolution (graph.conv2d and
    graph.blocked_conv2d): input, weight OIHW, strides and dilations [h, w],
    padding [top, left, bottom, right], groups, and `pad_value`, what an
    integer input reads outside its borders (its zero point: 8-bit
    convolutions on the quantized values themselves; 0 by default, and
    always for floats)."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    strides = prop_def(DenseArrayBase, default_value=i64_array([1, 1]))
    padding = prop_def(DenseArrayBase, default_value=i64_array([0, 0, 0, 0]))
    dilations = prop_def(DenseArrayBase, default_value=i64_array([1, 1]))
    groups = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    pad_value = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    assembly_format = "$input `,` $weight attr-dict `:` functional-type(operands, results)"

    @property
    def padding_value(self) -> int:
        """`pad_value`: what the input reads outside its borders."""
        return self.pad_value.value.data

    @classmethod
    def convolution_element(cls, operand_types, properties, result_type) -> IntegerType:
        """The result's element type (widened_element), after checking
        `pad_value` against the input's element type."""
        element = widened_element(cls, operand_types, result_type)
        pad = properties["pad_value"].value.data if "pad_value" in properties else 0
        input_element = operand_types[0].element_type
        if pad and not (isinstance(input_element, IntegerType) and _holds(input_element, pad)):
            raise VerifyException(f"pad_value {pad} is not a value of {input_element}")
        return element

    @property
    def window_dilations(self) -> list[int]:
        """[h, w]"""
        return list(self.dilations.get_values())

    @property
    def group_count(self) -> int:
        """`groups`: the channels split into this many independent convolutions."""
        return self.groups.value.data


@irdl_op_definition
class Conv2dOp(ConvolutionOp):
    """2-D convolution, input NCHW, weight OIHW (I = C / groups).

    Cross-correlation as in PyTorch's conv2d and ONNX Conv (the filter is not
    flipped), without bias (add one with graph.add of a [O, 1, 1] tensor):
    input [N, C, H, W], weight [O, C / groups, KH, KW], result [N, O, OH, OW]
    with OH = (H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) // stride_h + 1
    (likewise OW). `strides` and `dilations` are [h, w]; `padding` is
    [top, left, bottom, right] (zeros; ONNX `pads` order [h_begin, w_begin,
    h_end, w_end], unlike PyTorch's symmetric [h, w]); `groups` splits the
    channels (groups = C = O is depthwise). Accumulates in f32; f16 and bf16
    operands may give an f32 result (the sum not rounded back, as
    graph.matmul's `widens`).

    Example:

        %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x16x16xf32>
        %q = graph.conv2d %u, %w8 {padding = array<i64: 1, 1, 1, 1>, pad_value = 128 : i64} : (tensor<1x16x8x8xui8>, tensor<32x16x3x3xi8>) -> tensor<1x32x8x8xi32>
    """

    name = "graph.conv2d"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        element = cls.convolution_element(operand_types, properties, result_type)
        for index in (0, 1):
            _require_rank(cls, operand_types, index, 4)
        (n, c, _, _), (o, i, kh, kw) = _shape(operand_types[0]), _shape(operand_types[1])
        groups = int_value(properties, "groups")
        if groups <= 0 or c % groups or o % groups:
            raise VerifyException(
                f"groups {groups} must be positive and divide the {c} input and {o} output channels"
            )
        if i * groups != c:
            raise VerifyException(
                f"{cls.operand_role(1)} has {i} input channels, expected {c // groups} "
                f"({c} channels of {cls.operand_role(0)} / {groups} groups)"
            )
        dilations = _window_params(properties, "dilations", 2, 1)
        h, w = window_output_shape(properties, _shape(operand_types[0]), [kh, kw], dilations)
        return TensorType(element, [n, o, h, w])


class PoolOp(HasWindow, GraphOp):
    """A 2-D pooling window over an NCHW input: `kernel` [KH, KW] (required),
    `strides` [h, w], `padding` [top, left, bottom, right]; output sizes as
    conv2d's (no dilation, floor rounding: no ceil_mode). Each channel pools
    on its own, so a channel-blocked input [N, C / b, H, W, b]
    (graph.to_blocked's) pools the same way, each lane a channel, into a
    blocked result: graph-block-layout keeps a network's pools between its
    blocked convolutions without reorders.

    Example:

        %p = {op} %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
        %q = {op} %b {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x8x8x16xf32> -> tensor<1x2x4x4x16xf32>
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    kernel = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase, default_value=i64_array([1, 1]))
    padding = prop_def(DenseArrayBase, default_value=i64_array([0, 0, 0, 0]))
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def window_size(self) -> list[int]:
        """`kernel`: [KH, KW]"""
        return list(self.kernel.get_values())

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_numeric(cls, operand_types[0], 0)
        shape = _shape(operand_types[0])
        if len(shape) not in (4, 5):
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}, expected 4 (NCHW) "
                "or 5 (channel-blocked)"
            )
        kernel = _window_params(properties, "kernel", 2, 1)
        h, w = window_output_shape(properties, shape[:4], kernel, [1, 1])
        return TensorType(operand_types[0].element_type, [*shape[:2], h, w, *shape[4:]])


class FloatPoolOp(PoolOp):
    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class MaxPool2dOp(PoolOp):
    """maximum over each window (padding never wins)"""

    name = "graph.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(FloatPoolOp):
    """mean over each window, padding excluded from the count"""

    name = "graph.avg_pool2d"
