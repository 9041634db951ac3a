"""u8 x s8 and bf16 convolutions on AMX tiles, channel-blocked.

Why: the blocked convolution's byte-quad tiles (conv_blocked.py) make 16 x 4
products an instruction (`vpdpbusd`); an AMX tile product makes 16 x 16 x
64. But an A tile is 16 rows of 64 contiguous bytes, and a blocked input
holds a pixel's 16 channels a block, the next 16 a plane away: copied
pixel-major once per call, the input feeds the tiles directly.

What: a blocked_conv2d of one group, blocks of 16 channels, constant
weights, any filter, stride, padding and dilation, of either form:
- graph-integer-conv's u8 x s8 -> i32 (byte quads: four channels to a
  word), on a target whose tiles multiply them (AMX-INT8), with at least
  MIN_TILE_STEPS tile products per C tile and K filled to MIN_K_FILL;
- graph-bf16-fpmath's bf16 x bf16 -> f32 (bf16 pairs: two channels to a
  word), always (the vector tiles' pair kernels where there is no AMX-BF16).

How:
- the input is copied once per call into pixel-major i32 words [N, rows,
  columns, K] (K the channels' words padded with zeros to whole tile rows
  of 16 words): the padded input with a border of the pad value, or, for a
  1x1 unpadded convolution, the pixels it reads, gathered at unit stride.
  An A tile is then 16 pixels x 64 bytes of channels, rows sw K words
  apart, and each filter tap one more offset;
- the weights are packed at compile time into [O / (v b), KH, KW, K, v b]
  words, for each tap the B tiles' K rows of 16 columns x 4 bytes (channel
  p l + i in part i of word l, p the channels a word holds, as in the
  input's words);
- a task is (image, v output blocks, rows). A brgemm_tile takes up to
  MAX_CALL_ROWS pixels of an output row (of the task, row after row, when
  1x1 and gathered: its pixels are then one run of A rows), the whole K and
  every tap; its C's 16 columns are an output block, a plane apart
  (`ldc_vector`). The epilogue then runs on the task's rows, as in
  conv_blocked.py.

The tiles are ordinary brgemm_tiles: on a host whose process may not use AMX
(has_amx), the same Tensor IR runs on the vector kernels, a register tile at
a time (the tests run this path everywhere).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    Signedness,
    VectorType,
    i32,
)

from graphcompiler.dialects import tir
from graphcompiler.dialects.tir.types import MAX_LANES
from graphcompiler.lowering.graph_to_tir.conv_direct import inside
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, worth_parallel_work
from graphcompiler.lowering.graph_to_tir.matmul import Epilogue, unflatten
from graphcompiler.runtime.amx_tiles import CHUNK_ROWS, TILE_ROWS, has_amx

s8, u8 = IntegerType(8), IntegerType(8, Signedness.UNSIGNED)

QUAD = 4
"""Channels (bytes) to an i32 word of byte quads."""
PAIR = 2
"""Channels to an i32 word of bf16 pairs."""
TILE_ROW_WORDS = TILE_ROWS
"""32-bit words in a tile row (64 bytes): K is padded to a multiple."""
MIN_TILE_STEPS = 2
"""Tile products per C tile (taps x K / 16) below which the vector tiles
stay: with one, each chunk's products wait on each other and on the C
tiles' stores (AMX has no renaming), and ResNet-50's 1x1 layers of 64
channels ran 25% slower on tiles; with 2 and more they ran 1.1-2.3x faster."""
MIN_K_FILL = 0.5
"""The share of K (channels padded to 64) that must be channels: an RGB
stem's 3 channels would take a 64-channel tile row a tap (ResNet-50's ran
2.9x slower than on the vector tiles, which take one word a tap)."""
MAX_CALL_ROWS = 4 * CHUNK_ROWS
"""Pixels per tile call on AMX (the kernel loops over chunks of 32): the
verifier's register-tile bound of 256 accumulators, at 2 vectors a row."""


