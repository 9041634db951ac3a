"""u8 x s8 pointwise convolutions on AMX tiles, channel-blocked.

Why: the blocked convolution's byte-quad tiles (conv_blocked.py) make 16 x 4
products an instruction (`vpdpbusd`); an AMX tile product makes 16 x 16 x
64. But an A tile is 16 rows of 64 contiguous bytes, and a blocked input
holds a pixel's 16 channels a block, the next 16 a plane away. ResNet-50's
QDQ convolutions are half pointwise, and those read each input pixel once
per output group: a pixel-major copy of the input costs a fraction of them.

What: a 1x1 blocked_conv2d of graph-integer-conv's form (u8 input, s8
constant weights, i32 output, one group, blocks of 16 channels, no padding;
any stride) on a target whose tiles multiply byte quads (AMX-INT8).

How:
- the input pixels the outputs read are copied once per call into
  pixel-major i32 words [N, OH * OW, K] (a word is four channels' bytes, K
  the channels' words padded with zeros to whole tile rows of 16 words):
  an A tile is then 16 pixels x 64 channels, rows K words apart, and the
  outputs' pixels, row after row, are one run of A rows;
- the weights are packed at compile time into [O / (v b), K, v b] words, B
  tiles' K / 4 rows of 16 columns x 4 bytes (channel 4 l + i in byte i of
  word l, as in the input's words);
- a task is (image, v output blocks, rows); each of its brgemm_tile calls
  takes up to MAX_CALL_ROWS of its pixels and the whole K, and its C's 16
  columns are an output block, a plane apart (`ldc_vector`); the epilogue
  then runs on the task's rows, as in conv_blocked.py.

The tiles are ordinary brgemm_tiles: on a host whose process may not use AMX
(has_amx), the same Tensor IR runs on the vector kernels, a register tile at
a time (the tests run this path everywhere).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IndexType, VectorType, i32

from graphcompiler.dialects import tir
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, worth_parallel_work
from graphcompiler.lowering.graph_to_tir.matmul import Epilogue, unflatten
from graphcompiler.runtime.amx_tiles import CHUNK_ROWS, TILE_ROWS, has_amx

QUAD = 4
"""Channels (bytes) to an i32 word."""
TILE_ROW_WORDS = TILE_ROWS
"""32-bit words in a tile row (64 bytes): K is padded to a multiple."""
MIN_CHANNELS = 2 * TILE_ROW_WORDS * QUAD
"""Input channels below which the vector tiles stay: with one tile row of K
(64 channels), each chunk's tile products wait on each other and on the C
tiles' stores (AMX has no renaming), and ResNet-50's 56x56 64-channel
layers ran 25% slower on tiles; with 128 and more they ran 1.1-2.3x faster."""
MAX_CALL_ROWS = 4 * CHUNK_ROWS
"""Pixels per tile call on AMX (the kernel loops over chunks of 32): the
verifier's register-tile bound of 256 accumulators, at 2 vectors a row."""


def suits_tiles(op, x: Operand, w: Operand, out: Operand) -> bool:
    """Whether a convolution on byte quads (conv_blocked.takes_byte_quads)
    has this form: 1x1, unpadded, 16-channel blocks, MIN_CHANNELS inputs."""
    _, channels, kh, kw = w.shape
    return (
        kh == kw == 1
        and not any(op.window_padding)
        and out.shape[-1] == x.shape[-1] == TILE_ROWS
        and channels >= MIN_CHANNELS
    )


def takes_pointwise_tiles(kernel: Kernel, op, x: Operand, w: Operand, out: Operand) -> bool:
    """Whether it runs here: it suits the tiles, and the target has AMX-INT8
    that this process may use."""
    return suits_tiles(op, x, w, out) and has_amx(kernel.target, "u8s8")


