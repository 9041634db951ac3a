"""Widening matmuls on small values packed into i32 words: PackedMatmul's
blocking and loop nest, with operands packed two or four K steps to an i32
and the generated microkernels on them (runtime/microkernels.py): pairs of
integers of at most 16 bits into i32 (`vpmaddwd`), bf16 pairs into f32
where the target has AVX512-BF16 (`vdpbf16ps`), and u8 x s8 byte quads
into i32 where it has VNNI (`vpdpbusd`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerType,
    VectorType,
)
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.ir.element_types import bit_width
from graphcompiler.lowering.graph_to_tir.kernel import PARALLEL_MIN_ELEMENTS, Operand
from graphcompiler.lowering.graph_to_tir.matmul import PackedMatmul, _fill_panels, unflatten
from graphcompiler.runtime.amx_tiles import has_amx
from graphcompiler.target.schedules import AMX_TILE_WORDS, MatmulSchedule

i32 = IntegerType(32)


class PackedWordsMatmul(PackedMatmul):
    """A widening matmul on `values_per_word` values packed to an i32 (K
    steps per * l to per * l + per - 1, the lowest first; K padded with
    zeros): the schedule is the f32 one over the words (the same 4-byte
    elements), or whole AMX tiles of them where the target multiplies the
    words' kind on tiles. A constant B (weights) is packed at compile time,
    any other per call; A per call."""

    accumulator = i32
    scratch_registers = 0
    """Registers the product needs beside the accumulators."""
    values_per_word = 2
    """K steps packed into one i32 (the lowest first)."""
    word_dtype: type = np.int16
    """One packed value (the bits of a constant's elements)."""
    tile_kind = ""
    """The words' kind on AMX tiles (runtime/amx_tiles.py), "" if none."""

    def __init__(self, kernel, a, b_, out, transposes, epilogue, row_multiple: int = 1):
        self.k_values = a.shape[-2] if transposes[0] else a.shape[-1]
        super().__init__(kernel, a, b_, out, transposes, epilogue, row_multiple=row_multiple)
        self.words = math.ceil(self.k_values / self.values_per_word)
        *batch, m, n = out.shape
        constant_b = self.packs_b_at_compile_time()
        if self.tile_kind and has_amx(kernel.target, self.tile_kind):
            # whole tiles of K: the packed words past K are zeros
            self.amx_tiles = True
            self.k = AMX_TILE_WORDS * math.ceil(self.words / AMX_TILE_WORDS)
            self.schedule = MatmulSchedule.for_amx_tiles(
                kernel.target, math.prod(batch), m, n, self.k, constant_b
            ).with_row_blocks_of(m, row_multiple)
            return
        self.k = self.words
        self.schedule = MatmulSchedule.for_shape(
            kernel.target,
            math.prod(batch),
            m,
            n,
            self.k,
            scratch_registers=self.scratch_registers,
            constant_b=constant_b,
        ).with_row_blocks_of(m, row_multiple)

    def reads_a_in_place(self) -> bool:
        return False

    def packs_a_at_compile_time(self) -> bool:
        return False

    def packs_a_in_groups(self) -> bool:
        return False

    def _packed_b(self) -> tuple[SSAValue, list[int]]:
        """B as word panels [*batch_b, panels, words, nr]: packed at compile
        time when constant, else per call (columns past N zero)."""
        s, n, panels = self.schedule, self.n, math.ceil(self.n / self.schedule.nr)
        batch_b = self.b_in.shape[:-2]
        if isinstance(self.b_in.constant, DenseIntOrFPElementsAttr):
            return self._packed_constant(panels), batch_b
        kernel, b = self.kernel, self.b
        packed = b.make_tensor([*batch_b, panels, self.k, s.nr], i32)
        outer = [*batch_b, panels]
        parallel = (
            math.prod(outer) > 1 and math.prod(outer) * self.k * s.nr >= PARALLEL_MIN_ELEMENTS
        )
        with kernel.loop_nest([math.prod(outer)], parallel) as (flat,):
            *batch_index, panel = unflatten(kernel, flat, outer)
            with b.make_for(0, s.nr, 1) as j:
                column = b.add(b.mul(panel, s.nr), j)
                inside = b.binary(tir.LtOp, column, n)
                safe = b.select(inside, column, 0)

                def at(depth, safe=safe, batch_index=batch_index) -> list:
                    inner = (safe, depth) if self.transpose_b else (depth, safe)
                    return [*batch_index, *inner]

                with b.make_for(0, self.words, 1) as word:
                    value = b.select(inside, self._word(self.b_in, at, word), 0)
                    b.make_store(value, packed, [*batch_index, panel, word, j])
                self._zero_words(packed, lambda word: [*batch_index, panel, word, j])
        return packed, batch_b

    def _zero_words(self, packed, at: Callable) -> None:
        """Zeros in the packed words past K's (whole AMX tiles of K)."""
        if self.words < self.k:
            with self.b.make_for(self.words, self.k, 1) as word:
                self.b.make_store(self.b.const(0, i32), packed, at(word))

    @property
    def value_bits(self) -> int:
        return 32 // self.values_per_word

    def _bits(self, value: SSAValue) -> SSAValue:
        """The bits of an element (as loaded, in its compute type) at the
        bottom of an i32."""
        mask = (1 << self.value_bits) - 1
        return self.b.binary(tir.IntAndOp, self.b.cast(value, i32), mask)

    def _constant_bits(self, values: np.ndarray) -> np.ndarray:
        """A constant's elements as `word_dtype` (their bits)."""
        return values.astype(self.word_dtype)

    def _word(self, source: Operand, at: Callable, word: SSAValue) -> SSAValue:
        """The i32 of K steps per * word (lowest bits) to per * word + per -
        1 of `source` at `at(depth)` (0 past K)."""
        b, kernel, per = self.b, self.kernel, self.values_per_word

        def bits(depth) -> SSAValue:
            return self._bits(kernel.load(source, at(depth)))

        first = b.mul(word, per)
        packed = bits(first)
        for step in range(1, per):
            depth = b.add(first, step)
            if self.k_values % per:
                inside = b.binary(tir.LtOp, depth, self.k_values)
                value = b.select(inside, bits(b.select(inside, depth, first)), 0)
            else:
                value = bits(depth)
            shifted = b.binary(tir.ShlOp, value, step * self.value_bits)
            packed = b.binary(tir.IntOrOp, packed, shifted)
        return packed

    def _packed_constant(self, panels: int) -> SSAValue:
        k_values, nr, transpose_b = self.k_values, self.schedule.nr, self.transpose_b
        per = self.values_per_word

        def pack(values: np.ndarray) -> np.ndarray:
            if transpose_b:
                values = np.swapaxes(values, -1, -2)
            *batch, _, n = values.shape
            whole = np.zeros((*batch, per * self.k, n), self.word_dtype)
            whole[..., :k_values, :] = self._constant_bits(values)
            grouped = whole.reshape(*batch, -1, per, n).swapaxes(-1, -2).copy()
            words = grouped.view(np.int32)[..., 0]
            packed = tir.aligned_zeros((*batch, panels, words.shape[-2], nr), np.int32)
            _fill_panels(np.swapaxes(packed, -3, -2), words)
            return packed

        return self.kernel.packed_constant(self.b_in, "packed_b", pack)

    def _packed_a(self) -> SSAValue:
        """A as [*batch_a, groups, mr, row stride] words: A[r, per * l] in
        the lowest bits, up to A[r, per * l + per - 1] (0 past K)."""
        s, m, words, per = self.schedule, self.m, self.words, self.values_per_word
        kernel, b, source = self.kernel, self.b, self.a
        batch_a = source.shape[:-2]
        packed = b.make_tensor([*batch_a, math.ceil(m / s.mr), s.mr, self.a_row_stride()], i32)
        rows = [*batch_a, m]
        parallel = math.prod(rows) > 1 and math.prod(rows) * words >= PARALLEL_MIN_ELEMENTS * 2
        with kernel.loop_nest([math.prod(rows)], parallel) as (flat,):
            *batch_index, row = unflatten(kernel, flat, rows)
            target = [*batch_index, b.div(row, s.mr), b.mod(row, s.mr)]

            def at(depth) -> list:
                inner = (depth, row) if self.transpose_a else (row, depth)
                return [*batch_index, *inner]

            scalar_from = words // s.lanes * s.lanes if self._words_in_place() else 0
            if scalar_from:  # the words are A's own bytes: vector copies
                with b.make_for(0, scalar_from, s.lanes) as word:
                    indices = kernel.physical(source, at(b.mul(word, per)))
                    parts = b.make_load(source.value, indices, per * s.lanes)  # bits as stored
                    value = b.unary(tir.ReinterpretOp, parts, VectorType(i32, [s.lanes]))
                    b.make_store(value, packed, [*target, word], s.lanes)
            if scalar_from < words:
                with b.make_for(scalar_from, words, 1) as word:
                    b.make_store(self._word(source, at, word), packed, [*target, word])
            self._zero_words(packed, lambda word: [*target, word])
        return packed

    def _words_in_place(self) -> bool:
        """Whether A's rows already hold its words: values of the packed
        width, K contiguous and a multiple of the values per word."""
        return (
            bit_width(self.a.element) == self.value_bits
            and not self.transpose_a
            and not self.a.blocked
            and self.k_values % self.values_per_word == 0
        )


class Int16PairsMatmul(PackedWordsMatmul):
    """A widening integer matmul (operands of at most 16 bits, an i32
    result) on i16 pairs: the microkernels multiply and add pairs
    (`vpmaddwd`) into i32 tiles: exact, and twice the products per
    instruction of f32."""

    scratch_registers = 1  # vpmaddwd cannot add to its operand


class Bf16PairsMatmul(PackedWordsMatmul):
    """A widening bf16 matmul (bf16 operands, an f32 result) on bf16 pairs
    for targets with AMX-BF16 or AVX512-BF16: the layout of the i16 pairs,
    multiplied and added into f32 tiles by `tdpbf16ps` or `vdpbf16ps`, the
    sums in f32."""

    accumulator = Float32Type()
    tile_kind = "bf16"

    def _bits(self, value: SSAValue) -> SSAValue:
        """A bf16 value (loaded as the f32 it widens to exactly) is the high
        half of that f32's bits."""
        bits = self.b.unary(tir.ReinterpretOp, value, i32)
        return self.b.binary(tir.IntAndOp, self.b.binary(tir.ShrOp, bits, 16), 0xFFFF)

    def _constant_bits(self, values: np.ndarray) -> np.ndarray:
        """bf16 values (exact in f32) as their 16 bits."""
        return (
            (np.ascontiguousarray(values, np.float32).view(np.uint32) >> 16)
            .astype(np.uint16)
            .view(np.int16)
        )


class U8S8QuadsMatmul(PackedWordsMatmul):
    """A widening u8 x s8 matmul (an i32 result) on byte quads for targets
    with AMX-INT8 or VNNI: A (u8) and B (s8) packed four K steps to an i32,
    multiplied and added into i32 tiles by `tdpbusd` or `vpdpbusd` (four
    times the products per instruction of an f32 FMA, exact).
    graph-integer-matmul makes every 8-bit matmul u8 x s8."""

    values_per_word = 4
    word_dtype = np.int8
    tile_properties = {"u8_s8_quads": True}
    tile_kind = "u8s8"
