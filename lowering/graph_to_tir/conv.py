"""Convolution through brgemm tiles (pooling: pool.py).

What: out[n, o, y, x] = sum over c, ky, kx of w[o, c, ky, kx] *
in[n, g * C/G + c, y * sh - pt + ky * dh, x * sw - pl + kx * dw] (NCHW input,
OIHW weights, G groups; outside the input reads 0).
How, for f32-computed convolutions (the direct formulation oneDNN's brgemm
convolutions use, on NCHW):
- the input is repacked once per call into rows `shifted[n, kx, h, c, x]`
  = the padded input row h of channel c at column x * sw + kx * dw, so
  every filter tap (ky, kx) of an output row reads its channels' row
  segments at a constant offset from those of (0, 0), `ow` floats apart:
  padding, stride and dilation are paid for once here, not in the hot loop,
  and a tile's B rows sit in one compact block. Output rows narrower than a
  vector are repacked as planes `shifted[n, kx, c, h, x]` instead (stride 1):
  a channel's rows follow each other, so a tile's columns run on across
  output rows (a 7x7 map is one run of 49 columns, not 7 part-filled
  vectors);
- the weights are packed into groups of mr output channels
  `[G, groups, taps, C/G, mr]` (at compile time when constant);
- each tile (mr channels x nr columns of a block of output rows, one after
  the other) is one `tir.brgemm_tile` reducing over C/G input channels for
  every tap (the filter rows and columns are two tap loops in the
  microkernel, so code does not grow with the filter); tasks are (image,
  group, block of rows, block of channel strips), chosen from the target's
  L2, vector lanes and cores (BrgemmConv._choose_blocks), the epilogue
  (bias, relu, batch norm folded by canonicalize) on each finished strip.
Integer convolutions (unless blocked: conv_blocked.py) keep a direct loop
nest (conv_direct.py).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float32Type, IndexType
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.conv_direct import direct_conv2d, inside
from graphcompiler.lowering.graph_to_tir.conv_gemm import GemmConv, conv_path
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
            elif (path := conv_path(kernel, op, x, w, out)) == "rows":
                BrgemmConv(kernel, op, x, w, out, epilogue).emit()
            else:
                GemmConv(kernel, op, x, w, out, epilogue, path == "transposed").emit()
            return
    direct_conv2d(kernel, op, x, w, out)
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
        # rows of the padded input that output rows read
        self.hp = (self.oh - 1) * self.strides[0] + (self.kh - 1) * self.dilations[0] + 1
        self.lanes = kernel.target.f32_lanes
        self._choose_blocks(kernel.target)

    def _choose_blocks(self, target) -> None:
        """The layout of the shifted input and the work of one task:
        `block_rows` output rows (dividing the output's) of `strips_per_block`
        strips of `mr` output channels (`strip_blocks` tasks cover them).

        Planes (tiles across output rows) only where a row is narrower
        than a vector (_tiles_across_rows): their channels lie a plane
        apart, so a tile's reads spread over many pages (a 14-column layer ran 20% slower as planes than as
        rows, AVX2), while a 7-column row fills 7 of 16 lanes. Among the row
        counts whose planes fit in 3/4 of L2, the choice gives at least 2
        tasks per core (`target.cores`; 4 are asked for) where there is
        enough work, then the best-filled vectors, then the least
        re-reading: a cut of the rows reads every weight once more, a cut of
        the channel strips the block's input (as matmul blocks cut N and M)."""
        self.planes = self._tiles_across_rows()
        # a row of the shifted input starts on a vector boundary: every B
        # load of the microkernel is then aligned (a 16-lane load off a
        # 64-byte boundary splits two cache lines); planes keep their rows
        # back to back
        lanes = self.lanes
        self.row_length = self.ow if self.planes else -(-self.ow // lanes) * lanes
        row_bytes = self.c_per_group * self.kw * self.row_length * 4
        halo = (self.kh - 1) * self.dilations[0]
        most_rows = target.l2_bytes * 3 // 4 // row_bytes - halo if self.planes else 1
        work = math.prod(self.out.shape) * self.c_per_group * self.kh * self.kw
        self.parallel = worth_parallel_work(self.n * self.groups * self.oh, work // 64)
        wanted = 4 * target.cores if self.parallel else 1
        images = self.n * self.groups
        input_bytes = row_bytes * self.hp  # one image and group
        weight_bytes = self.o_per_group * self.c_per_group * self.kh * self.kw * 4
        best, best_cost = None, None
        for rows in (d for d in range(1, self.oh + 1) if self.oh % d == 0):
            if rows > max(1, most_rows):
                break
            tile_rows, vectors = MatmulSchedule.register_tile(target, rows * self.ow)
            mr = min(tile_rows, self.o_per_group)
            row_blocks, strips = self.oh // rows, math.ceil(self.o_per_group / mr)
            per_block = math.ceil(strips / min(strips, math.ceil(wanted / (images * row_blocks))))
            strip_blocks = math.ceil(strips / per_block)
            columns = rows * self.ow
            filled = columns / (math.ceil(columns / self.lanes) * self.lanes)
            cost = (
                2 * images * row_blocks * strip_blocks < wanted,  # too few to balance
                -round(filled, 2),
                strip_blocks * input_bytes + row_blocks * weight_bytes,
            )
            if best_cost is None or cost < best_cost:
                best, best_cost = (rows, mr, vectors * self.lanes, per_block, strip_blocks), cost
        self.block_rows, self.mr, self.nr, self.strips_per_block, self.strip_blocks = best

    def _tiles_across_rows(self) -> bool:
        """Planes: with a vertical stride of 1, for rows narrower than a vector."""
        return self.strides[0] == 1 and self.oh > 1 and self.ow < self.lanes

    def _shifted_input(self) -> SSAValue:
        """The input as rows `shifted[n, kx, h, c, x]` (or planes
        `shifted[n, kx, c, h, x]`) = padded input[n, c, h, x * sw + kx * dw].
        The filter columns kx are a loop: the code is the same for any
        filter width."""
        kernel, b = self.kernel, self.b
        channel_and_row = [self.c, self.hp] if self.planes else [self.hp, self.c]
        shifted = b.make_tensor([self.n, self.kw, *channel_and_row, self.row_length], f32)
        pt = self.pads[0]
        outer = [self.n, self.hp, self.c]
        parallel = worth_parallel_work(math.prod(outer), math.prod(outer) * self.kw * self.ow)
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            image, row, channel = unflatten(kernel, flat, outer)
            leading = [channel, row] if self.planes else [row, channel]
            source_row = b.sub(row, pt)
            branch = b.make_if(inside(kernel, [source_row], [self.h]), with_else=True)
            with b.at_end_of(branch.then_region.block), b.make_for(0, self.kw, 1) as kx:
                shift = b.sub(b.mul(kx, self.dilations[1]), self.pads[1])
                source = [image, channel, source_row]
                copy_input_row(kernel, self.x, shifted, [image, kx, *leading], source,
                               self.ow, self.strides[1], shift)  # fmt: skip
            with b.at_end_of(branch.else_region.block), b.make_for(0, self.kw, 1) as kx:
                fill_zeros(b, shifted, [image, kx, *leading], 0, self.ow)
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
        length = self.row_length
        if self.planes:
            row_stride, channel_stride = length, self.hp * length
        else:
            row_stride, channel_stride = self.c * length, length
        kx_stride = self.c * self.hp * length
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
        rows = self.block_rows
        columns = rows * self.ow  # of a block's output rows, one after the other
        per_block, strip_blocks = self.strips_per_block, self.strip_blocks
        grid = [self.n, self.groups, self.oh // rows, strip_blocks]
        with kernel.loop_nest([math.prod(grid)], self.parallel) as (flat,):
            image, group, block, strip_block = unflatten(kernel, flat, grid)
            y = b.mul(block, rows)
            first_channel = b.mul(group, self.c_per_group)

            def strip(channel_group, strip_rows: int) -> None:
                o0 = b.add(b.mul(group, self.o_per_group), b.mul(channel_group, self.mr))
                a_view = b.tensor_ptr(
                    weights, [group, channel_group, 0, 0, 0], [self.kh * self.kw * tap_block]
                )

                def panel(x0, cols: int) -> None:
                    """The tile of columns x0... of the block's rows, one after the other."""
                    if rows == 1:  # x0 is the column
                        rows_on, column = 0, x0
                    elif isinstance(x0, int):  # the last tile: folded here
                        rows_on, column = divmod(x0, self.ow)
                    else:
                        rows_on, column = b.div(x0, self.ow), b.mod(x0, self.ow)
                    output_row = b.add(y, rows_on)
                    input_row = b.mul(output_row, sh)
                    b_index = [image, 0, first_channel, input_row, column]
                    if not self.planes:
                        b_index[2:4] = [input_row, first_channel]
                    footprint = last_b + (self.c_per_group - 1) * channel_stride + cols
                    b_view = b.tensor_ptr(shifted, b_index, [footprint])
                    c_view = b.tensor_ptr(
                        self.out.value, [image, o0, output_row, column],
                        [(strip_rows - 1) * self.oh * self.ow + cols],
                    )  # fmt: skip
                    b.make_brgemm_tile(
                        a_view, b_view, c_view, taps, m=strip_rows, n=cols, k=self.c_per_group,
                        lanes=self.lanes, a_row=1, a_k=self.mr, ldb=channel_stride,
                        ldc=self.oh * self.ow,
                    )  # fmt: skip

                whole, rest = divmod(columns, self.nr)
                if whole:
                    with b.make_for(0, whole * self.nr, self.nr) as x0:
                        panel(x0, self.nr)
                if rest:
                    panel(whole * self.nr, rest)
                if self.epilogue:
                    self.epilogue([image, o0, y, 0], [1, strip_rows, rows, self.ow])

            first = b.mul(strip_block, per_block)
            if full_groups:
                end = b.binary(tir.MinOp, b.add(first, per_block), full_groups)
                with b.make_for(first, end, 1) as channel_group:
                    strip(channel_group, self.mr)
            if tail:  # in the last block
                last = b.make_if(b.binary(tir.EqOp, strip_block, strip_blocks - 1))
                with b.at_end_of(last.then_region.block):
                    strip(b.value(full_groups, IndexType()), tail)
