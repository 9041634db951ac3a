"""Convolution as one GEMM per image, for the shapes brgemm rows serve badly.

What: as conv.py (NCHW input, OIHW weights, one group).
How: out[n] viewed as [O, oh * ow] is W viewed as [O, C * kh * kw] times
the columns [C * kh * kw, oh * ow] of the input: the input itself for a 1x1,
stride-1, unpadded convolution (its planes are those columns), otherwise an
im2col buffer, each of its rows one padded, strided input row copy
(padded_rows.py). The product is matmul.py's PackedMatmul: B packed into
panels, mc x nc blocks in parallel, K blocks held in L1, whose column
blocks are cut at whole output rows so that the epilogue (bias, batch norm,
activation, residual add) runs on each finished block of rows.
An output plane too small for the register tile's vectors (7x7 = 49
columns fill 49 of 64 lanes in 16-column tiles) is computed transposed:
out[n]ᵀ [oh * ow, O] = columnsᵀ x Wᵀ, the pixels as the tile's rows (a
short last row group costs a fraction of a tile, a short vector a whole
one) and the weights as B, packed at compile time into panels the matmul
streams with prefetching; the product is then transposed into the output
with the epilogue. ResNet-50's 3x3 512-channel layer at 7x7 went from
43 to 70 GF/s (1 thread, AVX2), MobileNet-v2's and EfficientNet-B0's 7x7
layers 9-10% faster, measured in one process against the former paths.
Why: conv.py's tiles hold mr channels of one output row, so a small output
(7x7, 14x14: the late stages of every CNN) gives narrow, partly filled
tiles that reload their weights for every row; here a tile's columns run
across rows and K is blocked for the caches. The ResNet-50 layers at 7x7
and 14x14 were 1.5-2.1x onnxruntime's time as rows.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, TensorType

from graphcompiler.dialects import tir
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, view, worth_parallel_work
from graphcompiler.lowering.graph_to_tir.matmul import Epilogue, PackedMatmul, unflatten
from graphcompiler.lowering.graph_to_tir.padded_rows import copy_input_row, fill_zeros
from graphcompiler.runtime.tuning import forced_conv_path, tuned_choice
from graphcompiler.target.schedules import MatmulSchedule

f32 = Float32Type()

CONV_PATHS = ("rows", "gemm", "transposed")
"""conv.py's brgemm rows, this module's GEMM, and its transposed GEMM."""


@dataclass(frozen=True)
class ConvCase:
    """A convolution as lowering sees it: what tuning times candidates on."""

    input_shape: tuple[int, ...]
    weight_shape: tuple[int, ...]
    strides: tuple[int, ...]
    padding: tuple[int, ...]
    dilations: tuple[int, ...]
    groups: int

    @property
    def signature(self) -> str:
        def dims(values: tuple[int, ...]) -> str:
            return "x".join(map(str, values))

        return (
            f"in{dims(self.input_shape)}_w{dims(self.weight_shape)}_s{dims(self.strides)}"
            f"_p{dims(self.padding)}_d{dims(self.dilations)}_g{self.groups}"
        )

    @property
    def candidates(self) -> tuple[str, ...]:
        """The paths that can compute it (the GEMMs take one group)."""
        return CONV_PATHS if self.groups == 1 else ("rows",)


seen_convs: ContextVar[list[ConvCase] | None] = ContextVar("seen_convs", default=None)
"""Tuning's record: a list collects the convolutions lowered meanwhile."""


def conv_path(kernel: Kernel, op, x: Operand, w: Operand, out: Operand) -> str:
    """The path of an f32 convolution that is not depthwise: forced (by
    tuning), else measured on this machine (runtime/tuning.py), else
    derived from the target (prefers_gemm, computes_transposed)."""
    case = ConvCase(tuple(x.shape), tuple(w.shape), tuple(op.window_strides),
                    tuple(op.window_padding), tuple(op.window_dilations), op.group_count)  # fmt: skip
    seen = seen_convs.get()
    if seen is not None:
        seen.append(case)
    for choice in (forced_conv_path.get(), tuned_choice(kernel.target, "conv2d", case.signature)):
        if choice in case.candidates:
            return choice
    if not prefers_gemm(kernel, op, w, out):
        return "rows"
    return "transposed" if computes_transposed(kernel, w, out) else "gemm"


