"""Channel-blocked activations: the reorders into and out of the blocked
form, and the convolution that reads and writes it.

A blocked tensor is an ordinary tensor whose shape spells its layout:
[N, C, H, W] stored as [N, ceil(C / b), H, W, b] (oneDNN's nChw16c for b =
16), so every op that takes plain tensors (element-wise ops, graph-fuse's
epilogues) runs on it unchanged, with the b channels of a pixel in one
vector. Where b does not divide C, the last block has b - C % b padding
lanes. What they hold is unspecified (to_blocked writes zeros, lane-wise
ops whatever their math gives): ops that read across channels
(blocked_conv2d's reduction, from_blocked) skip them. graph-block-layout
chooses b (the target's f32 lanes) and where the blocked form flows.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    _fmt,
    _shape,
    int_value,
)
from graphcompiler.dialects.graph.conv_pool import (
    ConvolutionOp,
    _require_rank,
    _window_params,
    window_output_shape,
)


def blocked_shape(shape: list[int], block: int) -> list[int]:
    """[N, C, *spatial] -> [N, ceil(C / block), *spatial, block]."""
    return [shape[0], -(-shape[1] // block), *shape[2:], block]


def plain_shape(shape: list[int], channels: int | None = None) -> list[int]:
    """[N, C / b, *spatial, b] -> [N, C, *spatial]; `channels`: C where
    the last block is padded (default: every lane a channel)."""
    whole = shape[1] * shape[-1]
    return [shape[0], whole if channels is None else channels, *shape[2:-1]]


def _channels_fit(channels: int, blocks: int, block: int) -> bool:
    """Whether `blocks` blocks of `block` lanes hold `channels`, with less than a block spare."""
    return channels > 0 and -(-channels // block) == blocks


def _require_positive_block(op_class, block: int) -> None:
    """A blocked operand's innermost size is its block: at least one lane."""
    if block <= 0:
        raise VerifyException(
            f"{op_class.operand_role(0)} has blocks of {block} lanes: expected 1 or more"
        )


@irdl_op_definition
class ToBlockedOp(GraphOp):
    """Reorders [N, C, *spatial] into [N, ceil(C / block), *spatial, block]:
    result[n, c // block, ..., c % block] = input[n, c, ...], and 0 in the
    lanes past C.

    Example:

        %b = graph.to_blocked %x {block = 16} : tensor<1x32x7x7xf32> -> tensor<1x2x7x7x16xf32>
    """

    name = "graph.to_blocked"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    block = prop_def(IntegerAttr[I64])
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def block_size(self) -> int:
        return self.block.value.data

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        shape = _shape(operand_types[0])
        block = int_value(properties, "block")
        if len(shape) < 2:
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}: expected [N, C, ...] (rank 2 or more)"
            )
        if block <= 0:
            raise VerifyException(f"block {block} must be positive")
        return TensorType(operand_types[0].element_type, blocked_shape(shape, block))


@irdl_op_definition
class FromBlockedOp(GraphOp):
    """Reorders [N, ceil(C / b), *spatial, b] back into [N, C, *spatial]
    (b is the input's innermost size; C is the result's, all the lanes when
    not given): to_blocked's inverse, the padding lanes dropped.

    Example:

        %x = graph.from_blocked %b : tensor<1x2x7x7x16xf32> -> tensor<1x32x7x7xf32>
        %y = graph.from_blocked %b : tensor<1x2x7x7x16xf32> -> tensor<1x24x7x7xf32>
    """

    name = "graph.from_blocked"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        shape = _shape(operand_types[0])
        if len(shape) < 3:
            raise VerifyException(
                f"{cls.operand_role(0)} has rank {len(shape)}: expected [N, C / b, ..., b] "
                "(rank 3 or more)"
            )
        _require_positive_block(cls, shape[-1])
        channels = None
        if result_type is not None and len(_shape(result_type)) == len(shape) - 1:
            given = _shape(result_type)[1]
            channels = given if _channels_fit(given, shape[1], shape[-1]) else None
        return TensorType(operand_types[0].element_type, plain_shape(shape, channels))


