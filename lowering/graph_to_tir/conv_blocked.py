"""Convolution on channel-blocked tensors (graph.blocked_conv2d).

What: out[n, o // b, y, x, o % b] = sum over c, ky, kx of w[o, c, ky, kx] *
in[n, c // b, y * sh - pt + ky * dh, x * sw - pl + kx * dw, c % b] (zero
outside the input); depthwise (groups = C = O) sums over the taps only;
groups of whole blocks (RegNet's) give each group's output blocks a
reduction over its own input blocks, as oneDNN's grouped nChw16c ones do.
How (oneDNN's direct convolution on nChw16c, as brgemm tiles):
- a padded input is copied once per call into [N, C / b, Hp, Wp, b] with its
  zero border, so that no tap is bounds-checked (unpadded inputs are read in
  place, and so are depthwise ones, whose few taps per output do not pay
  for the copy: their border taps are skipped instead);
- the weights are packed at compile time into [O / (v b), C / b, KH, KW, b,
  v b]: for each input-channel block and tap, a b x v b panel;
- a register tile is m output pixels of one row x v output-channel blocks (v
  vectors): one `tir.brgemm_tile` whose A is the input (pixel i's element of
  input channel l broadcast, pixels sw * b floats apart), B the weight panels,
  K the b channels of one input block, and whose tap grid is the input
  blocks, filter rows and filter columns (loops in the microkernel: the code
  is the same for any filter and channel count); C's vectors are the
  output's blocks, a plane apart (`ldc_vector`). The accumulators stay in
  registers over a chunk's reduction (below);
- the input blocks of one reduction are as many as keep their weights in
  half of L1 (one block at least), the tiles of a task's rows reusing them
  from there and accumulating in the output over the chunks; each tile
  prefetches a column of cache lines of the next reduction's weights into
  L2 (a chain of 512-channel 3x3 convolutions on 7x7 maps, 9.4 MiB of
  weights each, ran 1.08x onnxruntime's time without, 0.75x with);
- tasks are (image, group of v output blocks, block of rows), parallel, the
  rows of a task reusing its weights; the epilogue (bias, activation,
  residual add) runs on each task's outputs once they are final.
A plain input (an RGB stem, fewer channels than a block) is read as
blocks of one channel, K running along each filter row (K = KW), so
that a network is blocked from its first layer.
Depthwise: each block of b channels is one vector; m pixels of a row are
summed over the taps with one FMA per pixel and tap, the weight vector
loaded once per tap.
u8 x s8 (graph-integer-matmul's, one group): the same tiles over byte
quads, an element of A and B being an i32 word of four channels' bytes
(`u8_s8_quads`: `vpdpbusd` on VNNI targets, four products per lane): the
input is always copied, into words [N, C / b, rows, columns, b / 4] with a
border of the pad value's bytes, the weights packed into word panels, and
the i32 sums come out blocked like f32 ones. ResNet-50's QDQ layers ran
1.9-4.1x faster than the same f32 convolutions on a Sapphire Rapids core.
"""

from __future__ import annotations

import functools
import math
from contextlib import nullcontext as _here

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IndexType,
    IntegerType,
    TensorType,
    VectorType,
)
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.tir.types import MAX_LANES
from graphcompiler.lowering.graph_to_tir.conv_amx import (
    QUAD,
    amx_conv,
    takes_amx_tiles,
    takes_bf16_pairs,
    takes_byte_quads,
)
from graphcompiler.lowering.graph_to_tir.conv_direct import direct_blocked_conv2d, inside
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    worth_parallel_work,
)
from graphcompiler.lowering.graph_to_tir.matmul import FLOATS_PER_LINE, Epilogue, unflatten
from graphcompiler.target.description import Target
from graphcompiler.target.schedules import conv_register_tile, plane_register_tile

f32, i32 = Float32Type(), IntegerType(32)

DEPTHWISE_COLUMNS = 8
"""Pixels a depthwise tile sums at once: 8 independent FMA chains hide the
FMA latency on two ports."""


