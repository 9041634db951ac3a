"""Convolutions as direct loop nests, one sum per output element: what
integer convolutions run (but u8 x s8 ones that are blocked, on byte
quads), and other element types: in the sum's width, reading the conv's
`pad_value` outside the input."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext as _here

from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.graph import is_float
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, compute_type


def _window_origin(kernel: Kernel, position: SSAValue, stride: int, pad: int) -> SSAValue:
    return kernel.b.sub(kernel.b.mul(position, stride), pad)


def inside(kernel: Kernel, coordinates: list[SSAValue], sizes: list[int]) -> SSAValue:
    """0 <= c < size for every coordinate, as one i1."""
    b = kernel.b
    result = None
    for coordinate, size in zip(coordinates, sizes, strict=True):
        check = b.binary(
            tir.AndOp, b.binary(tir.GeOp, coordinate, 0), b.binary(tir.LtOp, coordinate, size)
        )
        result = check if result is None else b.binary(tir.AndOp, result, check)
    return result


def add_tap_product(
    kernel: Kernel,
    total: SSAValue,
    in_bounds: SSAValue,
    input_value: Callable[[], SSAValue],
    weight: Callable[[], SSAValue],
    pad_value: int,
) -> None:
    """total += input * weight for a convolution tap inside the input,
    pad_value * weight outside it, in the sum's type: the direct loop
    nests' inner step. An integer pad value of 0 adds nothing; a float one
    still multiplies, so an inf weight over padding gives NaN as in numpy."""
    b = kernel.b
    sum_type = b.read(total).type

    def widened(value: SSAValue) -> SSAValue:  # products of 8 or 16 bits need the sum's width
        return value if value.type == sum_type else b.cast(value, sum_type)

    outside = bool(pad_value) or is_float(sum_type)
    branch = b.make_if(in_bounds, with_else=outside)
    with b.at_end_of(branch.then_region.block):
        product = b.mul(widened(input_value()), widened(weight()))
        b.make_assign(total, b.add(b.read(total), product))
    if outside:
        with b.at_end_of(branch.else_region.block):
            product = b.mul(b.const(pad_value, sum_type), widened(weight()))
            b.make_assign(total, b.add(b.read(total), product))


def direct_conv2d(kernel: Kernel, op, x: Operand, w: Operand, out: Operand) -> None:
    """Integer (and mixed-type) convolution: one dot product per output element."""
    b = kernel.b
    n, c, h, width = x.shape
    o, i_per_group, kh, kw = w.shape
    groups = op.group_count
    strides, pads, dilations = op.window_strides, op.window_padding[:2], op.window_dilations
    _, _, oh, ow = out.shape
    with kernel.loop_nest([o, n, oh, ow]) as (oc, batch, y, z):
        group = b.div(oc, o // groups)
        total = kernel.var(compute_type(out.element), 0)
        with kernel.loop_nest([i_per_group, kh, kw], parallel=False) as (ic, ky, kx):
            row = b.add(_window_origin(kernel, y, strides[0], pads[0]), b.mul(ky, dilations[0]))
            column = b.add(_window_origin(kernel, z, strides[1], pads[1]), b.mul(kx, dilations[1]))
            channel = b.add(b.mul(group, i_per_group), ic)
            add_tap_product(
                kernel, total, inside(kernel, [row, column], [h, width]),
                lambda: kernel.load(x, [batch, channel, row, column]),
                lambda: kernel.load(w, [oc, ic, ky, kx]), op.padding_value,
            )  # fmt: skip
        kernel.store(out, [batch, oc, y, z], b.read(total))


def direct_blocked_conv2d(kernel: Kernel, op, x: Operand, w: Operand, out: Operand) -> None:
    """Other element types and blocks wider than a vector: one sum per
    output element (a padding lane's is 0)."""
    b = kernel.b
    _, _, h, width, in_block = x.shape
    block = out.shape[-1]
    outputs, c_per_group, kh, kw = w.shape
    (sh, sw), (top, left) = op.window_strides, op.window_padding[:2]
    dh, dw = op.window_dilations
    outputs_per_group = outputs // op.group_count
    with kernel.loop_nest(out.shape) as (image, blocks, y, x_, lane):
        o = b.add(b.mul(blocks, block), lane)
        total = kernel.var(compute_type(out.element), 0)
        output = b.make_if(b.binary(tir.LtOp, o, outputs)) if outputs % block else None
        with b.at_end_of(output.then_region.block) if output else _here():  # not a padding lane
            with kernel.loop_nest([c_per_group, kh, kw], parallel=False) as (c, ky, kx):
                row = b.add(b.sub(b.mul(y, sh), top), b.mul(ky, dh))
                column = b.add(b.sub(b.mul(x_, sw), left), b.mul(kx, dw))
                channel = c  # of the output channel's group
                if op.group_count > 1:
                    first = b.mul(b.div(o, outputs_per_group), c_per_group)
                    channel = b.add(first, c)
                at = [image, b.div(channel, in_block), row, column, b.mod(channel, in_block)]
                add_tap_product(kernel, total, inside(kernel, [row, column], [h, width]), lambda at=at: kernel.load(x, at),
                                lambda: kernel.load(w, [o, c, ky, kx]), op.padding_value)  # fmt: skip
        kernel.store(out, [image, blocks, y, x_, lane], b.read(total))