@irdl_op_definition
class BlockedConv2dOp(ConvolutionOp):
    """graph.conv2d on channel-blocked tensors: input [N, ceil(C / b), H, W, b],
    weight OIHW [O, C / groups, KH, KW] (plain: it gives C and O), result
    [N, ceil(O / b), OH, OW, b]; `groups` is 1, C = O (depthwise), or
    divides C and O into whole blocks (RegNet's and ResNeXt's grouped
    layers: each group's input and output blocks its own). Equal to
    to_blocked(conv2d(from_blocked(input), weight)) with the same
    properties, but for the result's padding lanes, which it leaves
    unspecified (the input's are never read). The input may also be plain
    NCHW, with one group (a network's RGB stem, narrower than a block):
    to_blocked(conv2d(input, weight)), the block given by the result type.

    Example:

        %y = graph.blocked_conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x2x8x8x16xf32>
        %z = graph.blocked_conv2d %x, %v : (tensor<1x2x8x8x16xf32>, tensor<24x20x1x1xf32>) -> tensor<1x2x8x8x16xf32>
        %g = graph.blocked_conv2d %x, %gw {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8x16xf32>, tensor<32x16x3x3xf32>) -> tensor<1x2x8x8x16xf32>
        %q = graph.blocked_conv2d %u, %w8 {pad_value = 3 : i64} : (tensor<1x1x8x8x16xui8>, tensor<16x16x3x3xi8>) -> tensor<1x1x6x6x16xi32>
        %s = graph.blocked_conv2d %rgb, %w7 {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x3x32x32xf32>, tensor<64x3x7x7xf32>) -> tensor<1x4x16x16x16xf32>
    """

    name = "graph.blocked_conv2d"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        element = cls.convolution_element(operand_types, properties, result_type)
        _require_rank(cls, operand_types, 1, 4)
        if len(_shape(operand_types[0])) == 4:
            return cls._from_plain_input(operand_types, properties, result_type, element)
        _require_rank(cls, operand_types, 0, 5)
        (n, blocks, h, w, block), (o, i, kh, kw) = map(_shape, operand_types)
        groups = int_value(properties, "groups")
        _require_positive_block(cls, block)
        if groups <= 0:
            raise VerifyException(f"groups {groups} must be positive")
        c = i * groups
        depthwise = groups == o and i == 1
        whole_blocks = c % (groups * block) == 0 and o % (groups * block) == 0
        if groups != 1 and not depthwise and not whole_blocks:
            raise VerifyException(
                f"groups {groups} must be 1, the {c} channels (depthwise, as many outputs), "
                f"or split the {c} input and {o} output channels into whole blocks of {block}"
            )
        if not _channels_fit(c, blocks, block):
            raise VerifyException(
                f"{cls.operand_role(1)} {_fmt([o, i, kh, kw])} with {groups} groups reads "
                f"{c} channels, which {blocks} blocks of {block} do not hold"
            )
        dilations = _window_params(properties, "dilations", 2, 1)
        oh, ow = window_output_shape(properties, [n, c, h, w], [kh, kw], dilations)
        return TensorType(element, [n, -(-o // block), oh, ow, block])

    @classmethod
    def _from_plain_input(cls, operand_types, properties, result_type, element):
        """A plain NCHW input (a narrow one: an RGB image) into a blocked
        result, whose type gives the block."""
        (n, c, h, w), (o, i, kh, kw) = map(_shape, operand_types)
        if int_value(properties, "groups") != 1 or i != c:
            raise VerifyException(
                f"a plain input takes one group: {cls.operand_role(1)} "
                f"{_fmt([o, i, kh, kw])} must read its {c} channels"
            )
        result_shape = _shape(result_type) if isinstance(result_type, TensorType) else []
        if len(result_shape) != 5 or result_shape[-1] <= 0:
            raise VerifyException(
                "a plain input needs a blocked result type [N, O / b, OH, OW, b] to give the block"
            )
        block = result_shape[-1]
        dilations = _window_params(properties, "dilations", 2, 1)
        oh, ow = window_output_shape(properties, [n, c, h, w], [kh, kw], dilations)
        return TensorType(element, [n, -(-o // block), oh, ow, block])