def takes_bf16_pairs(op, x: Operand, w: Operand, out: Operand) -> bool:
    """A widening bf16 convolution (graph-bf16-fpmath's) of one group,
    constant weights and 16-channel blocks, which runs here on bf16 pairs."""
    return (
        (str(x.element), str(w.element), str(out.element)) == ("bf16", "bf16", "f32")
        and op.group_count == 1
        and out.shape[-1] == x.shape[-1] == TILE_ROWS
        and isinstance(w.constant, DenseIntOrFPElementsAttr)
    )


def takes_byte_quads(op, x: Operand, w: Operand, out: Operand) -> bool:
    """A u8 x s8 convolution (one group, constant weights, blocks of whole
    quads) that the tiles compute on byte quads: the input's four channels
    of a pixel are one i32 word, multiplied by four weights' word and added
    into i32 sums (`vpdpbusd` on VNNI targets)."""
    block = x.shape[-1]
    return (
        (x.element, w.element, out.element) == (u8, s8, i32)
        and op.group_count == 1
        and block % QUAD == 0
        and block <= MAX_LANES
        and isinstance(w.constant, DenseIntOrFPElementsAttr)
    )


def suits_tiles(op, x: Operand, w: Operand, out: Operand) -> bool:
    """Whether a convolution on byte quads (takes_byte_quads)
    has this form: 16-channel blocks, MIN_TILE_STEPS tile products, its
    channels MIN_K_FILL of K."""
    _, channels, kh, kw = w.shape
    tile_rows = -(-channels // (TILE_ROW_WORDS * QUAD))
    return (
        out.shape[-1] == x.shape[-1] == TILE_ROWS
        and kh * kw * tile_rows >= MIN_TILE_STEPS
        and channels >= MIN_K_FILL * tile_rows * TILE_ROW_WORDS * QUAD
    )


def takes_amx_tiles(kernel: Kernel, op, x: Operand, w: Operand, out: Operand) -> bool:
    """Whether it runs here: it suits the tiles, and the target has AMX-INT8
    that this process may use."""
    return suits_tiles(op, x, w, out) and has_amx(kernel.target, "u8s8")


class AmxConv:
    """One convolution's pixel-major copy, packed weights and tile calls (module doc)."""

    def __init__(self, kernel: Kernel, op, x: Operand, w: Operand, out: Operand, epilogue):
        self.kernel, self.b = kernel, kernel.b
        self.x, self.w, self.out, self.epilogue = x, w, out, epilogue
        self.n, self.in_blocks, self.h, self.width, self.block = x.shape
        _, self.out_blocks, self.oh, self.ow, _ = out.shape
        self.o, self.channels, self.kh, self.kw = w.shape
        (self.sh, self.sw), self.pads = op.window_strides, op.window_padding
        self.dh, self.dw = op.window_dilations
        self.pad_value = op.padding_value
        self.quads = str(x.element) == "ui8"
        self.per_word, self.kind = (QUAD, "u8s8") if self.quads else (PAIR, "bf16")
        words = self.in_blocks * self.block // self.per_word
        self.k = -(-words // TILE_ROW_WORDS) * TILE_ROW_WORDS
        self.vectors = 2 if self.out_blocks % 2 == 0 else 1
        # a 1x1 unpadded convolution reads its pixels gathered at unit stride,
        # so that a tile's rows run on over the output's rows
        self.gathered = self.kh == self.kw == 1 and not any(self.pads)
        if self.gathered:
            self.rows_in, self.columns = self.oh, self.ow
        else:
            self.rows_in = (self.oh - 1) * self.sh + (self.kh - 1) * self.dh + 1
            self.columns = (self.ow - 1) * self.sw + (self.kw - 1) * self.dw + 1
        self.amx = has_amx(kernel.target, self.kind)
        # a register tile's pixels where the vector kernels run the tiles
        free = kernel.target.vector_registers - self.vectors - 1
        self.call_rows = MAX_CALL_ROWS if self.amx else max(1, free // self.vectors)
        self._choose_rows()

    def _choose_rows(self) -> None:
        """Output rows per task (dividing OH): the most whose i32 sums fit in
        a quarter of L2 (the epilogue reads them back from there) while
        leaving 4 tasks per core where the work is worth threads."""
        target = self.kernel.target
        groups = self.out_blocks // self.vectors
        work = math.prod(self.out.shape) * self.channels * self.kh * self.kw
        self.parallel = worth_parallel_work(self.n * groups * self.oh, work // 64)
        wanted = min(4 * target.cores if self.parallel else 1, self.n * groups * self.oh)
        row_bytes = self.ow * self.vectors * self.block * 4
        self.rows = 1
        for rows in range(1, self.oh + 1):
            tasks = self.n * groups * (self.oh // rows)
            if self.oh % rows == 0 and rows * row_bytes <= target.l2_bytes // 4 and tasks >= wanted:
                self.rows = rows

    def _pixel_major_input(self):
        """[N, rows, columns, K] words: each pixel's blocks' 16 bytes as 4
        words, then zero words up to K; the border's words the pad value's."""
        kernel, b, per_block = self.kernel, self.b, self.block // self.per_word
        copy = b.make_tensor([self.n, self.rows_in, self.columns, self.k], i32)
        words = VectorType(i32, [per_block])
        zero = b.const(0, words)
        pad_bytes = (self.pad_value & 0xFF) * 0x01010101 if self.quads else 0  # bf16: zero
        pad = b.const(np.int32(np.uint32(pad_bytes)).item(), words)
        if self.gathered:
            (row_step, column_step), top, left = (self.sh, self.sw), 0, 0
        else:
            (row_step, column_step), (top, left) = (1, 1), self.pads[:2]
        inside_from = min(self.columns, left)  # the columns that lie in the input
        inside_to = max(inside_from, min(self.columns, (self.width - 1 + left) // column_step + 1))
        outer = [self.n, self.rows_in]
        work = math.prod(outer) * self.columns * self.k
        with kernel.loop_nest([math.prod(outer)], worth_parallel_work(outer[1], work)) as (flat,):
            image, row = unflatten(kernel, flat, outer)
            line = b.tensor_ptr(copy, [image, row, 0, 0], [self.columns * self.k])

            def fill(first: int, end: int) -> None:
                if end > first:
                    with b.make_for(first * self.k, end * self.k, per_block) as word:
                        b.make_store(pad, line, [word], per_block)

            source_row = b.sub(b.mul(row, row_step), top)
            branch = b.make_if(inside(kernel, [source_row], [self.h]), with_else=True)
            with b.at_end_of(branch.then_region.block):
                fill(0, inside_from)
                if inside_to > inside_from:
                    with b.make_for(inside_from, inside_to, 1) as column:
                        source_column = b.sub(b.mul(column, column_step), left)
                        pixel = b.mul(column, self.k)
                        # a loop, not one copy per block: 100000 channels made 6250
                        with b.make_for(0, self.in_blocks, 1) as block:
                            at = [image, block, source_row, source_column, 0]
                            value = b.make_load(self.x.value, at, self.block)
                            b.make_store(b.unary(tir.ReinterpretOp, value, words), line,
                                         [b.add(pixel, b.mul(block, per_block))], per_block)  # fmt: skip
                        for word in range(self.in_blocks * per_block, self.k, per_block):
                            b.make_store(zero, line, [b.add(pixel, word)], per_block)
                fill(inside_to, self.columns)
            with b.at_end_of(branch.else_region.block):
                fill(0, self.columns)
        return copy

    def _packed_weights(self):
        width = self.vectors * self.block
        groups, k, kh, kw = self.out_blocks // self.vectors, self.k, self.kh, self.kw

        per_word = self.per_word

        def pack(weights: np.ndarray) -> np.ndarray:
            if self.quads:
                values, dtype = weights, np.int8
            else:  # bf16 values, held exactly in f32: their upper halves
                values, dtype = (weights.astype(np.float32).view(np.uint32) >> 16), np.uint16
            padded = np.zeros((groups * width, k * per_word, kh, kw), dtype)
            padded[: self.o, : self.channels] = values
            parts = padded.reshape(groups, width, k, per_word, kh, kw)
            words = parts.transpose(0, 4, 5, 2, 1, 3)  # [groups, KH, KW, K, width, part]
            return np.ascontiguousarray(words).view(np.int32)[..., 0]

        return self.kernel.packed_constant(self.w, "packed_w", pack)

    def emit(self) -> None:
        kernel, b, k = self.kernel, self.b, self.k
        weights = self._packed_weights()
        source = self._pixel_major_input()
        width, plane = self.vectors * self.block, self.oh * self.ow * self.block
        taps = [
            (self.kh, self.dh * self.columns * k, self.kw * k * width),
            (self.kw, self.dw * k, k * width),
        ]
        taps = [tap for tap in taps if tap[0] > 1]
        last_a = sum((count - 1) * a_step for count, a_step, _ in taps)
        a_row = k if self.gathered else self.sw * k
        groups = self.out_blocks // self.vectors
        grid = [self.n, groups, self.oh // self.rows]
        with kernel.loop_nest([math.prod(grid)], self.parallel) as (flat,):
            image, group, row_block = unflatten(kernel, flat, grid)
            y0 = b.mul(row_block, self.rows)
            first_block = b.mul(group, self.vectors)
            b_view = b.tensor_ptr(weights, [group, 0, 0, 0, 0], [self.kh * self.kw * k * width])
            out = b.tensor_ptr(self.out.value, [image, first_block, 0, 0, 0],
                               [(self.vectors - 1) * plane + plane])  # fmt: skip
            plane_in = b.tensor_ptr(source, [image, 0, 0, 0], [self.rows_in * self.columns * k])

            def tile(a_first, c_first, m: int) -> None:
                """m pixels: A from word a_first, C from element c_first."""
                a_view = b.tensor_ptr(plane_in, [a_first], [last_a + (m - 1) * a_row + k])
                c_view = b.tensor_ptr(out, [c_first],
                                      [(self.vectors - 1) * plane + m * self.block])  # fmt: skip
                sizes = dict(m=m, n=width, k=k, lanes=self.block, a_row=a_row, a_k=1,
                             ldb=width, ldc=self.block)  # fmt: skip
                if self.quads:
                    sizes["u8_s8_quads"] = True
                if self.vectors > 1:
                    sizes["ldc_vector"] = plane
                b.make_brgemm_tile(a_view, b_view, c_view, taps, **sizes)

            if self.gathered:  # the task's pixels, one run of A rows
                first = b.mul(y0, self.ow)
                self._calls(self.rows * self.ow, lambda p, m: tile(
                    b.mul(b.add(first, p), k), b.mul(b.add(first, p), self.block), m))  # fmt: skip
            else:
                with b.make_for(0, self.rows, 1) as row:
                    y = b.add(y0, row)
                    a_line, c_line = b.mul(b.mul(y, self.sh * self.columns), k), b.mul(y, self.ow)
                    self._calls(self.ow, lambda x0, m: tile(
                        b.add(a_line, b.mul(x0, a_row)),
                        b.mul(b.add(c_line, x0), self.block), m))  # fmt: skip
            if self.epilogue:
                self.epilogue([image, first_block, y0, 0, 0],
                              [1, self.vectors, self.rows, self.ow, self.block])  # fmt: skip

    def _calls(self, pixels: int, call) -> None:
        """call(first pixel, m) over `pixels`: calls of `call_rows`, then on
        AMX the whole chunks of 32 left in one call, then the rest."""
        b = self.b
        whole, rest = divmod(pixels, self.call_rows)
        if whole:
            with b.make_for(0, whole * self.call_rows, self.call_rows) as p:
                call(p, self.call_rows)
        done = whole * self.call_rows
        if rest >= CHUNK_ROWS and self.amx:
            chunks = rest // CHUNK_ROWS * CHUNK_ROWS
            call(b.value(done, IndexType()), chunks)
            done, rest = done + chunks, rest - chunks
        if rest:
            call(b.value(done, IndexType()), rest)


def amx_conv(kernel: Kernel, op, x: Operand, w: Operand, out: Operand,
             epilogue: Epilogue | None) -> None:  # fmt: skip
    AmxConv(kernel, op, x, w, out, epilogue).emit()
