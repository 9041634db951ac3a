"""Matmul through packed B panels and generated brgemm microkernels.

What: out[..., i, j] = sum_l A[..., i, l] * B[..., l, j] (transposes and
numpy batch broadcasting as graph.matmul defines them).
How (`MatmulSchedule`, from the target and the shapes, as BLIS and oneDNN
block a GEMM):
- B is packed into panels of `nr` columns (nr = a few vectors), each panel
  K x nr contiguous and zero padded; a constant B is packed once at compile
  time into a global, any other B per call into a scratch tensor, or read
  where it is when it is shallow (K <= IN_PLACE_B_MAX_K) beside a constant A;
- the output is cut into mc x nc blocks, run in parallel (batch x M x N);
- in a block, for each K block of kc rows (the panel slice kc x nr and the
  A block mc x kc in L2; the last K block takes what is left of K)
  and each panel, `tir.brgemm_tile` runs the mr x nr register tile over the
  block's rows;
- A is read where it is (f32, rows in order, or transposed and spanning
  few pages); another transposed or an f16/bf16 A is first copied into row
  groups;
- the epilogue (fused element-wise ops) runs on each finished block.
Every accumulation runs over K in the same order whatever the blocking or
thread count, so results do not depend on either.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext as _nothing

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IndexType,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute, SSAValue

from graphcompiler.dialects import tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    PARALLEL_MIN_ELEMENTS,
    Kernel,
    Operand,
)
from graphcompiler.target.schedules import MatmulSchedule

f32 = Float32Type()
FLOATS_PER_LINE = 16
"""f32 values in a 64-byte cache line."""

Epilogue = Callable[[list, list[int]], None]
"""Called with a block's origin and sizes once that block of an anchor's
output is computed (graph.fused applies its element-wise ops there)."""


def _broadcast_batch(index: list[SSAValue], out_batch: list[int], batch: list[int]) -> list:
    offset = len(out_batch) - len(batch)
    return [0 if size == 1 else index[offset + d] for d, size in enumerate(batch)]


def unflatten(kernel: Kernel, flat: SSAValue, shape: list[int]) -> list:
    """Row-major coordinates of `flat` in `shape` (size-1 dims give 0)."""
    b, coordinates, rest = kernel.b, [], flat
    outermost = next((d for d, size in enumerate(shape) if size > 1), len(shape))
    for d in reversed(range(len(shape))):
        if shape[d] == 1:
            coordinates.append(b.value(0, IndexType()))
        elif d == outermost:
            coordinates.append(rest)
        else:
            coordinates.append(b.mod(rest, shape[d]))
            rest = b.div(rest, shape[d])
    return list(reversed(coordinates))


def _fill_panels(panels: np.ndarray, values: np.ndarray) -> None:
    """Write `values` [..., rows, cols] into `panels` [..., rows, P, width]
    (a view of the packed global, zeros past cols) in one pass: packing
    copies each weight once, not once per reshape."""
    width = panels.shape[-1]
    cols = values.shape[-1]
    whole = cols // width
    panels[..., :whole, :] = values[..., : whole * width].reshape(*values.shape[:-1], whole, width)
    if cols % width:
        panels[..., whole, : cols % width] = values[..., whole * width :]


IN_PLACE_B_MAX_K = 64
"""Rows of B read in place at most: one page each, within the first-level
data TLB (64 entries on x86 cores since Nehalem)."""

IN_PLACE_TRANSPOSED_A_MAX_BYTES = 64 * 4096
"""A transposed A ([K, M]) spanning at most this is read in place: the
pages its K rows cross stay within the first-level data TLB, as in-place
B's rows do."""