def blocked_conv2d_into(
    kernel: Kernel,
    op,
    x: Operand,
    w: Operand,
    out: Operand,
    epilogue: Epilogue | None = None,
) -> None:
    if len(x.shape) == 4:  # a plain input: blocks of one channel
        x = Operand(
            kernel.b.tensor_ptr(x.value, [0] * 4, [*x.shape, 1]),
            TensorType(x.element, [*x.shape, 1]),
        )
    block = out.shape[-1]
    vectorized = block <= MAX_LANES and all(
        compute_type(o.element) == f32 and o.element == f32 for o in (x, w, out)
    )
    quads = takes_byte_quads(op, x, w, out)
    pairs = takes_bf16_pairs(op, x, w, out)
    if (vectorized or quads or pairs) and 0 not in (*x.shape, *w.shape, *out.shape):
        if pairs or (quads and takes_amx_tiles(kernel, op, x, w, out)):
            amx_conv(kernel, op, x, w, out, epilogue)
        else:
            BlockedConv(kernel, op, x, w, out, epilogue).emit()
        return
    direct_blocked_conv2d(kernel, op, x, w, out)
    if epilogue:
        epilogue([0] * 5, out.shape)


def blocked_conv2d(kernel: Kernel, op) -> None:
    blocked_conv2d_into(kernel, op, kernel.inputs[0], kernel.inputs[1], kernel.out)