def is_pointwise(op, w: Operand) -> bool:
    """1x1, stride 1, no padding: the input planes are the GEMM's columns."""
    return w.shape[2:] == [1, 1] and op.window_strides == [1, 1] and not any(op.window_padding)


def prefers_gemm(kernel: Kernel, op, w: Operand, out: Operand) -> bool:
    """One group, and either pointwise (1x1, stride 1, unpadded: the input
    planes are the GEMM's columns, where conv.py would copy them into
    shifted rows), or output rows shorter than two of conv.py's row tiles
    (7 and 14 columns with 8 lanes; up to 28 with 16) and an im2col at most
    twice the size of conv.py's shifted rows (kh / sh of it: 1x1 at any
    stride and 3x3 at stride 2, not 3x3 at stride 1). Measured on
    ResNet-50's layers, 1 thread, AVX2: the short-row ones ran 5-50% faster
    as a GEMM, 3x3 stride-1 layers 10-35% slower (their im2col and packing
    copy K x P twice); pointwise layers with 28 or 56 columns 10-40% faster
    (kernel_profile, after the GEMM's prefetching), for more LLVM time.
    And any convolution computed transposed (computes_transposed)."""
    if op.group_count != 1:
        return False
    if is_pointwise(op, w) or computes_transposed(kernel, w, out):
        return True
    ow = out.shape[3]
    _, vectors = MatmulSchedule.register_tile(kernel.target, ow)
    row_tile = vectors * kernel.target.f32_lanes
    return ow <= row_tile and w.shape[2] <= 2 * op.window_strides[0]


TRANSPOSED_BELOW_FILL = 0.85
"""A GEMM over a plane that fills less of its tiles' lanes is transposed.
The measurements it sits between: 7x7 planes (77% filled with 8 lanes and
with 16) ran 1.6x faster transposed on an AVX2 Zen 3 and up to 1.1x on an
AVX-512 Skylake; 14x14 planes with 16 lanes (88%) ran 1.1-2.1x slower
transposed on that Skylake (every 1x1 and 3x3 layer of ResNet-50,
MobileNet-v2 and EfficientNet-B0 with that output; 0.9 had taken them)."""


def computes_transposed(kernel: Kernel, w: Operand, out: Operand) -> bool:
    """Whether the output plane (oh * ow pixels) fills under
    TRANSPOSED_BELOW_FILL of the lanes of the register tile a GEMM over it
    would use (7x7 with 8 or 16 lanes), with output channels enough to fill
    vectors instead (at least two): those layers are computed transposed."""
    plane = out.shape[2] * out.shape[3]
    lanes = kernel.target.f32_lanes
    _, vectors = MatmulSchedule.register_tile(kernel.target, plane)
    width = vectors * lanes
    filled = plane / (math.ceil(plane / width) * width)
    return filled < TRANSPOSED_BELOW_FILL and w.shape[0] >= 2 * lanes


