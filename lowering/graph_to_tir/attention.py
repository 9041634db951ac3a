"""graph.attention as one kernel: online softmax over key blocks.

What: out = softmax(q kᵀ * scale + mask) v (see graph.AttentionOp).
How (FlashAttention's schedule, on brgemm tiles):
- kᵀ is packed once per call into panels [batch, Sk / nr, D, nr], like a
  matmul's B (a pre-transposed key is copied in vectors);
- parallel over (batch, query block of `block_q` rows); per item, for each
  key block of `block_k` keys:
  1. S = q_block x kᵀ_block with brgemm tiles into a per-thread scratch;
  2. per row: s = S * scale + mask, the block max, m_new = max(m, block max),
     p = exp(s - m_new) written back over S, l = l * exp(m - m_new) + sum p,
     and the row of the output accumulator scaled by exp(m - m_new);
  3. acc += P x v_block with brgemm tiles reading v's rows in place;
- out = acc / l. The Sq x Sk scores are never stored whole, and q, k, v
  are each read once per query block.
A key whose score is -inf contributes exactly 0 (so a row masked in one
block and not in another is right); a row with no finite score, +inf or
NaN ends NaN, as softmax gives.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, IndexType, VectorType
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    PARALLEL_MIN_ELEMENTS,
    Kernel,
    broadcast_indices,
)
from graphcompiler.lowering.graph_to_tir.matmul import MatmulSchedule, unflatten
from graphcompiler.lowering.graph_to_tir.reductions import nan_max

f32 = Float32Type()


def _batch_index(index: list, batch: list[int], shape: list[int]) -> list:
    """An operand's batch indices for the output batch `index` (broadcast)."""
    return broadcast_indices(index, batch, shape[:-2])