class BlockedConv:
    def __init__(self, kernel: Kernel, op, x: Operand, w: Operand, out: Operand, epilogue):
        self.kernel, self.b = kernel, kernel.b
        self.x, self.w, self.out, self.epilogue = x, w, out, epilogue
        self.n, self.blocks, self.h, self.width, self.in_block = x.shape
        self.block = out.shape[-1]
        # a plain input (blocks of one channel, a narrow input such as an
        # RGB image): K runs over the filter columns, which lie in a row
        self.columns_in_k = self.in_block == 1 and op.group_count == 1
        self.o, _, self.kh, self.kw = w.shape
        self.depthwise = op.group_count > 1 and op.group_count == self.o and w.shape[1] == 1
        # groups of whole blocks: each reduces over its own input blocks
        self.conv_groups = 1 if self.depthwise else op.group_count
        self.in_blocks = self.blocks // self.conv_groups  # of one group
        self.quads = takes_byte_quads(op, x, w, out)
        # what the tiles' A and B elements hold: one channel, or a word of four
        self.per = QUAD if self.quads else 1
        self.k_block = self.in_block // self.per
        self.pad_value = op.padding_value
        # the input blocks (of a group) whose lanes are all channels, and the
        # channels of a padded last one (blocked_shape): its padding lanes
        # are never read
        self.channels = w.shape[1] * (op.group_count if self.depthwise else 1)
        self.whole_blocks, self.last_channels = divmod(self.channels, self.in_block)
        _, self.out_blocks, self.oh, self.ow, _ = out.shape
        self.group_out_blocks = self.out_blocks // self.conv_groups
        (self.sh, self.sw), self.pads = op.window_strides, op.window_padding
        self.dh, self.dw = op.window_dilations
        # the rows and columns of the padded input that the outputs read
        self.hp = (self.oh - 1) * self.sh + (self.kh - 1) * self.dh + 1
        self.wp = (self.ow - 1) * self.sw + (self.kw - 1) * self.dw + 1
        self.padded = any(self.pads)
        target = kernel.target
        # A strided 1x1 convolution reads every sh-th row and sw-th pixel of
        # its input, which each output group reads again. Gathered once into
        # a unit-stride copy (oneDNN's "reduce to unit stride"), those pixels
        # are a quarter of the input, read contiguously and from cache:
        # ResNet-50's downsampling layers ran at 65-84 GFLOP/s, others at 100+.
        self.gathered = (
            self.kh == self.kw == 1
            and (self.sh, self.sw) != (1, 1)
            and not self.padded
            and not self.depthwise
        )
        self.a_strides = (1, 1) if self.gathered else (self.sh, self.sw)
        if self.depthwise:
            self.pixels, self.vectors, self.tile_rows = min(self.ow, DEPTHWISE_COLUMNS), 1, 1
        else:
            self.pixels, self.vectors, self.tile_rows = conv_register_tile(
                target, self.ow, self.oh, self.group_out_blocks
            )
        # a unit-stride 1x1 convolution reads each plane as one run of pixels
        self.flat = False
        if self.kh == self.kw == 1 and self.a_strides == (1, 1) and not self.padded:
            tile = plane_register_tile(target, self.ow, self.oh, self.group_out_blocks)
            if tile and not (self.depthwise or self.columns_in_k):
                self.flat = True
                (self.pixels, self.vectors), self.tile_rows = tile, 1
        self._choose_blocks(target)

    def _choose_blocks(self, target: Target) -> None:
        """`chunk`: input blocks per brgemm reduction, as many as keep their
        weights in half of L1 (at least one), so that every tile of the
        task's rows reads them from there (taking a group's weights from L2
        for every tile ran at 40% of the FMA peak); `rows`: output rows per task (dividing OH),
        the most whose outputs fit in a quarter of L2 while leaving 4 tasks
        per core (where the work is worth threads)."""
        b = self.block
        group_channels = self.vectors * b
        if self.depthwise:
            self.chunk = 1
        else:
            tap_bytes = self.kh * self.kw * self.k_block * group_channels * 4
            fitting = max(1, target.l1_bytes // 2 // tap_bytes)
            whole = max(1, self.whole_blocks)
            self.chunk = max(d for d in range(1, whole + 1) if whole % d == 0 and d <= fitting)
        groups = self.out_blocks // self.vectors
        reduction = b if self.depthwise else self.channels
        work = math.prod(self.out.shape) * reduction * self.kh * self.kw
        self.parallel = worth_parallel_work(self.n * groups * self.oh, work // 64)
        wanted = 4 * target.cores if self.parallel else 1
        row_bytes = self.ow * group_channels * 4
        self.rows = 1
        for rows in range(1, self.oh + 1):
            if self.oh % rows:
                continue
            tasks = self.n * groups * (self.oh // rows)
            if rows * row_bytes <= target.l2_bytes // 4 and tasks >= min(
                wanted, self.n * groups * self.oh
            ):
                self.rows = rows

    # --- the input and the weights -----------------------------------------------

    def _source(self) -> tuple[SSAValue, int, int]:
        """The input the taps read, its rows and columns: x itself, or a
        copy (_copied_input) where it is padded, strided 1x1 or byte quads."""
        if self.quads or self.gathered or self.padded:
            return self._copied_input()
        return self.x.value, self.h, self.width

    def _copied_input(self) -> tuple[SSAValue, int, int]:
        """[N, C / b, rows, columns, b] copied once per call: the padded
        input with its border (no tap is then bounds-checked), or the pixels
        a strided 1x1 convolution reads, gathered at unit stride (see
        `gathered`). Byte quads are
        always copied, as i32 words of four channels' bytes ([..., b / 4])
        with a border of the pad value's bytes: the tiles multiply i32
        elements."""
        kernel, b, block, per_pixel = self.kernel, self.b, self.in_block, self.k_block
        if self.gathered:
            rows, columns, top, left, copied = self.oh, self.ow, 0, 0, self.ow
        else:
            rows, columns = self.hp, self.wp
            top, left = self.pads[:2]
            copied = max(0, min(self.width, self.wp - left))  # input columns inside the window
        step = self.sw * block if self.gathered else block
        source_rows = self.sh if self.gathered else 1
        element = i32 if self.quads else f32
        vector = VectorType(element, [per_pixel]) if per_pixel > 1 else element
        if self.quads:  # the pad value's byte in each of a word's four
            fill = b.const(np.int32(np.uint32((self.pad_value & 0xFF) * 0x01010101)).item(), vector)
        else:
            fill = b.const(0.0, vector)
        copy = b.make_tensor([self.n, self.blocks, rows, columns, per_pixel], element)
        outer = [self.n, self.blocks, rows]
        parallel = worth_parallel_work(math.prod(outer), math.prod(outer) * columns * block)
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            image, channels, row = unflatten(kernel, flat, outer)
            target = b.tensor_ptr(copy, [image, channels, row, 0, 0], [columns * per_pixel])

            def fill_columns(first: int, end: int) -> None:
                if end > first:
                    with b.make_for(first * per_pixel, end * per_pixel, per_pixel) as j:
                        b.make_store(fill, target, [j], per_pixel)

            source_row = b.sub(b.mul(row, source_rows), top)
            branch = b.make_if(inside(kernel, [source_row], [self.h]), with_else=True)
            with b.at_end_of(branch.then_region.block):
                source = b.tensor_ptr(
                    self.x.value, [image, channels, source_row, 0, 0], [self.width * block]
                )
                fill_columns(0, left)
                # a plain input's row is contiguous: copied in vectors, then the rest
                lanes = kernel.lanes if step == 1 and copied >= kernel.lanes else 1
                whole = copied // lanes * lanes
                for first, end, pixels in ((0, whole, lanes), (whole, copied, 1)):
                    if end <= first:
                        continue
                    with b.make_for(first, end, pixels) as column:
                        value = b.make_load(source, [b.mul(column, step)], block * pixels)
                        if self.quads:  # as stored
                            value = b.unary(tir.ReinterpretOp, value, vector)
                        at = [b.mul(b.add(column, left), per_pixel)]
                        b.make_store(value, target, at, per_pixel * pixels)
                fill_columns(left + copied, columns)
            with b.at_end_of(branch.else_region.block):
                fill_columns(0, columns)
        return copy, rows, columns

    def _packed_weights(self) -> SSAValue:
        """[groups, C / b, KH, KW, b, v b] panels ([C / b, KH, KW, b] depthwise;
        C a group's channels), zero past the weights' channels (in and out)."""
        b, kh, kw, ib = self.block, self.kh, self.kw, self.in_block  # ib = b but for plain inputs
        channels, outputs = self.in_blocks * ib, self.out_blocks * b
        if self.depthwise:
            shape = [self.blocks, kh, kw, b]

            def pack(weights: np.ndarray) -> np.ndarray:
                return weights.reshape(self.blocks, b, kh, kw).transpose(0, 2, 3, 1)

            def source(index: list) -> tuple[SSAValue, list]:
                blocks, ky, kx, lane = index
                o = self.b.add(self.b.mul(blocks, b), lane)
                return self.b.binary(tir.LtOp, o, self.o), [o, 0, ky, kx]
        else:
            width, groups = self.vectors * b, self.out_blocks // self.vectors
            shape = [groups, self.in_blocks, kh, kw, ib, width]

            def pack(weights: np.ndarray) -> np.ndarray:
                split = weights.reshape(groups, width, self.in_blocks, ib, kh, kw)
                return split.transpose(0, 2, 4, 5, 3, 1)

            def source(index: list) -> tuple[SSAValue, list]:
                group, blocks, ky, kx, lane, column = index
                o = self.b.add(self.b.mul(group, width), column)
                c = self.b.add(self.b.mul(blocks, ib), lane)
                inside = self.b.binary(tir.AndOp, self.b.binary(tir.LtOp, o, self.o),
                                       self.b.binary(tir.LtOp, c, self.channels))  # fmt: skip
                return inside, [o, c, ky, kx]

        if isinstance(self.w.constant, DenseIntOrFPElementsAttr):
            dtype = np.int8 if self.quads else np.float32

            def padded_pack(weights: np.ndarray) -> np.ndarray:
                padded = np.zeros((outputs, 1 if self.depthwise else channels, kh, kw), dtype)
                padded[: self.o, : weights.shape[1]] = weights
                packed = np.ascontiguousarray(pack(padded))
                if not self.quads:
                    return packed
                # [..., b, v b] -> [..., b / 4, v b] words, channel 4 l + i in byte i
                *outer, lanes, width = packed.shape
                quads = packed.reshape(*outer, lanes // QUAD, QUAD, width).swapaxes(-1, -2)
                return np.ascontiguousarray(quads).view(np.int32)[..., 0]

            return self.kernel.packed_constant(self.w, "packed_w", padded_pack)
        packed = self.b.make_tensor(shape, f32)
        with self.kernel.loop_nest(shape, parallel=False) as index:
            inside, at = source(index)
            if self.channels == channels and self.o == outputs:
                self.b.make_store(self.kernel.load(self.w, at), packed, index)
            else:
                branch = self.b.make_if(inside, with_else=True)
                with self.b.at_end_of(branch.then_region.block):
                    self.b.make_store(self.kernel.load(self.w, at), packed, index)
                with self.b.at_end_of(branch.else_region.block):
                    self.b.make_store(self.b.const(0.0, f32), packed, index)
        return packed

    # --- the tiles ---------------------------------------------------------------------

    def emit(self) -> None:
        kernel, b = self.kernel, self.b
        weights = self._packed_weights()
        if not self.depthwise:
            source, rows, columns = self._source()
        groups = self.out_blocks // self.vectors
        grid = [self.n, groups, self.oh // self.rows]
        with kernel.loop_nest([math.prod(grid)], self.parallel) as (flat,):
            image, group, row_block = unflatten(kernel, flat, grid)
            y0 = b.mul(row_block, self.rows)
            if self.depthwise:
                self._depthwise_rows(weights, image, group, y0)
                self._finished(image, group, y0, self.rows)
            else:
                self._tile_rows(source, rows, columns, weights, image, group, y0)

    def _finished(self, image, group, y, count: int) -> None:
        """The epilogue on `count` output rows from `y` of the group's blocks,
        now final."""
        if self.epilogue:
            first_block = self.b.mul(group, self.vectors)
            self.epilogue(
                [image, first_block, y, 0, 0], [1, self.vectors, count, self.ow, self.block]
            )

    def _row_tiles(self, tile) -> None:
        """tile(x0, m) over one output row: whole tiles, then the rest."""
        b = self.b
        whole, rest = divmod(self.ow, self.pixels)
        if whole:
            with b.make_for(0, whole * self.pixels, self.pixels) as x0:
                tile(x0, self.pixels)
        if rest:
            tile(b.value(whole * self.pixels, IndexType()), rest)

    def _tile_rows(self, source, rows: int, columns: int, weights, image, group, y0) -> None:
        """The task's rows, reduced over the whole input blocks in chunks,
        then over the channels of a padded last block (a K of fewer than b).
        The last reduction runs the epilogue on each row (or tile of rows)
        as soon as its tiles are done, while the row is in L1: run on the
        task's rows at the end, it read them back from L2 (ResNet-50's 1x1
        convolutions on 56x56 maps spent 8% of their time there)."""
        b, k_block = self.b, self.k_block
        width = self.vectors * self.block
        filter_taps = [
            (self.kh, self.dh * columns * k_block, self.kw * k_block * width),
            (self.kw, self.dw * k_block, k_block * width),
        ]
        k = k_block
        if self.columns_in_k:  # K steps along the filter row: A a_k = dw apart, B rows
            filter_taps, k = filter_taps[:1], self.kw
        plane = rows * columns * k_block
        finished = functools.partial(self._finished, image, group)

        def reduce(channels, k: int, taps, accumulate, after) -> None:
            reduction = (channels, k, taps, accumulate, after)
            self._reduce_rows(source, rows, columns, weights, image, group, y0, *reduction)

        chunks = self.whole_blocks // self.chunk
        if chunks:
            chunk_taps = [(self.chunk, plane, self.kh * self.kw * k_block * width), *filter_taps]
            if chunks > 1:  # all but the last chunk: rows not final yet
                with b.make_for(0, chunks - 1, 1) as chunk:
                    accumulate = b.binary(tir.NeOp, chunk, 0) if chunks > 2 else False
                    reduce(b.mul(chunk, self.chunk), k, chunk_taps, accumulate, None)
            last_chunk = b.value((chunks - 1) * self.chunk, IndexType())
            reduce(last_chunk, k, chunk_taps, chunks > 1, None if self.last_channels else finished)
        if self.last_channels:  # onto the whole blocks' sums, if any
            last = b.value(self.whole_blocks, IndexType())
            k = -(-self.last_channels // self.per)  # a last word's other bytes meet zero weights
            reduce(last, k, filter_taps, bool(chunks), finished)

    def _reduce_rows(
        self, source, rows: int, columns: int, weights, image, group, y0,
        channels: SSAValue, k: int, taps: list, accumulate: SSAValue | bool, finished,
    ) -> None:  # fmt: skip
        """One reduction over the task's rows: input blocks from `channels`
        (as many as `taps` step over), `k` lanes (words) of each, added to
        the output where `accumulate` (decided at run time for an SSA value);
        `finished(y, count)`, if given, after each row's (or tile of rows') tiles."""
        b, block, k_block = self.b, self.block, self.k_block
        sh, sw = self.a_strides
        width = self.vectors * block
        taps = [tap for tap in taps if tap[0] > 1]
        last_a = sum((count - 1) * a_step for count, a_step, _ in taps)
        last_b = sum((count - 1) * b_step for count, _, b_step in taps)
        first_block = b.mul(group, self.vectors)
        out_plane = self.oh * self.ow * block
        # whole rows a tile, 2 or more where they are narrow (see conv_register_tile)
        tile_rows = min(self.tile_rows, self.rows)
        a_k, k_rows = (self.dw, k) if self.columns_in_k else (1, k_block)
        span = last_b + k_rows * width  # the weights of this reduction's input blocks
        b_view = b.tensor_ptr(weights, [group, channels, 0, 0, 0, 0], [span])
        next_weights = self._next_weights(weights, group, channels, span)
        input_block = channels
        if self.conv_groups > 1:  # the first input block of the tiles' group
            conv_group = b.div(first_block, self.group_out_blocks)
            input_block = b.add(b.mul(conv_group, self.in_blocks), channels)

        def tile(y, x0, m: int, slot) -> None:
            """m pixels from (y, x0), running on into the next rows when
            m is more than a row (then x0 = 0); the `slot`-th tile of a
            row's tiles prefetches its column of the next weights' lines."""
            runs = None
            if m > self.ow and not self.flat:
                runs = (self.ow, sh * columns * k_block)
            farthest = (m - 1) * sw * k_block
            if runs:
                last = m - 1
                farthest = last // self.ow * runs[1] + last % self.ow * sw * k_block
            a_view = b.tensor_ptr(
                source, [image, input_block, b.mul(y, sh), b.mul(x0, sw), 0],
                [last_a + farthest + (k_rows - 1) * a_k + 1],
            )  # fmt: skip
            c_view = b.tensor_ptr(
                self.out.value, [image, first_block, y, x0, 0],
                [(self.vectors - 1) * out_plane + m * block],
            )  # fmt: skip
            sizes = dict(m=m, n=width, k=k, lanes=block, a_row=sw * k_block, a_k=a_k,
                         ldb=width, ldc=block)  # fmt: skip
            if self.quads:
                sizes["u8_s8_quads"] = True
            if self.vectors > 1:
                sizes["ldc_vector"] = out_plane
            if isinstance(accumulate, bool):
                sizes["accumulate"], accumulate_if = accumulate, None
            else:
                accumulate_if = accumulate
            prefetch = next_weights(slot)
            b.make_brgemm_tile(
                a_view, b_view, c_view, taps, accumulate_if, prefetch, a_wrap=runs, **sizes
            )

        finished = finished or (lambda y, count: None)
        if self.flat:  # the task's rows as one run of pixels
            whole, rest = divmod(self.rows * self.ow, self.pixels)

            def flat_tile(pixel, m: int, slot) -> None:
                tile(b.add(y0, b.div(pixel, self.ow)), b.mod(pixel, self.ow), m, slot)

            if whole:
                with b.make_for(0, whole * self.pixels, self.pixels) as pixel:
                    flat_tile(pixel, self.pixels, b.div(pixel, self.pixels))
            if rest:
                flat_tile(b.value(whole * self.pixels, IndexType()), rest, whole)
            finished(y0, self.rows)
        elif tile_rows == 1:
            with b.make_for(0, self.rows, 1) as row:
                y = b.add(y0, row)
                self._row_tiles(lambda x0, m: tile(y, x0, m, row))
                finished(y, 1)
        else:
            zero = b.value(0, IndexType())
            whole, rest = divmod(self.rows, tile_rows)
            with b.make_for(0, whole * tile_rows, tile_rows) as row:
                tile(b.add(y0, row), zero, tile_rows * self.ow, b.div(row, tile_rows))
                finished(b.add(y0, row), tile_rows)
            if rest:
                tile(b.add(y0, whole * tile_rows), zero, rest * self.ow, whole)
                finished(b.add(y0, whole * tile_rows), rest)

    def _next_weights(self, weights, group, channels, span: int):
        """slot -> where a tile of a reduction over the `span` weights from
        input block `channels` prefetches: the `span` after them (the next
        input blocks', or the next group's first: what this thread reads
        next), at the slot's column of cache lines, so that the rows' tiles
        share the lines out. Large layers stream their weights from memory
        (ResNet-50's last stage: 9.4 MiB a 3x3 convolution); the hardware
        prefetchers left the first tile of each reduction waiting on them."""
        b = self.b
        total = math.prod(weights.type.get_shape())
        panel = self.kh * self.kw * self.k_block * self.vectors * self.block
        lines = -(-self.vectors * self.block // FLOATS_PER_LINE)  # f32 or i32 words
        last_column = (lines - 1) * FLOATS_PER_LINE
        flat = b.tensor_ptr(weights, [0] * len(weights.type.get_shape()), [total])
        here = b.mul(b.add(b.mul(group, self.in_blocks), channels), panel)
        start = b.binary(tir.MinOp, b.add(here, span), total - span)

        def at(slot) -> SSAValue:
            column = b.mul(b.mod(b.value(slot, IndexType()), lines), FLOATS_PER_LINE)
            return b.tensor_ptr(flat, [b.add(start, column)], [span - last_column])

        return at

    def _depthwise_rows(self, weights, image, channels, y0) -> None:
        """The task's rows read straight from the unpadded input: a tap
        outside it is skipped, by row (per filter row) and, for the few
        border pixels whose window crosses the left or right edge, by
        column; the pixels between take every tap unchecked. (Copying the
        padded input first moved the whole tensor through memory once
        more: MobileNet-v2's 56x56 layers ran 1.8x slower than in NCHW.)"""
        b, block = self.b, self.block
        top, left = self.pads[:2]
        reach = (self.kw - 1) * self.dw
        inside_from = min(self.ow, -(-left // self.sw))
        inside_to = max(inside_from, min(self.ow, (self.width - 1 + left - reach) // self.sw + 1))
        rows_clipped = top > 0 or (self.oh - 1) * self.sh - top + (self.kh - 1) * self.dh >= self.h
        vector = VectorType(f32, [block])

        def within(value: SSAValue, size: int) -> SSAValue:
            return b.binary(
                tir.AndOp, b.binary(tir.GeOp, value, 0), b.binary(tir.LtOp, value, size)
            )

        with b.make_for(0, self.rows, 1) as row:
            y = b.add(y0, row)

            def tile(x0, m: int, columns_clipped: bool) -> None:
                sums = [b.make_var(vector, b.const(0.0, vector)) for _ in range(m)]
                with b.make_for(0, self.kh, 1) as ky:
                    input_row = b.add(b.sub(b.mul(y, self.sh), top), b.mul(ky, self.dh))
                    row_inside = b.make_if(within(input_row, self.h)) if rows_clipped else None
                    with b.at_end_of(row_inside.then_region.block) if row_inside else _here():
                        with b.make_for(0, self.kw, 1) as kx:
                            weight = b.make_load(weights, [channels, ky, kx, 0], block)
                            first = b.add(b.sub(b.mul(x0, self.sw), left), b.mul(kx, self.dw))
                            for i, total in enumerate(sums):
                                column = b.add(first, i * self.sw)
                                inside = (
                                    b.make_if(within(column, self.width))
                                    if columns_clipped
                                    else None
                                )
                                with b.at_end_of(inside.then_region.block) if inside else _here():
                                    at = [image, channels, input_row, column, 0]
                                    tap = b.make_load(self.x.value, at, block)
                                    fused = tir.FmaddOp.create(
                                        operands=[tap, weight, b.read(total)], result_types=[vector]
                                    )
                                    b.make_assign(total, b.insert(fused).result)
                for i, total in enumerate(sums):
                    at = [image, channels, y, b.add(x0, i), 0]
                    b.make_store(b.read(total), self.out.value, at, block)

            def border(first: int, end: int) -> None:
                if end > first:
                    with b.make_for(first, end, 1) as x:
                        tile(x, 1, columns_clipped=True)

            border(0, inside_from)
            whole, rest = divmod(inside_to - inside_from, self.pixels)
            if whole:
                end = inside_from + whole * self.pixels
                with b.make_for(inside_from, end, self.pixels) as x0:
                    tile(x0, self.pixels, columns_clipped=False)
            if rest:
                tile(b.value(inside_to - rest, IndexType()), rest, columns_clipped=False)
            border(inside_to, self.ow)
