"""Convolution through brgemm tiles (pooling: pool.py).

What: out[n, o, y, x] = sum over c, ky, kx of w[o, c, ky, kx] *
in[n, g * C/G + c, y * sh - pt + ky * dh, x * sw - pl + kx * dw] (NCHW input,
OIHW weights, G groups; outside the input reads 0).
How, for f32-computed convolutions (the direct formulation oneDNN's brgemm
convolutions use, on NCHW):
- the input is repacked once per call into `shifted[n, kx, h, c, x]` =
  the padded input row h of channel c at column x * sw + kx * dw, so every
  filter tap (ky, kx) of an output row y reads its channels' row segments
  at a constant offset from those of (0, 0), `ow` floats apart: padding,
  stride and dilation are paid for once here, not in the hot loop, and a
  tile's B rows sit in one compact block;
- the weights are packed into groups of mr output channels
  `[G, groups, taps, C/G, mr]` (at compile time when constant);
- each output row strip (mr channels x nr columns) is one `tir.brgemm_tile`
  reducing over C/G input channels for every tap (the filter rows and
  columns are two tap loops in the microkernel, so code does not grow with
  the filter), parallel over (image, group, output row), the epilogue (bias, relu,
  batch_norm fused by graph-fuse) on each finished strip.
Integer convolutions keep a direct loop nest.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float32Type, IndexType
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.conv_gemm import GemmConv, prefers_gemm
from graphcompiler.lowering.graph_to_tir.depthwise import DepthwiseConv, is_depthwise
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    worth_parallel_work,
)
from graphcompiler.lowering.graph_to_tir.matmul import (
    Epilogue,
    unflatten,
)
from graphcompiler.lowering.graph_to_tir.padded_rows import copy_input_row, fill_zeros
from graphcompiler.target.schedules import MatmulSchedule

f32 = Float32Type()


def _window_origin(kernel: Kernel, position: SSAValue, stride: int, pad: int) -> SSAValue:
    return kernel.b.sub(kernel.b.mul(position, stride), pad)


def _inside(kernel: Kernel, coordinates: list[SSAValue], sizes: list[int]) -> SSAValue:
    """0 <= c < size for every coordinate, as one i1."""
    b = kernel.b
    result = None
    for coordinate, size in zip(coordinates, sizes, strict=True):
        check = b.binary(
            tir.AndOp, b.binary(tir.GeOp, coordinate, 0), b.binary(tir.LtOp, coordinate, size)
        )
        result = check if result is None else b.binary(tir.AndOp, result, check)
    return result


def _window_params(op: graph.Conv2dOp) -> tuple[list[int], list[int], list[int]]:
    """strides, the top and left padding, dilations."""
    return op.window_strides, op.window_padding[:2], op.window_dilations


def conv2d(kernel: Kernel, op: graph.Conv2dOp) -> None:
    conv2d_into(kernel, op, kernel.inputs[0], kernel.inputs[1], kernel.out)


def conv2d_into(
    kernel: Kernel,
    op: graph.Conv2dOp,
    x: Operand,
    w: Operand,
    out: Operand,
    epilogue: Epilogue | None = None,
) -> None:
    if all(compute_type(o.element) == f32 for o in (x, w)) and out.element == f32:
        if 0 not in (*x.shape, *w.shape, *out.shape):
            if is_depthwise(x, w, op.group_count):
                DepthwiseConv(kernel, op, x, w, out, epilogue).emit()
            elif prefers_gemm(kernel, op, w, out):
                GemmConv(kernel, op, x, w, out, epilogue).emit()
            else:
                BrgemmConv(kernel, op, x, w, out, epilogue).emit()
            return
    _direct_conv2d(kernel, op, x, w, out)
    if epilogue:
        epilogue([0, 0, 0, 0], out.shape)


class BrgemmConv:
    def __init__(self, kernel: Kernel, op, x: Operand, w: Operand, out: Operand, epilogue):
        self.kernel, self.b = kernel, kernel.b
        self.x, self.w, self.out, self.epilogue = x, w, out, epilogue
        self.groups = op.group_count
        self.strides, self.pads, self.dilations = _window_params(op)
        self.n, self.c, self.h, self.width = x.shape
        self.o, self.c_per_group, self.kh, self.kw = w.shape
        self.o_per_group = self.o // self.groups
        _, _, self.oh, self.ow = out.shape
        rows, vectors = MatmulSchedule.register_tile(kernel.target, self.ow)
        self.mr, self.lanes = min(rows, self.o_per_group), kernel.target.f32_lanes
        self.nr = vectors * self.lanes
        # rows of the padded input that output rows read
        self.hp = (self.oh - 1) * self.strides[0] + (self.kh - 1) * self.dilations[0] + 1

    def _shifted_input(self) -> SSAValue:
        """The input as rows `shifted[n, kx, h, c, x]` = padded input[n, c,
        h, x * sw + kx * dw]: one filter tap's B rows (consecutive channels)
        are `ow` floats apart, so a tile reads one compact block instead of
        a page per channel. The filter columns kx are a loop: the code is the
        same for any filter width."""
        kernel, b = self.kernel, self.b
        shifted = b.make_tensor([self.n, self.kw, self.hp, self.c, self.ow], f32)
        pt = self.pads[0]
        outer = [self.n, self.hp, self.c]
        parallel = worth_parallel_work(math.prod(outer), math.prod(outer) * self.kw * self.ow)
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            image, row, channel = unflatten(kernel, flat, outer)
            source_row = b.sub(row, pt)
            branch = b.make_if(_inside(kernel, [source_row], [self.h]), with_else=True)
            with b.at_end_of(branch.then_region.block), b.make_for(0, self.kw, 1) as kx:
                shift = b.sub(b.mul(kx, self.dilations[1]), self.pads[1])
                source = [image, channel, source_row]
                copy_input_row(kernel, self.x, shifted, [image, kx, row, channel], source,
                               self.ow, self.strides[1], shift)  # fmt: skip
            with b.at_end_of(branch.else_region.block), b.make_for(0, self.kw, 1) as kx:
                fill_zeros(b, shifted, [image, kx, row, channel], 0, self.ow)
        return shifted

    def _packed_weights(self) -> SSAValue:
        """Weights as [G, channel groups, taps, C/G, mr], rows past O/G zero."""
        g, groups = self.groups, math.ceil(self.o_per_group / self.mr)
        taps = self.kh * self.kw
        shape = [g, groups, taps, self.c_per_group, self.mr]
        if isinstance(self.w.constant, DenseIntOrFPElementsAttr):
            mr, o_per_group, c_per_group = self.mr, self.o_per_group, self.c_per_group

            def pack(weights: np.ndarray) -> np.ndarray:
                padded = np.zeros((g, groups * mr, c_per_group, taps), np.float32)
                padded[:, :o_per_group] = weights.reshape(g, o_per_group, c_per_group, taps)
                packed = padded.reshape(g, groups, mr, c_per_group, taps).transpose(0, 1, 4, 3, 2)
                return np.ascontiguousarray(packed)

            return self.kernel.packed_constant(self.w, "packed_w", pack)
        kernel, b = self.kernel, self.b
        packed = b.make_tensor(shape, f32)
        with kernel.loop_nest([g * groups]) as (flat,):
            group, channel_group = unflatten(kernel, flat, [g, groups])
            with kernel.loop_nest([taps, self.c_per_group, self.mr], parallel=False) as (tap, c, r):
                local = b.add(b.mul(channel_group, self.mr), r)
                inside = b.binary(tir.LtOp, local, self.o_per_group)
                o = b.add(b.mul(group, self.o_per_group), b.select(inside, local, 0))
                value = kernel.load(self.w, [o, c, b.div(tap, self.kw), b.mod(tap, self.kw)])
                value = b.select(inside, value, kernel.const(0, value))
                b.make_store(value, packed, [group, channel_group, tap, c, r])
        return packed

    def emit(self) -> None:
        kernel, b = self.kernel, self.b
        shifted = self._shifted_input()
        weights = self._packed_weights()
        sh, dh = self.strides[0], self.dilations[0]
        channel_stride, row_stride = self.ow, self.c * self.ow
        kx_stride = self.hp * row_stride
        tap_block = self.c_per_group * self.mr
        # filter rows outside columns: the microkernel's two tap loops
        taps = [
            (count, a_step, b_step)
            for count, a_step, b_step in (
                (self.kh, self.kw * tap_block, dh * row_stride),
                (self.kw, tap_block, kx_stride),
            )
            if count > 1
        ]
        last_b = sum((count - 1) * b_step for count, _, b_step in taps)
        full_groups, tail = divmod(self.o_per_group, self.mr)
        grid = [self.n, self.groups, self.oh]
        work = math.prod(self.out.shape) * self.c_per_group * self.kh * self.kw  # multiply-adds
        parallel = worth_parallel_work(math.prod(grid), work // 64)
        with kernel.loop_nest([math.prod(grid)], parallel) as (flat,):
            image, group, y = unflatten(kernel, flat, grid)
            input_row = b.mul(y, sh)
            first_channel = b.mul(group, self.c_per_group)

            def strip(channel_group, rows: int) -> None:
                o0 = b.add(b.mul(group, self.o_per_group), b.mul(channel_group, self.mr))
                a_view = b.tensor_ptr(
                    weights, [group, channel_group, 0, 0, 0], [self.kh * self.kw * tap_block]
                )

                def panel(x0, cols: int) -> None:
                    b_index = [image, 0, input_row, first_channel, x0]
                    footprint = last_b + (self.c_per_group - 1) * channel_stride + cols
                    b_view = b.tensor_ptr(shifted, b_index, [footprint])
                    c_view = b.tensor_ptr(
                        self.out.value, [image, o0, y, x0], [(rows - 1) * self.oh * self.ow + cols]
                    )
                    b.make_brgemm_tile(
                        a_view, b_view, c_view, taps, m=rows, n=cols, k=self.c_per_group,
                        lanes=self.lanes, a_row=1, a_k=self.mr, ldb=channel_stride,
                        ldc=self.oh * self.ow,
                    )  # fmt: skip

                whole, rest = divmod(self.ow, self.nr)
                if whole:
                    with b.make_for(0, whole * self.nr, self.nr) as x0:
                        panel(x0, self.nr)
                if rest:
                    panel(whole * self.nr, rest)
                if self.epilogue:
                    self.epilogue([image, o0, y, 0], [1, rows, 1, self.ow])

            if full_groups:
                with b.make_for(0, full_groups, 1) as channel_group:
                    strip(channel_group, self.mr)
            if tail:
                strip(b.value(full_groups, IndexType()), tail)


def _direct_conv2d(kernel: Kernel, op, x: Operand, w: Operand, out: Operand) -> None:
    """Integer (and mixed-type) convolution: one dot product per output element."""
    b = kernel.b
    n, c, h, width = x.shape
    o, i_per_group, kh, kw = w.shape
    groups = op.group_count
    strides, pads, dilations = _window_params(op)
    _, _, oh, ow = out.shape
    with kernel.loop_nest([o, n, oh, ow]) as (oc, batch, y, z):
        group = b.div(oc, o // groups)
        total = kernel.var(compute_type(out.element), 0)
        with kernel.loop_nest([i_per_group, kh, kw], parallel=False) as (ic, ky, kx):
            row = b.add(_window_origin(kernel, y, strides[0], pads[0]), b.mul(ky, dilations[0]))
            column = b.add(_window_origin(kernel, z, strides[1], pads[1]), b.mul(kx, dilations[1]))
            branch = b.make_if(_inside(kernel, [row, column], [h, width]))
            with b.at_end_of(branch.then_region.block):
                channel = b.add(b.mul(group, i_per_group), ic)
                product = b.mul(
                    kernel.load(x, [batch, channel, row, column]), kernel.load(w, [oc, ic, ky, kx])
                )
                b.make_assign(total, b.add(b.read(total), product))
        kernel.store(out, [batch, oc, y, z], b.read(total))