class AttentionKernel:
    def __init__(self, kernel: Kernel, op: graph.AttentionOp):
        self.kernel, self.b = kernel, kernel.b
        props = op.with_defaults(op.properties)
        self.scale = graph.float_value(props, "scale")
        self.key_transposed = graph.bool_value(props, "key_transposed")
        self.q, self.k, self.v = kernel.inputs[:3]
        self.mask = kernel.inputs[3] if len(kernel.inputs) == 4 else None
        self.out = kernel.out
        *self.batch, self.sq, self.dv = self.out.shape
        self.d = self.q.shape[-1]
        self.sk = self.v.shape[-2]
        target = kernel.target
        self.lanes = target.f32_lanes
        rows, vectors = MatmulSchedule.register_tile(target, 8 * self.lanes)
        self.mr, self.nr = rows, vectors * self.lanes
        self.block_k = min(math.ceil(self.sk / self.nr) * self.nr, 4 * self.nr)
        self.block_q = min(self.sq, 4 * self.mr)
        v_rows, v_vectors = MatmulSchedule.register_tile(target, self.dv)
        self.v_mr, self.v_nr = v_rows, v_vectors * self.lanes

    # --- kᵀ panels ----------------------------------------------------------------------

    def _packed_keys(self) -> SSAValue:
        """kᵀ as [*batch_k, panels, D, nr], zero padded past Sk."""
        kernel, b, nr = self.kernel, self.b, self.nr
        batch_k = self.k.shape[:-2]
        panels = math.ceil(self.sk / nr)
        packed = b.make_tensor([*batch_k, panels, self.d, nr], f32)
        outer = [*batch_k, panels]
        parallel = math.prod(outer) > 1 and math.prod(outer) * self.d * nr >= PARALLEL_MIN_ELEMENTS
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            *batch_index, panel = unflatten(kernel, flat, outer)
            with b.make_for(0, self.d, 1) as feature:  # panel rows in order (see matmul)
                with b.make_for(0, nr, 1) as j:
                    key = b.add(b.mul(panel, nr), j)
                    inside = b.binary(tir.LtOp, key, self.sk)
                    safe = b.select(inside, key, 0)
                    at = [feature, safe] if self.key_transposed else [safe, feature]
                    value = kernel.load(self.k, [*batch_index, *at])
                    value = b.select(inside, value, kernel.const(0, value))
                    b.make_store(value, packed, [*batch_index, panel, feature, j])
        return packed

    # --- the kernel ---------------------------------------------------------------------

    def emit(self) -> None:
        if 0 in self.out.shape:
            return
        kernel, b = self.kernel, self.b
        if self.sk == 0:  # no keys: each output is an empty sum, 0, as in matmul(softmax(s), v)
            kernel.for_each(self.out.shape, lambda index, lanes: kernel.store(
                self.out, index, self._zero(lanes)))  # fmt: skip
            return
        keys = self._packed_keys()
        query_blocks = math.ceil(self.sq / self.block_q)
        grid = [*self.batch, query_blocks]
        work = math.prod(self.batch) * self.sq * self.sk * (self.d + self.dv)
        parallel = math.prod(grid) > 1 and work >= PARALLEL_MIN_ELEMENTS * 16
        with kernel.loop_nest([math.prod(grid)], parallel) as (flat,):
            *batch_index, query_block = unflatten(kernel, flat, grid)
            row0 = b.mul(query_block, self.block_q)
            last = self.sq - (query_blocks - 1) * self.block_q
            if last == self.block_q:
                self._query_block(keys, batch_index, row0, self.block_q)
            else:
                branch = b.make_if(b.binary(tir.EqOp, query_block, query_blocks - 1), with_else=True)
                with b.at_end_of(branch.then_region.block):
                    self._query_block(keys, batch_index, row0, last)
                with b.at_end_of(branch.else_region.block):
                    self._query_block(keys, batch_index, row0, self.block_q)

    def _query_block(self, keys: SSAValue, batch_index: list, row0, rows: int) -> None:
        """Rows [row0, row0 + rows) of one batch entry, over every key block."""
        b = self.b
        scores = b.make_tensor([rows, self.block_k], f32)
        acc = b.make_tensor([rows, self.dv], f32)
        running_max = b.make_tensor([rows], f32)
        running_sum = b.make_tensor([rows], f32)
        with b.make_for(0, rows, 1) as r:
            b.make_store(b.const(-math.inf, f32), running_max, [r])
            b.make_store(b.const(0.0, f32), running_sum, [r])
            self._row_loop(self.dv, lambda c, lanes: b.make_store(
                self._zero(lanes), acc, [r, c], lanes))  # fmt: skip
        state = (scores, acc, running_max, running_sum)
        full_blocks, tail = divmod(self.sk, self.block_k)
        if full_blocks:
            with b.make_for(0, full_blocks, 1) as block:
                self._key_block(keys, batch_index, row0, rows, b.mul(block, self.block_k), self.block_k, state)
        if tail:
            first = b.value(full_blocks * self.block_k, IndexType())
            self._key_block(keys, batch_index, row0, rows, first, tail, state)
        self._finish(batch_index, row0, rows, acc, running_sum)

    def _key_block(self, keys, batch_index, row0, rows: int, key0, count: int, state) -> None:
        scores, acc, running_max, running_sum = state
        self._scores(keys, batch_index, row0, rows, key0, count, scores)
        self._softmax_update(batch_index, row0, rows, key0, count, state)
        self._accumulate_values(batch_index, rows, key0, count, scores, acc)

    def _tiles(self, rows: int, cols: int, mr: int, nr: int, tile) -> None:
        """tile(row, col, m, n) over a rows x cols matrix in mr x nr tiles."""
        b = self.b
        full, tail = divmod(rows, mr)

        def column(col, n: int) -> None:
            if full:
                with b.make_for(0, full, 1) as group:
                    tile(b.mul(group, mr), col, mr, n)
            if tail:
                tile(b.value(full * mr, IndexType()), col, tail, n)

        full_panels, tail_cols = divmod(cols, nr)
        if full_panels:  # a loop, not one copy per panel: Dv may be large
            with b.make_for(0, full_panels, 1) as panel:
                column(b.mul(panel, nr), nr)
        if tail_cols:
            column(b.value(full_panels * nr, IndexType()), tail_cols)

    def _scores(self, keys, batch_index, row0, rows: int, key0, count: int, scores) -> None:
        """scores[:rows, :count] = q[row0:] x kᵀ[:, key0:key0 + count]."""
        b, nr, d = self.b, self.nr, self.d
        q_batch = _batch_index(batch_index, self.batch, self.q.shape)
        k_batch = _batch_index(batch_index, self.batch, self.k.shape)
        if d == 0:  # an empty head dimension: every score is 0 (a brgemm needs k > 0)
            with b.make_for(0, rows, 1) as r:
                self._row_loop(count, lambda c, lanes: b.make_store(
                    self._zero(lanes), scores, [r, c], lanes))  # fmt: skip
            return

        def tile(row, col, m: int, n: int) -> None:
            a_view = b.tensor_ptr(self.q.value, [*q_batch, b.add(row0, row), 0], [(m - 1) * d + d])
            panel = b.div(b.add(key0, col), nr)
            b_view = b.tensor_ptr(keys, [*k_batch, panel, 0, 0], [d * nr])
            c_view = b.tensor_ptr(scores, [row, col], [(m - 1) * self.block_k + n])
            b.make_brgemm_tile(
                a_view, b_view, c_view, m=m, n=n, k=d, lanes=self.lanes,
                a_row=d, a_k=1, ldb=nr, ldc=self.block_k,
            )  # fmt: skip

        self._tiles(rows, count, self.mr, nr, tile)

    def _softmax_update(self, batch_index, row0, rows: int, key0, count: int, state) -> None:
        """Scale and mask the block's scores, fold them into the running max
        and sum, turn them into p = exp(s - max), rescale the accumulator."""
        scores, acc, running_max, running_sum = state
        kernel, b = self.kernel, self.b
        with b.make_for(0, rows, 1) as r:
            row = b.add(row0, r)

            def masked(column, lanes: int) -> SSAValue:
                value = b.mul(kernel.b.make_load(scores, [r, column], lanes), self._splat(self.scale, lanes))
                if self.mask is not None:
                    index = [*batch_index, row, b.add(key0, column)]
                    value = b.add(value, kernel.load(self.mask, index, lanes, [*self.batch, self.sq, self.sk]))
                b.make_store(value, scores, [r, column], lanes)
                return value

            block_max = self._reduce(count, masked, nan_max, tir.ReduceMaxOp, -math.inf)
            old = b.make_load(running_max, [r])
            new = nan_max(b, old, block_max)
            b.make_store(new, running_max, [r])

            def exponentials(column, lanes: int) -> SSAValue:
                s = b.make_load(scores, [r, column], lanes)
                p = b.unary(tir.ExpOp, b.sub(s, self._splat(new, lanes)))
                p = b.select(self._is_minus_inf(s), self._zero(lanes), p)
                b.make_store(p, scores, [r, column], lanes)
                return p

            block_sum = self._reduce(count, exponentials, lambda bb, x, y: bb.add(x, y), tir.ReduceAddOp, 0.0)
            # exp(old - new), 1 when both are -inf (no finite score yet)
            alpha = b.select(
                b.binary(tir.EqOp, old, new), b.const(1.0, f32), b.unary(tir.ExpOp, b.sub(old, new))
            )
            total = b.add(b.mul(b.make_load(running_sum, [r]), alpha), block_sum)
            b.make_store(total, running_sum, [r])
            self._row_loop(self.dv, lambda c, lanes: b.make_store(
                b.mul(b.make_load(acc, [r, c], lanes), self._splat(alpha, lanes)), acc, [r, c], lanes))  # fmt: skip

    def _accumulate_values(self, batch_index, rows: int, key0, count: int, scores, acc) -> None:
        """acc[:rows] += P[:rows, :count] x v[key0:key0 + count]."""
        b, dv = self.b, self.dv
        v_batch = _batch_index(batch_index, self.batch, self.v.shape)

        def tile(row, col, m: int, n: int) -> None:
            a_view = b.tensor_ptr(scores, [row, 0], [(m - 1) * self.block_k + count])
            b_view = b.tensor_ptr(self.v.value, [*v_batch, key0, col], [(count - 1) * dv + n])
            c_view = b.tensor_ptr(acc, [row, col], [(m - 1) * dv + n])
            b.make_brgemm_tile(
                a_view, b_view, c_view, m=m, n=n, k=count, lanes=self.lanes,
                a_row=self.block_k, a_k=1, ldb=dv, ldc=dv, accumulate=True,
            )  # fmt: skip

        self._tiles(rows, dv, self.v_mr, self.v_nr, tile)

    def _finish(self, batch_index, row0, rows: int, acc, running_sum) -> None:
        kernel, b = self.kernel, self.b
        with b.make_for(0, rows, 1) as r:
            inverse = b.div(b.const(1.0, f32), b.make_load(running_sum, [r]))

            def store(column, lanes: int) -> None:
                value = b.mul(b.make_load(acc, [r, column], lanes), self._splat(inverse, lanes))
                kernel.store(self.out, [*batch_index, b.add(row0, r), column], value)

            self._row_loop(self.dv, store)

    # --- helpers ------------------------------------------------------------------------

    def _row_loop(self, count: int, body) -> None:
        """body(column, lanes) over [0, count): vectors, then a scalar tail."""
        b, lanes = self.b, self.lanes
        vector_end = count // lanes * lanes
        if vector_end:
            with b.make_for(0, vector_end, lanes) as column:
                body(column, lanes)
        if vector_end < count:
            with b.make_for(vector_end, count, 1) as column:
                body(column, 1)

    def _reduce(self, count: int, value_of, combine, across: type, identity: float) -> SSAValue:
        """combine over value_of(column, lanes) for columns [0, count): a
        vector accumulator, then across its lanes, then the scalar tail."""
        b, lanes = self.b, self.lanes
        vector_end = count // lanes * lanes
        total = b.make_var(f32, b.const(identity, f32))
        if vector_end:
            vector = b.make_var(VectorType(f32, [lanes]), self._splat(identity, lanes))
            with b.make_for(0, vector_end, lanes) as column:
                b.make_assign(vector, combine(b, b.read(vector), value_of(column, lanes)))
            b.make_assign(total, b.unary(across, b.read(vector), f32))
        if vector_end < count:
            with b.make_for(vector_end, count, 1) as column:
                b.make_assign(total, combine(b, b.read(total), value_of(column, 1)))
        return b.read(total)

    def _splat(self, value: float | SSAValue, lanes: int) -> SSAValue:
        if isinstance(value, float):
            return self.b.const(value, f32 if lanes == 1 else VectorType(f32, [lanes]))
        if lanes == 1:
            return value
        return self.b.unary(tir.BroadcastOp, value, VectorType(f32, [lanes]))

    def _zero(self, lanes: int) -> SSAValue:
        return self._splat(0.0, lanes)

    def _is_minus_inf(self, value: SSAValue) -> SSAValue:
        lanes = tir.lanes_of(value.type)
        return self.b.binary(tir.EqOp, value, self._splat(-math.inf, lanes))


def attention(kernel: Kernel, op: graph.AttentionOp) -> None:
    AttentionKernel(kernel, op).emit()

