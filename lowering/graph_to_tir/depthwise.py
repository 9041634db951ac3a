"""Depthwise convolution (one input channel per group) as a vectorized stencil.

What: out[n, o, y, x] = sum over ky, kx of w[o, 0, ky, kx] *
in[n, o // m, y * sh - pt + ky * dh, x * sw - pl + kx * dw] (m output channels
per input channel, usually 1; outside the input reads 0).
Why not brgemm: with one input channel per group a brgemm tile reduces over
K = 1 and holds one output channel: all call overhead, no register reuse.
How: parallel over output planes (image, channel). Each plane's input is
copied once into `phases[sw, hp, wq]`, padded and split by column phase
(phases[p, r, j] = padded input[r, j * sw + p]), so tap (ky, kx) of output
column x reads phases[(kx * dw) % sw, y * sh + ky * dh, x + (kx * dw) // sw]:
consecutive columns are consecutive floats for every stride, and no tap is
bounds-checked. An output row runs in strips of STRIP_VECTORS vectors (one
weight broadcast feeds several FMAs), then single vectors; a last partial
vector is computed whole into a small row buffer (the phases are padded for
it) and its valid lanes copied out. Taps are loops: the code is the same
for any filter size. The epilogue (bias, activation) runs per output plane.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, IndexType, VectorType
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, worth_parallel_work
from graphcompiler.lowering.graph_to_tir.matmul import unflatten
from graphcompiler.lowering.graph_to_tir.padded_rows import copy_input_row, fill_zeros

f32 = Float32Type()

STRIP_VECTORS = 4
"""Output vectors computed together per tap: 4 accumulators, 1 weight."""


def is_depthwise(x: Operand, w: Operand, groups: int) -> bool:
    """One input channel per group (any number of outputs per group)."""
    return groups > 1 and w.shape[1] == 1 and groups == x.shape[1]


class DepthwiseConv:
    def __init__(self, kernel: Kernel, op, x: Operand, w: Operand, out: Operand, epilogue):
        self.kernel, self.b = kernel, kernel.b
        self.x, self.w, self.out, self.epilogue = x, w, out, epilogue
        self.n, self.c, self.h, self.width = x.shape
        self.o, _, self.kh, self.kw = w.shape
        _, _, self.oh, self.ow = out.shape
        (self.sh, self.sw), (self.pt, self.pl) = op.window_strides, op.window_padding[:2]
        self.dh, self.dw = op.window_dilations
        self.lanes = kernel.lanes
        self.hp = (self.oh - 1) * self.sh + (self.kh - 1) * self.dh + 1
        padded_row = -(-self.ow // self.lanes) * self.lanes  # whole vectors
        self.wq = padded_row + (self.kw - 1) * self.dw // self.sw

    def emit(self) -> None:
        kernel, b = self.kernel, self.b
        planes = [self.n, self.o]
        work = math.prod(self.out.shape) * self.kh * self.kw
        with kernel.loop_nest(
            [math.prod(planes)], worth_parallel_work(math.prod(planes), work)
        ) as (flat,):
            image, channel = unflatten(kernel, flat, planes)
            phases = self._phases(image, b.div(channel, self.o // self.c))
            row = b.make_tensor([self.lanes], f32)
            with b.make_for(0, self.oh, 1) as y:
                self._row(phases, row, image, channel, y)
            if self.epilogue:  # on the whole plane, still cached: rows of 7 vectorize too
                self.epilogue([image, channel, 0, 0], [1, 1, self.oh, self.ow])

    def _phases(self, image: SSAValue, source_channel: SSAValue) -> SSAValue:
        """The plane's input, padded and split by column phase."""
        b = self.b
        phases = b.make_tensor([self.sw, self.hp, self.wq], f32)
        with b.make_for(0, self.sw, 1) as phase, b.make_for(0, self.hp, 1) as r:
            source_row = b.sub(r, self.pt)
            inside = b.binary(
                tir.AndOp, b.binary(tir.GeOp, source_row, 0), b.binary(tir.LtOp, source_row, self.h)
            )
            branch = b.make_if(inside, with_else=True)
            with b.at_end_of(branch.then_region.block):
                copy_input_row(self.kernel, self.x, phases, [phase, r],
                               [image, source_channel, source_row], self.wq, self.sw,
                               b.sub(phase, self.pl))  # fmt: skip
            with b.at_end_of(branch.else_region.block):
                fill_zeros(b, phases, [phase, r], 0, self.wq)
        return phases

    def _row(self, phases, row_buffer, image, channel, y) -> None:
        b, lanes = self.b, self.lanes
        whole = self.ow // lanes
        strips, single = divmod(whole, STRIP_VECTORS)
        out_row = [image, channel, y]
        if strips:
            with b.make_for(0, strips * STRIP_VECTORS * lanes, STRIP_VECTORS * lanes) as x0:
                sums = self._sums(phases, channel, y, x0, STRIP_VECTORS)
                for v, total in enumerate(sums):
                    self.kernel.store(self.out, [*out_row, b.add(x0, v * lanes)], total)
        if single:
            start = strips * STRIP_VECTORS * lanes
            with b.make_for(start, whole * lanes, lanes) as x0:
                (total,) = self._sums(phases, channel, y, x0, 1)
                self.kernel.store(self.out, [*out_row, x0], total)
        if self.ow % lanes:
            x0 = whole * lanes
            (total,) = self._sums(phases, channel, y, b.value(x0, IndexType()), 1)
            b.make_store(total, row_buffer, [0], lanes)
            with b.make_for(0, self.ow - x0, 1) as j:
                value = b.make_load(row_buffer, [j])
                self.kernel.store(self.out, [*out_row, b.add(j, x0)], value)

    def _sums(self, phases, channel, y, x0, vectors: int) -> list[SSAValue]:
        """The outputs at columns [x0, x0 + vectors * lanes) of row y."""
        b, kernel, lanes = self.b, self.kernel, self.lanes
        vector = VectorType(f32, [lanes])
        sums = [b.make_var(vector, b.const(0.0, vector)) for _ in range(vectors)]
        with b.make_for(0, self.kh, 1) as ky, b.make_for(0, self.kw, 1) as kx:
            weight = kernel.load(self.w, [channel, 0, ky, kx])
            weight = b.unary(tir.BroadcastOp, weight, vector)
            column = b.mul(kx, self.dw)
            phase, skip = b.mod(column, self.sw), b.div(column, self.sw)
            r = b.add(b.mul(y, self.sh), b.mul(ky, self.dh))
            start = b.add(x0, skip)
            for v, total in enumerate(sums):
                tap = b.make_load(phases, [phase, r, b.add(start, v * lanes)], lanes)
                fused = tir.FmaddOp.create(
                    operands=[weight, tap, b.read(total)], result_types=[vector]
                )
                b.make_assign(total, b.insert(fused).result)
        return [b.read(total) for total in sums]
