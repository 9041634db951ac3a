"""graph.attention as one kernel: online softmax over key blocks, with the
scores laid out key-major so the softmax never reduces across lanes.

What: out = softmax(q kᵀ * scale + mask) v (see graph.AttentionOp).
How (FlashAttention's schedule on brgemm tiles, transposed):
- parallel over (batch, query block of `block_q` queries, a multiple of
  the vector width); per item, q's block is packed once as
  qᵀ * scale [D, block_q] (the scale folded in: one multiply per q
  element instead of one per score);
- for each key block of `block_k` keys:
  1. Sᵀ = k_block x qᵀ [block_k, block_q] with brgemm tiles reading k's
     rows in place (a pre-transposed k is read with swapped strides), so
     k is never packed; the mask is added;
  2. one vector holds L queries: the block max is an element-wise max
     down the keys, then p = exp(s - max) written over Sᵀ with an
     element-wise running sum. Every row statistic stays in lanes: no
     horizontal reduction, no serial chain per query;
  3. acc [block_q, Dv] is rescaled by exp(m_old - m_new) (not for the
     first block, which overwrites acc), then acc += P x v_block with
     brgemm tiles whose A is Sᵀ read with swapped strides;
- out = acc / sum. The Sq x Sk scores are never stored whole.
A sequence-major operand or result ([..., S, H, D], exporters' layout
before the head split) is read and written in place: its rows are H * D
apart instead of D (`_at`, `_row_stride`), which the tiles take as strides.
A key whose score is -inf contributes exactly 0 (so a row masked in one
block and not in another is right); a row with no finite score, +inf or
NaN ends NaN, as softmax gives. Folding the scale into q rounds
(q * scale) . k instead of (q . k) * scale: the same to within an ulp
of each product.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, IndexType, TensorType, VectorType
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.graph.normalization import (
    ATTENTION_ROLES,
    head_groups,
    swap_heads_and_sequence,
)
from graphcompiler.lowering.graph_to_tir.kernel import (
    PARALLEL_MIN_ELEMENTS,
    Kernel,
    Operand,
    broadcast_indices,
)
from graphcompiler.lowering.graph_to_tir.matmul import unflatten
from graphcompiler.lowering.graph_to_tir.reductions import nan_max
from graphcompiler.target.schedules import MatmulSchedule

f32 = Float32Type()

KEY_BLOCK_MAX = 128
"""The most keys per block (a longer block only adds rescaling work saved)."""


def keys_per_block(target, block_q: int, dv: int, sk: int) -> int:
    """Keys per block: Sᵀ (keys x block_q) and the v block (keys x dv) that
    P x v reads together fit in 3/4 of L1, so neither streams from L2 in
    the softmax passes and the P x v tiles; a multiple of the vector lanes.
    With 8 lanes (32 queries, dv 64, 32 KiB L1) that is 64 keys, which ran
    2-10% faster than 128 on the bench's attention at 128 and 512 tokens."""
    lanes = target.f32_lanes
    fitting = target.l1_bytes * 3 // 4 // ((block_q + dv) * 4) // lanes * lanes
    return min(sk, max(lanes, min(KEY_BLOCK_MAX, fitting)))