class PointwiseTiles:
    def __init__(self, kernel: Kernel, op, x: Operand, w: Operand, out: Operand, epilogue):
        self.kernel, self.b = kernel, kernel.b
        self.x, self.w, self.out, self.epilogue = x, w, out, epilogue
        self.n, self.in_blocks, self.h, self.width, self.block = x.shape
        _, self.out_blocks, self.oh, self.ow, _ = out.shape
        self.o, self.channels = w.shape[:2]
        self.sh, self.sw = op.window_strides
        words = self.in_blocks * self.block // QUAD
        self.k = -(-words // TILE_ROW_WORDS) * TILE_ROW_WORDS
        self.vectors = 2 if self.out_blocks % 2 == 0 else 1
        self.amx = has_amx(kernel.target, "u8s8")
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
        work = math.prod(self.out.shape) * self.channels
        self.parallel = worth_parallel_work(self.n * groups * self.oh, work // 64)
        wanted = min(4 * target.cores if self.parallel else 1, self.n * groups * self.oh)
        row_bytes = self.ow * self.vectors * self.block * 4
        self.rows = 1
        for rows in range(1, self.oh + 1):
            tasks = self.n * groups * (self.oh // rows)
            if self.oh % rows == 0 and rows * row_bytes <= target.l2_bytes // 4 and tasks >= wanted:
                self.rows = rows

    def _pixel_major_input(self):
        """[N, OH * OW, K] words: output pixel p's input pixel, its blocks'
        16 bytes as 4 words each, then zero words up to K."""
        kernel, b, per_block = self.kernel, self.b, self.block // QUAD
        pixels = self.oh * self.ow
        copy = b.make_tensor([self.n, pixels, self.k], i32)
        words = VectorType(i32, [per_block])
        zero = b.const(0, words)
        outer = [self.n, self.oh]
        parallel = worth_parallel_work(math.prod(outer), pixels * self.k * self.n)
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            image, y = unflatten(kernel, flat, outer)
            with b.make_for(0, self.ow, 1) as x:
                pixel = b.tensor_ptr(copy, [image, b.add(b.mul(y, self.ow), x), 0], [self.k])
                for block in range(self.in_blocks):
                    at = [image, block, b.mul(y, self.sh), b.mul(x, self.sw), 0]
                    value = b.make_load(self.x.value, at, self.block)
                    b.make_store(b.unary(tir.ReinterpretOp, value, words), pixel,
                                 [block * per_block], per_block)  # fmt: skip
                for word in range(self.in_blocks * per_block, self.k, per_block):
                    b.make_store(zero, pixel, [word], per_block)
        return copy

    def _packed_weights(self):
        width = self.vectors * self.block
        groups, k = self.out_blocks // self.vectors, self.k

        def pack(weights: np.ndarray) -> np.ndarray:
            padded = np.zeros((groups * width, k * QUAD), np.int8)
            padded[: self.o, : self.channels] = weights.reshape(self.o, self.channels)
            words = padded.reshape(groups, width, k, QUAD).transpose(0, 2, 1, 3)
            return np.ascontiguousarray(words).view(np.int32)[..., 0]

        return self.kernel.packed_constant(self.w, "packed_w", pack)

    def emit(self) -> None:
        kernel, b = self.kernel, self.b
        weights = self._packed_weights()
        source = self._pixel_major_input()
        width, plane = self.vectors * self.block, self.oh * self.ow * self.block
        groups = self.out_blocks // self.vectors
        grid = [self.n, groups, self.oh // self.rows]
        with kernel.loop_nest([math.prod(grid)], self.parallel) as (flat,):
            image, group, row_block = unflatten(kernel, flat, grid)
            y0 = b.mul(row_block, self.rows)
            first_block = b.mul(group, self.vectors)
            b_view = b.tensor_ptr(weights, [group, 0, 0], [self.k * width])
            out = b.tensor_ptr(self.out.value, [image, first_block, 0, 0, 0],
                               [(self.vectors - 1) * plane + plane])  # fmt: skip

            def tile(p, m: int) -> None:
                a_view = b.tensor_ptr(source, [image, p, 0], [m * self.k])
                c_view = b.tensor_ptr(out, [b.mul(p, self.block)],
                                      [(self.vectors - 1) * plane + m * self.block])  # fmt: skip
                sizes = dict(m=m, n=width, k=self.k, lanes=self.block, a_row=self.k, a_k=1,
                             ldb=width, ldc=self.block, u8_s8_quads=True)  # fmt: skip
                if self.vectors > 1:
                    sizes["ldc_vector"] = plane
                b.make_brgemm_tile(a_view, b_view, c_view, **sizes)

            first, pixels = b.mul(y0, self.ow), self.rows * self.ow
            whole, rest = divmod(pixels, self.call_rows)
            if whole:
                with b.make_for(0, whole * self.call_rows, self.call_rows) as p:
                    tile(b.add(first, p), self.call_rows)
            if rest >= CHUNK_ROWS and self.amx:  # whole chunks in one call, then the rest
                chunks = rest // CHUNK_ROWS * CHUNK_ROWS
                tile(b.add(first, whole * self.call_rows), chunks)
                whole, rest = whole * self.call_rows + chunks, rest - chunks
            else:
                whole *= self.call_rows
            if rest:
                tile(b.add(first, b.value(whole, IndexType())), rest)
            if self.epilogue:
                self.epilogue([image, first_block, y0, 0, 0],
                              [1, self.vectors, self.rows, self.ow, self.block])  # fmt: skip


def pointwise_tiles(kernel: Kernel, op, x: Operand, w: Operand, out: Operand,
                    epilogue: Epilogue | None) -> None:  # fmt: skip
    PointwiseTiles(kernel, op, x, w, out, epilogue).emit()