class GemmConv:
    def __init__(
        self,
        kernel: Kernel,
        op,
        x: Operand,
        w: Operand,
        out: Operand,
        epilogue: Epilogue | None,
        transposed: bool,
    ):
        self.kernel, self.b, self.transposed = kernel, kernel.b, transposed
        self.op, self.x, self.w, self.out, self.epilogue = op, x, w, out, epilogue
        self.n, self.c, self.h, _ = x.shape
        self.o, _, self.kh, self.kw = w.shape
        _, _, self.oh, self.ow = out.shape
        self.depth = self.c * self.kh * self.kw

    def emit(self) -> None:
        kernel = self.kernel
        plane = self.oh * self.ow
        if is_pointwise(self.op, self.w):
            columns = view(kernel, self.x, [self.n, self.c, plane])
        else:
            columns = view(kernel, self._im2col(), [self.n, self.depth, plane])
        weights = view(kernel, self.w, [self.o, self.depth])
        out = view(kernel, self.out, [self.n, self.o, plane])
        if self.transposed:
            self._emit_transposed(columns, weights, out)
            return
        epilogue = self._row_epilogue() if self.epilogue else None
        PackedMatmul(kernel, weights, columns, out, (False, False), epilogue, self.ow).emit()

    def _emit_transposed(self, columns: Operand, weights: Operand, out: Operand) -> None:
        """out[n]ᵀ = columns[n]ᵀ x weightsᵀ into a scratch [n, plane, O]
        (PackedMatmul packs the transposed columns into row groups at run
        time, the weights into panels at compile time), then out[n, o, :] =
        scratch[n, :, o] with the epilogue on each finished block of channels.
        The transpose takes a vector's worth of channels per pixel (one cache
        line of a scratch row) into as many output rows: a channel at a time,
        every load touched a new line (ResNet-50's 1x1 layers at 14x14 ran
        about 5% slower so on AVX-512)."""
        kernel, b = self.kernel, self.b
        plane = self.oh * self.ow
        shape = [self.n, plane, self.o]
        product = Operand(b.make_tensor(shape, f32), TensorType(f32, shape))
        PackedMatmul(kernel, columns, weights, product, (True, True), None).emit()
        block = math.gcd(self.o, kernel.target.f32_lanes)
        outer = [self.n, self.o // block]
        parallel = worth_parallel_work(math.prod(outer), math.prod(shape))
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            image, channel_block = unflatten(kernel, flat, outer)
            first = b.mul(channel_block, block)
            with b.make_for(0, plane, 1) as pixel:
                for offset in range(block):
                    channel = b.add(first, offset)
                    value = kernel.load(product, [image, pixel, channel])
                    kernel.store(out, [image, channel, pixel], value)
            if self.epilogue:
                self.epilogue([image, first, 0, 0], [1, block, self.oh, self.ow])

    def _row_epilogue(self) -> Epilogue:
        """The convolution's epilogue on a GEMM block: its columns are whole
        output rows (PackedMatmul's column_multiple)."""
        b, ow = self.b, self.ow

        def on_rows(origin: list, sizes: list[int]) -> None:
            image, channel, column = origin
            _, channels, columns = sizes
            first_row = b.div(column, ow)
            self.epilogue([image, channel, first_row, 0], [1, channels, columns // ow, ow])

        return on_rows

    def _im2col(self) -> Operand:
        """columns[n, (c, ky, kx), y, x] = padded input[n, c, y * sh - pt +
        ky * dh, x * sw - pl + kx * dw]: each row one copy_input_row."""
        kernel, b = self.kernel, self.b
        (sh, sw), (pt, pl) = self.op.window_strides, self.op.window_padding[:2]
        dh, dw = self.op.window_dilations
        shape = [self.n, self.depth, self.oh, self.ow]
        columns = b.make_tensor(shape, f32)
        outer = [self.n, self.c, self.kh, self.kw]
        parallel = worth_parallel_work(math.prod(outer), math.prod(shape))
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            image, channel, ky, kx = unflatten(kernel, flat, outer)
            depth = b.add(b.mul(b.add(b.mul(channel, self.kh), ky), self.kw), kx)
            shift = b.sub(b.mul(kx, dw), pl)
            with b.make_for(0, self.oh, 1) as y:
                source_row = b.add(b.sub(b.mul(y, sh), pt), b.mul(ky, dh))
                inside = b.binary(
                    tir.AndOp,
                    b.binary(tir.GeOp, source_row, 0),
                    b.binary(tir.LtOp, source_row, self.h),
                )
                branch = b.make_if(inside, with_else=True)
                with b.at_end_of(branch.then_region.block):
                    copy_input_row(kernel, self.x, columns, [image, depth, y],
                                   [image, channel, source_row], self.ow, sw, shift)  # fmt: skip
                with b.at_end_of(branch.else_region.block):
                    fill_zeros(b, columns, [image, depth, y], 0, self.ow)
        return Operand(columns, TensorType(f32, shape))