class AttentionKernel:
    def __init__(self, kernel: Kernel, op: graph.AttentionOp):
        self.kernel, self.b = kernel, kernel.b
        self.scale = op.scale_value
        self.key_transposed = op.key_is_transposed
        self.zero_nan_probabilities = op.zeroes_nan_probabilities
        self.q, self.k, self.v = kernel.inputs[:3]
        self.mask = kernel.inputs[3] if len(kernel.inputs) == 4 else None
        self.out = kernel.out
        self.sequence_major = {role for role in ATTENTION_ROLES if op.is_sequence_major(role)}
        self.shapes = {  # [..., H, S, D], whatever the layout
            role: swap_heads_and_sequence(t.shape) if role in self.sequence_major else t.shape
            for role, t in zip(ATTENTION_ROLES, (self.q, self.k, self.v, self.out), strict=True)
        }
        *self.batch, self.sq, self.dv = self.shapes["result"]
        self.d = self.q.shape[-1]
        self.sk = self.shapes["value"][-2]
        target = kernel.target
        self.lanes = lanes = target.f32_lanes
        self.block_q = min(-(-self.sq // lanes) * lanes, 4 * lanes)
        self.block_k = keys_per_block(target, self.block_q, self.dv, self.sk)
        rows, vectors = MatmulSchedule.register_tile(target, self.block_q)
        self.mr, self.nr = rows, vectors * lanes
        v_rows, v_vectors = MatmulSchedule.register_tile(target, self.dv, self.block_q)
        self.v_mr, self.v_nr = v_rows, v_vectors * lanes

    def _batch_index(self, role: str, batch_index: list) -> list:
        """`role`'s batch indices for the output's `batch_index`: broadcast,
        and a grouped key's or value's head is the query head // group."""
        shape = self.shapes[role]
        index = broadcast_indices(batch_index, self.batch, shape[:-2])
        groups = head_groups(self.shapes["query"], shape) if role != "query" else 1
        if groups > 1:
            index[-1] = self.b.div(index[-1], groups)
        return index

    def _at(self, role: str, batch_index: list, row, column) -> list:
        """Where element [*batch_index, row, column] of `role` is stored."""
        if role in self.sequence_major:
            return [*batch_index[:-1], row, batch_index[-1], column]
        return [*batch_index, row, column]

    def _row_stride(self, role: str) -> int:
        """Elements from one sequence position of `role` to the next."""
        shape = self.shapes[role]
        return shape[-1] * (shape[-3] if role in self.sequence_major else 1)

    def emit(self) -> None:
        if 0 in self.out.shape:
            return
        kernel, b = self.kernel, self.b
        if self.sk == 0:  # no keys: each output is an empty sum, 0, as in matmul(softmax(s), v)
            kernel.for_each(self.out.shape, lambda index, lanes: kernel.store(
                self.out, index, self._splat(0.0, lanes)))  # fmt: skip
            return
        # the brgemm tiles read k and v where they lie, in f32
        self.k, self.v = (self._in_f32(operand) for operand in (self.k, self.v))
        query_blocks = math.ceil(self.sq / self.block_q)
        grid = [*self.batch, query_blocks]
        work = math.prod(self.batch) * self.sq * self.sk * (self.d + self.dv)
        parallel = math.prod(grid) > 1 and work >= PARALLEL_MIN_ELEMENTS * 16
        with kernel.loop_nest([math.prod(grid)], parallel) as (flat,):
            *batch_index, query_block = unflatten(kernel, flat, grid)
            row0 = b.mul(query_block, self.block_q)
            last = self.sq - (query_blocks - 1) * self.block_q
            if last == self.block_q:
                self._query_block(batch_index, row0, self.block_q)
            else:
                branch = b.make_if(
                    b.binary(tir.EqOp, query_block, query_blocks - 1), with_else=True
                )
                with b.at_end_of(branch.then_region.block):
                    self._query_block(batch_index, row0, last)
                with b.at_end_of(branch.else_region.block):
                    self._query_block(batch_index, row0, self.block_q)

    def _in_f32(self, operand: Operand) -> Operand:
        """`operand`, or an f32 copy of it when its elements are narrower
        (f16, bf16: the f32 microkernels took their bits as floats: NaN)."""
        if operand.element == f32:
            return operand
        kernel, shape = self.kernel, operand.shape
        copy = Operand(self.b.make_tensor(shape, f32), TensorType(f32, shape))
        kernel.for_each(shape, lambda index, lanes: kernel.store(
            copy, index, kernel.load(operand, index, lanes)))  # fmt: skip
        return copy

    def _query_block(self, batch_index: list, row0, rows: int) -> None:
        """Queries [row0, row0 + rows) of one batch entry, over every key block."""
        b = self.b
        width = -(-rows // self.lanes) * self.lanes  # the query lanes computed
        state = _BlockState(
            queries=self._packed_queries(batch_index, row0, rows, width),
            scores=b.make_tensor([self.block_k, self.block_q], f32),
            acc=b.make_tensor([self.block_q, self.dv], f32),
            running_max=b.make_tensor([self.block_q], f32),
            running_sum=b.make_tensor([self.block_q], f32),
            alpha=b.make_tensor([self.block_q], f32),
            rows=rows,
            width=width,
        )
        for offset in range(0, width, self.lanes):
            b.make_store(
                self._splat(-math.inf, self.lanes), state.running_max, [offset], self.lanes
            )
            b.make_store(self._splat(0.0, self.lanes), state.running_sum, [offset], self.lanes)
        full_blocks, tail = divmod(self.sk, self.block_k)
        with b.make_for(0, full_blocks, 1) as block:
            self._key_block(batch_index, row0, b.mul(block, self.block_k), self.block_k, state)
        if tail:
            first = b.value(full_blocks * self.block_k, IndexType())
            self._key_block(batch_index, row0, first, tail, state)
        self._finish(batch_index, row0, state)

    def _packed_queries(self, batch_index: list, row0, rows: int, width: int) -> SSAValue:
        """qᵀ * scale as [D, block_q]: the scores' B operand; query lanes past
        `rows` are zero (their scores are computed and never stored)."""
        b, kernel = self.b, self.kernel
        packed = b.make_tensor([self.d, self.block_q], f32)
        q_batch = self._batch_index("query", batch_index)
        scale = b.const(self.scale, f32)
        with b.make_for(0, self.d, 1) as feature:
            with b.make_for(0, rows, 1) as j:
                value = kernel.load(self.q, self._at("query", q_batch, b.add(row0, j), feature))
                b.make_store(b.mul(value, scale), packed, [feature, j])
            if width > rows:
                with b.make_for(rows, width, 1) as j:
                    b.make_store(b.const(0.0, f32), packed, [feature, j])
        return packed

    def _key_block(self, batch_index, row0, key0, count: int, state: _BlockState) -> None:
        self._scores(batch_index, row0, key0, count, state)
        self._softmax_update(count, state)
        later = self.b.binary(tir.GtOp, key0, self.b.value(0, IndexType()))
        branch = self.b.make_if(later)
        with self.b.at_end_of(branch.then_region.block):
            self._rescale(state)
        self._accumulate_values(batch_index, key0, count, state, later)

    def _scores(self, batch_index, row0, key0, count: int, state: _BlockState) -> None:
        """Sᵀ[:count, :width] = k[key0:key0 + count] x qᵀ (+ mask)."""
        b, d, bq = self.b, self.d, self.block_q
        k_batch = self._batch_index("key", batch_index)
        if d == 0:  # an empty head dimension: every score is 0 (a brgemm needs k > 0)
            with b.make_for(0, count, 1) as key:
                for offset in range(0, state.width, self.lanes):
                    b.make_store(
                        self._splat(0.0, self.lanes), state.scores, [key, offset], self.lanes
                    )
        else:
            # A[key, feature] is k[key, feature], or kᵀ[feature, key] when pre-transposed
            # (read in place: packing kᵀ's key blocks into groups ran 10% slower)
            a_row, a_k = (1, self.sk) if self.key_transposed else (self._row_stride("key"), 1)

            def tile(row, col, m: int, n: int) -> None:
                if self.key_transposed:
                    start = [*k_batch, 0, b.add(key0, row)]
                else:
                    start = self._at("key", k_batch, b.add(key0, row), 0)
                extent = (m - 1) * a_row + (d - 1) * a_k + 1
                a_view = b.tensor_ptr(self.k.value, start, [extent])
                b_view = b.tensor_ptr(state.queries, [0, col], [(d - 1) * bq + n])
                c_view = b.tensor_ptr(state.scores, [row, col], [(m - 1) * bq + n])
                b.make_brgemm_tile(
                    a_view, b_view, c_view, m=m, n=n, k=d, lanes=self.lanes,
                    a_row=a_row, a_k=a_k, ldb=bq, ldc=bq,
                )  # fmt: skip

            _tiles(b, count, state.width, self.mr, self.nr, tile)
        if self.mask is not None:
            self._add_mask(batch_index, row0, key0, count, state)

    def _add_mask(self, batch_index, row0, key0, count: int, state: _BlockState) -> None:
        """Sᵀ += mask: a vector per key when the mask is the same for every
        query (a key-padding mask), else element by element."""
        b, kernel, lanes = self.b, self.kernel, self.lanes
        full = [*self.batch, self.sq, self.sk]
        per_query = len(self.mask.shape) >= 2 and self.mask.shape[-2] != 1
        with b.make_for(0, count, 1) as key:
            if not per_query:
                value = kernel.load(self.mask, [*batch_index, 0, b.add(key0, key)], 1, full)
                splat = self._splat(value, lanes)
                for offset in range(0, state.width, lanes):
                    at = [key, offset]
                    b.make_store(
                        b.add(b.make_load(state.scores, at, lanes), splat), state.scores, at, lanes
                    )
                return
            with b.make_for(0, state.rows, 1) as j:
                value = kernel.load(
                    self.mask, [*batch_index, b.add(row0, j), b.add(key0, key)], 1, full
                )
                b.make_store(
                    b.add(b.make_load(state.scores, [key, j]), value), state.scores, [key, j]
                )

    def _softmax_update(self, count: int, state: _BlockState) -> None:
        """Fold the block into each query's running max and sum (lane-wise),
        turn the scores into p = exp(s - max), keep exp(m_old - m_new) in alpha."""
        b, lanes = self.b, self.lanes
        offsets = range(0, state.width, lanes)
        vector = VectorType(f32, [lanes])
        maxima = [b.make_var(vector, self._splat(-math.inf, lanes)) for _ in offsets]
        with b.make_for(0, count, 1) as key:
            for var, offset in zip(maxima, offsets, strict=True):
                b.make_assign(
                    var, nan_max(b, b.read(var), b.make_load(state.scores, [key, offset], lanes))
                )
        new_maxima = []
        for var, offset in zip(maxima, offsets, strict=True):
            old = b.make_load(state.running_max, [offset], lanes)
            new = nan_max(b, old, b.read(var))
            b.make_store(new, state.running_max, [offset], lanes)
            # exp(old - new), 1 when both are -inf (no finite score yet)
            alpha = b.select(b.binary(tir.EqOp, old, new), self._splat(1.0, lanes),
                             b.unary(tir.ExpOp, b.sub(old, new)))  # fmt: skip
            b.make_store(alpha, state.alpha, [offset], lanes)
            new_maxima.append(new)
        sums = [b.make_var(vector, self._splat(0.0, lanes)) for _ in offsets]
        with b.make_for(0, count, 1) as key:
            for var, new, offset in zip(sums, new_maxima, offsets, strict=True):
                s = b.make_load(state.scores, [key, offset], lanes)
                p = b.unary(tir.ExpOp, b.sub(s, new))
                p = b.select(
                    b.binary(tir.EqOp, s, self._splat(-math.inf, lanes)), self._splat(0.0, lanes), p
                )
                b.make_store(p, state.scores, [key, offset], lanes)
                b.make_assign(var, b.add(b.read(var), p))
        for var, offset in zip(sums, offsets, strict=True):
            alpha = b.make_load(state.alpha, [offset], lanes)
            total = b.add(
                b.mul(b.make_load(state.running_sum, [offset], lanes), alpha), b.read(var)
            )
            b.make_store(total, state.running_sum, [offset], lanes)

    def _rescale(self, state: _BlockState) -> None:
        """acc[j] *= alpha[j]: the earlier blocks' p were relative to an older max."""
        b = self.b
        with b.make_for(0, state.rows, 1) as j:
            alpha = b.make_load(state.alpha, [j])
            _row_loop(b, self.lanes, self.dv, lambda c, lanes: b.make_store(
                b.mul(b.make_load(state.acc, [j, c], lanes), self._splat(alpha, lanes)),
                state.acc, [j, c], lanes))  # fmt: skip

    def _accumulate_values(self, batch_index, key0, count: int, state: _BlockState, later) -> None:
        """acc[:rows] (+)= P x v[key0:key0 + count], P read from Sᵀ; the first
        block overwrites acc (`later` is false)."""
        b, dv, bq = self.b, self.dv, self.block_q
        v_batch = self._batch_index("value", batch_index)
        ldv = self._row_stride("value")

        def tile(row, col, m: int, n: int) -> None:
            a_view = b.tensor_ptr(state.scores, [0, row], [(count - 1) * bq + m])
            b_view = b.tensor_ptr(
                self.v.value, self._at("value", v_batch, key0, col), [(count - 1) * ldv + n]
            )
            c_view = b.tensor_ptr(state.acc, [row, col], [(m - 1) * dv + n])
            b.make_brgemm_tile(
                a_view, b_view, c_view, accumulate_if=later, m=m, n=n, k=count,
                lanes=self.lanes, a_row=1, a_k=bq, ldb=ldv, ldc=dv,
            )  # fmt: skip

        _tiles(b, state.rows, dv, self.v_mr, self.v_nr, tile)

    def _finish(self, batch_index, row0, state: _BlockState) -> None:
        """out = acc / sum; with zero_nan_probabilities, a row whose max is
        not finite (only -inf scores, or +inf or NaN ones: softmax makes the
        whole row NaN) is sum_k 0 * v_k instead."""
        kernel, b = self.kernel, self.b
        with b.make_for(0, state.rows, 1) as j:
            inverse = b.div(b.const(1.0, f32), b.make_load(state.running_sum, [j]))

            def store(column, lanes: int) -> None:
                value = b.mul(
                    b.make_load(state.acc, [j, column], lanes), self._splat(inverse, lanes)
                )
                kernel.store(
                    self.out, self._at("result", batch_index, b.add(row0, j), column), value
                )

            if self.zero_nan_probabilities:
                most = b.make_load(state.running_max, [j])
                finite = b.binary(
                    tir.AndOp,
                    b.binary(tir.GtOp, most, b.const(-math.inf, f32)),
                    b.binary(tir.LtOp, most, b.const(math.inf, f32)),
                )
                branch = b.make_if(finite, with_else=True)
                with b.at_end_of(branch.then_region.block):
                    _row_loop(b, self.lanes, self.dv, store)
                with b.at_end_of(branch.else_region.block):
                    self._zero_weighted_values(batch_index, b.add(row0, j))
            else:
                _row_loop(b, self.lanes, self.dv, store)

    def _zero_weighted_values(self, batch_index, row) -> None:
        """out[row] = sum over every key of 0 * v: 0, or NaN under an inf or NaN value."""
        kernel, b = self.kernel, self.b
        v_batch = self._batch_index("value", batch_index)

        def store(column, lanes: int) -> None:
            zero = self._splat(0.0, lanes)
            total = b.make_var(f32 if lanes == 1 else VectorType(f32, [lanes]), zero)
            with b.make_for(0, self.sk, 1) as key:
                value = kernel.load(self.v, self._at("value", v_batch, key, column), lanes)
                b.make_assign(total, b.add(b.read(total), b.mul(value, zero)))
            kernel.store(self.out, self._at("result", batch_index, row, column), b.read(total))

        _row_loop(b, self.lanes, self.dv, store)

    def _splat(self, value: float | SSAValue, lanes: int) -> SSAValue:
        if isinstance(value, float):
            return self.b.const(value, f32 if lanes == 1 else VectorType(f32, [lanes]))
        if lanes == 1:
            return value
        return self.b.unary(tir.BroadcastOp, value, VectorType(f32, [lanes]))


class _BlockState:
    """One query block's scratch: packed queries, scores, accumulator and
    the per-query running max, sum and rescale factor."""

    def __init__(self, *, queries, scores, acc, running_max, running_sum, alpha, rows, width):
        self.queries, self.scores, self.acc = queries, scores, acc
        self.running_max, self.running_sum, self.alpha = running_max, running_sum, alpha
        self.rows, self.width = rows, width


def _tiles(b, rows: int, cols: int, mr: int, nr: int, tile) -> None:
    """tile(row, col, m, n) over a rows x cols matrix in mr x nr tiles."""
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


def _row_loop(b, lanes: int, count: int, body) -> None:
    """body(column, lanes) over [0, count): vectors, then a scalar tail."""
    vector_end = count // lanes * lanes
    if vector_end:
        with b.make_for(0, vector_end, lanes) as column:
            body(column, lanes)
    if vector_end < count:
        with b.make_for(vector_end, count, 1) as column:
            body(column, 1)


def attention(kernel: Kernel, op: graph.AttentionOp) -> None:
    AttentionKernel(kernel, op).emit()