class PackedMatmul:
    """One f32-computed matmul (f16/bf16 operands are converted on the way)."""

    accumulator: Attribute = f32
    """The element type of the packed operands, the tiles and C."""
    tile_properties: dict[str, bool] = {}
    """Extra properties of every `tir.brgemm_tile` (what the operands hold)."""
    amx_tiles = False
    """The tiles run on AMX (matmul_pairs.py): one call takes a panel's
    full row groups, and the next panel is not prefetched."""

    def __init__(
        self,
        kernel: Kernel,
        a: Operand,
        b_: Operand,
        out: Operand,
        transposes: tuple[bool, bool],
        epilogue: Epilogue | None,
        column_multiple: int = 1,
        row_multiple: int = 1,
    ):
        """`transposes`: whether A and B are stored transposed;
        `column_multiple`: every block's columns start and end at multiples
        of it (a convolution's output rows, which its epilogue walks);
        `row_multiple`: every block's rows do (whole matrices of a batch
        taken as rows: rows_of_batch)."""
        self.kernel, self.b = kernel, kernel.b
        self.transpose_a, self.transpose_b = transposes
        *self.batch, self.m, self.n = out.shape
        self.k = a.shape[-2] if self.transpose_a else a.shape[-1]
        self.a, self.b_in, self.out, self.epilogue = a, b_, out, epilogue
        self.schedule = MatmulSchedule.for_shape(
            kernel.target,
            math.prod(self.batch),
            self.m,
            self.n,
            self.k,
            column_multiple,
            constant_b=self.packs_b_at_compile_time(),
        ).with_row_blocks_of(self.m, row_multiple)

    # --- packing (and conversion to f32) ---------------------------------------------

    def _packed_b(self) -> tuple[SSAValue, list[int]]:
        """B as panels [*batch_b, panels, padded K, nr] (zero padded), and batch_b."""
        s, k, n = self.schedule, self.k, self.n
        batch_b = self.b_in.shape[:-2]
        panels = math.ceil(n / s.nr)
        shape = [*batch_b, panels, k, s.nr]
        if self.packs_b_at_compile_time():
            return self._packed_constant(panels), batch_b
        source = self.b_in  # loads convert f16/bf16 to f32
        packed = self.b.make_tensor(shape, self.accumulator)
        kernel, b = self.kernel, self.b
        outer = [*batch_b, panels]
        parallel = math.prod(outer) > 1 and math.prod(shape) >= PARALLEL_MIN_ELEMENTS
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            *batch_index, panel = unflatten(kernel, flat, outer)
            first = b.mul(panel, s.nr)
            if self.transpose_b:
                # B[n, k]: each panel row gathers one column of nr rows of B; going
                # down K, those rows' cache lines stay in L1 and the panel is
                # written in order
                with b.make_for(0, k, 1) as depth:
                    with b.make_for(0, s.nr, 1) as j:
                        column = b.add(first, j)
                        inside = b.binary(tir.LtOp, column, n)
                        safe = b.select(inside, column, 0)
                        value = kernel.load(source, [*batch_index, safe, depth])
                        value = b.select(inside, value, kernel.const(0, value))
                        b.make_store(value, packed, [*batch_index, panel, depth, j])
                return packed, batch_b
            full = n // s.nr
            with b.make_for(0, k, 1) as depth:
                if full:
                    branch = b.make_if(b.binary(tir.LtOp, panel, full), with_else=n % s.nr > 0)
                    with b.at_end_of(branch.then_region.block):
                        with b.make_for(0, s.nr, s.lanes) as j:
                            column = b.add(first, j)
                            value = kernel.load(source, [*batch_index, depth, column], s.lanes)
                            b.make_store(value, packed, [*batch_index, panel, depth, j], s.lanes)
                if n % s.nr:
                    tail = branch.else_region.block if full else None
                    with b.at_end_of(tail) if tail else _nothing():
                        with b.make_for(0, s.nr, 1) as j:
                            column = b.add(first, j)
                            inside = b.binary(tir.LtOp, column, n)
                            at = [*batch_index, depth, b.select(inside, column, 0)]
                            value = kernel.load(source, at)
                            value = b.select(inside, value, kernel.const(0, value))
                            b.make_store(value, packed, [*batch_index, panel, depth, j])
        return packed, batch_b

    def packs_b_at_compile_time(self) -> bool:
        return isinstance(self.b_in.constant, DenseIntOrFPElementsAttr)

    def reads_b_in_place(self) -> bool:
        """An f32, untransposed B computed at run time beside a packed
        constant A (a convolution's input beside its weights) is read where
        it is when K is short: packing copied all of a wide, shallow B
        (MobileNet-v2's first 1x1 convolutions: 16-32 channels of 112x112
        pixels) for little reuse (the model 7% faster on one thread). A
        deep B read in place lost up to 35% (520 -> 512 channels on 28x28):
        its K rows, each on its own page, outrun the TLB."""
        return (
            not self.transpose_b
            and self.b_in.element == f32
            and not self.b_in.blocked
            and not self.packs_b_at_compile_time()
            and self.packs_a_at_compile_time()
            and self.k <= IN_PLACE_B_MAX_K
        )

    def packs_a_at_compile_time(self) -> bool:
        """A constant A (a convolution's weights) is packed once into row
        groups [groups, K, mr], each K step's mr values contiguous: the
        microkernel reads one stream, and its name no longer carries K (the
        in-place A's row stride), so layers that differ only in K share one."""
        return isinstance(self.a.constant, DenseIntOrFPElementsAttr)

    def reads_a_in_place(self) -> bool:
        """An f32, untransposed A is read where it is, without a copy (rows
        4 KiB apart included: with 64-byte aligned outputs and weights that
        was 7% faster than packing at 256x2048x512); so is a transposed one
        within IN_PLACE_TRANSPOSED_A_MAX_BYTES, its tile's mr rows adjacent
        in each K row as in a row group (a 7x7 convolution's columns,
        computed transposed: packing them was a serial, element-by-element
        copy of up to a fifth of the layer's time)."""
        shallow = self.k * self.m * 4 <= IN_PLACE_TRANSPOSED_A_MAX_BYTES
        return (
            (shallow or not self.transpose_a)
            and self.a.element == f32
            and not self.a.blocked
            and not self.packs_a_at_compile_time()
        )

    def a_row_stride(self) -> int:
        """Floats between packed A rows: K rounded to whole cache lines, and
        off 2 KiB multiples so the tile's rows do not share L1 sets."""
        stride = math.ceil(self.k / 16) * 16
        return stride + 16 if stride * 4 % 2048 == 0 else stride

    def packs_a_in_groups(self) -> bool:
        """A is read from row groups [groups, K, mr] (each K step's mr values
        contiguous): a constant A, packed at compile time, and a transposed
        A, whose mr rows are adjacent in each of its K rows, so packing is
        one contiguous copy per K step (packed into rows, every value was
        gathered: ResNet-50's 7x7 layers ran 13-16% longer)."""
        return self.packs_a_at_compile_time() or (self.transpose_a and not self.reads_a_in_place())

    def _packed_a(self) -> SSAValue:
        """A as row groups, converted to f32: a transposed A as [*batch_a,
        groups, K, mr] (rows past M zero), any other as [*batch_a, groups,
        mr, row stride], rows copied in vectors at a stride that keeps the
        microkernel's broadcasts free of cache-set conflicts (rows past M
        are never read: tail tiles have fewer rows)."""
        if self.transpose_a:
            return self._packed_transposed_a()
        s, k, m = self.schedule, self.k, self.m
        kernel, b, source = self.kernel, self.b, self.a
        batch_a = source.shape[:-2]
        groups = math.ceil(m / s.mr)
        packed = b.make_tensor([*batch_a, groups, s.mr, self.a_row_stride()], f32)
        rows = [*batch_a, m]
        parallel = math.prod(rows) > 1 and math.prod(rows) * k >= PARALLEL_MIN_ELEMENTS * 4
        with kernel.loop_nest([math.prod(rows)], parallel) as (flat,):
            *batch_index, row = unflatten(kernel, flat, rows)
            target = [*batch_index, b.div(row, s.mr), b.mod(row, s.mr)]
            vector_end = k // s.lanes * s.lanes
            for start, end, lanes in ((0, vector_end, s.lanes), (vector_end, k, 1)):
                if start < end:
                    with b.make_for(start, end, lanes) as depth:
                        value = kernel.load(source, [*batch_index, row, depth], lanes)
                        b.make_store(value, packed, [*target, depth], lanes)
        return packed

    def _packed_transposed_a(self) -> SSAValue:
        """A transposed A [..., K, M] as row groups [*batch_a, groups, K, mr]:
        group g's K step d is A[..., d, g * mr : (g + 1) * mr], adjacent."""
        s, k, m = self.schedule, self.k, self.m
        kernel, b, source = self.kernel, self.b, self.a
        batch_a = source.shape[:-2]
        groups = math.ceil(m / s.mr)
        packed = b.make_tensor([*batch_a, groups, k, s.mr], f32)
        outer = [*batch_a, groups]
        parallel = math.prod(outer) > 1 and math.prod(outer) * k * s.mr >= PARALLEL_MIN_ELEMENTS * 4
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            *batch_index, group = unflatten(kernel, flat, outer)
            first = b.mul(group, s.mr)
            with b.make_for(0, k, 1) as depth:
                with b.make_for(0, s.mr, 1) as r:
                    row = b.add(first, r)
                    inside = b.binary(tir.LtOp, row, m)
                    value = kernel.load(source, [*batch_index, depth, b.select(inside, row, 0)])
                    value = b.select(inside, value, kernel.const(0, value))
                    b.make_store(value, packed, [*batch_index, group, depth, r])
        return packed

    def _packed_constant_a(self) -> SSAValue:
        """A as a global [*batch_a, groups, K, mr] (rows past M zero)."""
        k, mr, transpose_a = self.k, self.schedule.mr, self.transpose_a
        groups = math.ceil(self.m / mr)

        def pack(values: np.ndarray) -> np.ndarray:
            if transpose_a:
                values = np.swapaxes(values, -1, -2)
            packed = tir.aligned_zeros((*values.shape[:-2], groups, k, mr), np.float32)
            _fill_panels(np.swapaxes(packed, -3, -2), np.swapaxes(values, -1, -2))
            return packed

        return self.kernel.packed_constant(self.a, "packed_a", pack)

    def _packed_constant(self, panels: int) -> SSAValue:
        """Pack a constant B at compile time into a global of the panel layout."""
        k, nr, transpose_b = self.k, self.schedule.nr, self.transpose_b

        def pack(values: np.ndarray) -> np.ndarray:
            if transpose_b:
                values = np.swapaxes(values, -1, -2)
            packed = tir.aligned_zeros((*values.shape[:-2], panels, k, nr), np.float32)
            _fill_panels(np.swapaxes(packed, -3, -2), values)
            return packed

        return self.kernel.packed_constant(self.b_in, "packed_b", pack)

    # --- the blocked loop nest ----------------------------------------------------------

    def emit(self) -> None:
        if 0 in (self.m, self.n) or not all(self.batch):
            return
        if self.k == 0:
            self._fill_zero()
            return
        kernel, b, s = self.kernel, self.b, self.schedule
        if self.reads_b_in_place():
            packed, batch_b = self.b_in.value, self.b_in.shape[:-2]
        else:
            packed, batch_b = self._packed_b()
        if self.packs_a_at_compile_time():
            a = self._packed_constant_a()
        else:
            a = self.a.value if self.reads_a_in_place() else self._packed_a()
        accumulator = self.accumulator
        c = (
            self.out
            if self.out.element == accumulator
            else Operand(
                b.make_tensor(self.out.shape, accumulator), TensorType(accumulator, self.out.shape)
            )
        )
        blocks_m, blocks_n = math.ceil(self.m / s.mc), math.ceil(self.n / s.nc)
        grid = [*self.batch, blocks_m, blocks_n]
        work = math.prod(self.out.shape) * self.k
        parallel = math.prod(grid) > 1 and work >= PARALLEL_MIN_ELEMENTS * 128
        with kernel.loop_nest([math.prod(grid)], parallel) as (flat,):
            *batch_index, block_m, block_n = unflatten(kernel, flat, grid)
            row0, col0 = b.mul(block_m, s.mc), b.mul(block_n, s.nc)
            a_batch = _broadcast_batch(batch_index, self.batch, self.a.shape[:-2])
            b_batch = _broadcast_batch(batch_index, self.batch, batch_b)

            def block(rows: int, cols: int) -> None:
                self._block(a, a_batch, packed, b_batch, c, batch_index, row0, col0, rows, cols)

            self._by_extent(block_m, blocks_m, s.mc, self.m, lambda rows: self._by_extent(
                block_n, blocks_n, s.nc, self.n, lambda cols: block(rows, cols)))  # fmt: skip

    def _by_extent(
        self, index, count: int, size: int, total: int, body: Callable[[int], None]
    ) -> None:
        """body(size), or body(the remainder) for the last of `count` blocks."""
        last = total - (count - 1) * size
        if count == 1 or last == size:
            body(last)
            return
        branch = self.b.make_if(self.b.binary(tir.EqOp, index, count - 1), with_else=True)
        with self.b.at_end_of(branch.then_region.block):
            body(last)
        with self.b.at_end_of(branch.else_region.block):
            body(size)

    def _block(
        self, a, a_batch, packed, b_batch, c, batch_index, row0, col0, rows: int, cols: int
    ) -> None:
        """C[row0 : row0 + rows, col0 : col0 + cols] over every K block (the
        first writes C, the others add to it), then the epilogue on it."""
        b, s = self.b, self.schedule
        args = (a, a_batch, packed, b_batch, c, batch_index, row0, col0, rows, cols)
        (full, kc), *rest = s.k_blocks(self.k)
        if full == 1:
            self._k_block(*args, b.value(0, IndexType()), kc, None)
        else:
            with b.make_for(0, full, 1) as kb:
                self._k_block(*args, b.mul(kb, kc), kc, b.binary(tir.NeOp, kb, 0))
        for _, tail in rest:
            self._k_block(*args, b.value(full * kc, IndexType()), tail, True)
        if c is not self.out:
            self._convert_block(c, batch_index, row0, col0, rows, cols)
        if self.epilogue:
            self.epilogue([*batch_index, row0, col0], [*[1] * len(self.batch), rows, cols])

    def _k_block(
        self,
        a,
        a_batch,
        packed,
        b_batch,
        c,
        batch_index,
        row0,
        col0,
        rows,
        cols,
        depth,
        kc,
        accumulate,
    ) -> None:
        """Every register tile of the block for K rows [depth, depth + kc);
        `accumulate`: whether C already holds a partial sum (True, None for
        no, or an i1 deciding at run time)."""
        b, s = self.b, self.schedule
        full_panels, tail_cols = divmod(cols, s.nr)
        full_groups, tail_rows = divmod(rows, s.mr)
        in_place, grouped = self.reads_a_in_place(), self.packs_a_in_groups()
        b_in_place = self.reads_b_in_place()
        if in_place and self.transpose_a:  # [..., K, M]: the tile's rows adjacent
            a_row, a_k = 1, self.m
        elif grouped:
            a_row, a_k = 1, s.mr
        else:
            a_row, a_k = (self.k if in_place else self.a_row_stride()), 1
        if isinstance(accumulate, SSAValue):
            flags = {"accumulate_if": accumulate}
        else:
            flags = {"accumulate": True} if accumulate else {}

        def tile(row, col, m: int, n: int) -> None:
            if in_place:
                at = [depth, row] if self.transpose_a else [row, depth]
            elif grouped:
                at = [b.div(row, s.mr), depth, 0]
            else:
                at = [b.div(row, s.mr), 0, depth]
            a_view = b.tensor_ptr(a, [*a_batch, *at], [(m - 1) * a_row + (kc - 1) * a_k + 1])
            c_view = b.tensor_ptr(c.value, [*batch_index, row, col], [(m - 1) * self.n + n])
            spread = {}
            if b_in_place:  # the rows' next columns: the hardware prefetcher's
                b_view = b.tensor_ptr(packed, [*b_batch, depth, col], [(kc - 1) * self.n + n])
                ldb, prefetch = self.n, None
            else:
                panel = b.div(col, s.nr)
                b_view = b.tensor_ptr(packed, [*b_batch, panel, depth, 0], [kc * s.nr])
                ldb, prefetch = s.nr, None
                # One row group reads each B line once, in order: a stream the
                # hardware prefetcher follows, which a column of prefetches only
                # splits (decode-step GEMVs, M = 1-2: 11-33% faster without).
                if not self.amx_tiles and rows > s.mr:
                    every = self._prefetch_every(rows, kc)
                    prefetch = self._next_panel(packed, b_batch, panel, row, depth, kc, every)
                    spread = {"prefetch_every": every} if every > 1 else {}
            b.make_brgemm_tile(
                a_view, b_view, c_view, prefetch_b=prefetch,
                m=m, n=n, k=kc, lanes=s.lanes, a_row=a_row, a_k=a_k, ldb=ldb, ldc=self.n,
                **spread, **flags, **self.tile_properties,
            )  # fmt: skip

        def panel_column(col, n: int) -> None:
            if full_groups and self.amx_tiles:  # few calls: the kernel loops over their groups
                per_call = max(1, tir.MAX_TILE_ACCUMULATORS // (s.mr * -(-n // s.lanes)))
                calls, rest = divmod(full_groups, per_call)
                if calls:
                    with b.make_for(0, calls, 1) as call:
                        tile(b.add(row0, b.mul(call, per_call * s.mr)), col, per_call * s.mr, n)
                if rest:
                    tile(b.add(row0, calls * per_call * s.mr), col, rest * s.mr, n)
            elif full_groups:
                with b.make_for(0, full_groups, 1) as group:
                    tile(b.add(row0, b.mul(group, s.mr)), col, s.mr, n)
            if tail_rows:
                tile(b.add(row0, full_groups * s.mr), col, tail_rows, n)

        if full_panels:
            with b.make_for(0, full_panels, 1) as p:
                panel_column(b.add(col0, b.mul(p, s.nr)), s.nr)
        if tail_cols:
            panel_column(b.add(col0, full_panels * s.nr), tail_cols)

    def _prefetch_every(self, rows: int, kc: int) -> int:
        """K steps per prefetched row, so that the `rows` of a block share the
        next panel's K block evenly: each of its row groups takes one column
        of cache lines of 1 / every of the rows (1: each takes a whole
        column, as when there are fewer groups than columns)."""
        s = self.schedule
        groups, lines = math.ceil(rows / s.mr), math.ceil(s.nr / FLOATS_PER_LINE)
        return max(1, min(kc, groups // lines))

    def _next_panel(self, packed, b_batch, panel, row, depth, kc: int, every: int) -> SSAValue:
        """Where the tile at `row` prefetches from: the same K block of the
        next panel (the last panel: its own), one column of cache lines of
        it, the column and the share of its rows (`every`: the tile
        prefetches ceil(kc / every) rows) chosen by the tile's row group, so
        that consecutive row groups bring in every line of the block the
        next panel's tiles read."""
        b, s = self.b, self.schedule
        panels, lines = math.ceil(self.n / s.nr), math.ceil(s.nr / FLOATS_PER_LINE)
        has_next = b.binary(tir.LtOp, panel, panels - 1)
        following = b.select(has_next, b.add(panel, 1), panel)
        group = b.div(row, s.mr)
        line = b.mul(b.mod(group, lines), FLOATS_PER_LINE)
        share = math.ceil(kc / every)
        start = depth
        if every > 1:  # the last share ends with the K block
            part = b.mul(b.mod(b.div(group, lines), every), share)
            start = b.add(depth, b.binary(tir.MinOp, part, kc - share))
        return b.tensor_ptr(packed, [*b_batch, following, start, line], [(share - 1) * s.nr + 1])

    def _convert_block(self, c: Operand, batch_index, row0, col0, rows: int, cols: int) -> None:
        origin = [*batch_index, row0, col0]

        def body(index: list[SSAValue], lanes: int) -> None:
            self.kernel.store(self.out, index, self.kernel.load(c, index, lanes))

        self.kernel.for_each(
            [*[1] * len(self.batch), rows, cols], body, origin=origin, parallel=False
        )

    def _fill_zero(self) -> None:
        def body(index: list[SSAValue], lanes: int) -> None:
            element = self.accumulator
            zero = self.b.const(0, element if lanes == 1 else VectorType(element, [lanes]))
            self.kernel.store(self.out, index, zero)

        self.kernel.for_each(self.out.shape, body)
        if self.epilogue:
            self.epilogue([0] * len(self.out.shape), self.out.shape)
