"""Schedules: how kernels are tiled and blocked, derived only from the
target description (vector lanes, register file, caches, cores) and the
shapes, never from the machine compiling, so the same target gives the
same code on every host.

`MatmulSchedule` blocks a GEMM as BLIS and oneDNN do: a register tile
mr x nr (nr = vectors x lanes) for the brgemm microkernel, a K block kc
whose B panel slice stays in L1, and mc x nc output blocks sized against
L2 and cut to give every core work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from graphcompiler.target.description import Target

PARALLEL_MIN_ELEMENTS = 1 << 14
"""Below this many elements a loop nest stays serial: the thread pool's
start-up would cost more than it saves."""

MAX_TILE_ROWS = 14
FULL_TILE_FMAS = 24
"""Accumulators past this many hide no more FMA latency (measured)."""
NEAR_BEST = 0.98
"""Tiles this close to the most useful FMAs per step count as as useful."""
MIN_KC = 256
"""K steps below which the C tile's load and store per K block (and the
microkernel's start) cost more than a few percent of the tile's FMAs."""
MAX_K_CUTS_TRIED = 256
"""K cuts for_shape tries beyond the fewest (every cut down to MIN_KC for
K up to 64 Ki): a K of 2^31 made it try eight million (28 s of a compile)."""


AMX_TILE_ROWS = 16
"""Rows of an AMX tile (and 32-bit columns of its 64-byte rows)."""
AMX_TILE_WORDS = 16
"""K words (4 bytes: two bf16, four int8) of one A tile row and B tile."""


@dataclass(frozen=True)
class MatmulSchedule:
    """Register tile mr x nr (nr = vectors x lanes) and cache blocks."""

    mr: int
    nr: int
    lanes: int
    kc: int
    mc: int
    nc: int

    def with_row_blocks_of(self, m: int, multiple: int) -> MatmulSchedule:
        """This schedule with mc rounded up to a multiple of `multiple`
        (which divides m), so that every M block starts and ends on one."""
        if multiple <= 1:
            return self
        return replace(self, mc=min(m, multiple * math.ceil(self.mc / multiple)))

    def k_blocks(self, k: int) -> list[tuple[int, int]]:
        """(count, rows) of the K blocks: `count` blocks of kc rows, then one
        of the rest of K when kc does not divide it."""
        full, rest = divmod(k, self.kc)
        return [(count, rows) for count, rows in ((full, self.kc), (1, rest)) if count and rows]

    @staticmethod
    def register_tile(
        target: Target,
        n: int,
        m: int | None = None,
        scratch_registers: int = 0,
        k: int | None = None,
    ) -> tuple[int, int]:
        """(rows, vectors) of the register tile: accumulators, B vectors,
        the broadcast A and `scratch_registers` (an integer product, which
        cannot accumulate in place as an FMA does) fit the register file; the most useful FMAs per step
        win (measured: 6x4 or 8x3 vectors beat 4x4 by 5-10% on AVX-512),
        discounted when a step issues fewer than 1.5 FMAs per load (rows
        broadcasts + `vectors` B loads) and by the ragged tails left in M and
        N. Given `k` (B is weights, streamed from L2 in K blocks of up to a
        quarter of it), a tile within NEAR_BEST of the best with more rows,
        whose A rows (rows x kc) stay in L1, is taken instead (the most such
        rows): each B vector then feeds more FMAs (ViT-B/16, 197 tokens: 9x3 ran the model 10% faster than
        6x4; 14x2, whose A rows spill from L1, 12% slower)."""
        lanes, useful_vectors = target.f32_lanes, max(1, math.ceil(n / target.f32_lanes))
        candidates = []  # (useful FMAs per step, rows if its A rows fit L1 else 0, -loads, tile)
        for vectors in range(1, min(4, useful_vectors) + 1):
            free = target.vector_registers - vectors - 1 - scratch_registers
            most_rows = min(MAX_TILE_ROWS, free // vectors)
            kc = None
            if k is not None:
                kc = math.ceil(k / math.ceil(k / MatmulSchedule.kc_limit(target, vectors)))
            for rows in range(1, min(most_rows, m or most_rows) + 1):
                fmas, loads = rows * vectors, rows + vectors
                covered = n / (math.ceil(n / (vectors * lanes)) * vectors * lanes)
                if m is not None:
                    covered *= m / (math.ceil(m / rows) * rows)
                useful = covered * min(1.0, fmas / (1.5 * loads)) * min(fmas, FULL_TILE_FMAS)
                fits = kc is not None and rows * kc * 4 <= target.l1_bytes
                candidates.append((round(useful, 1), rows if fits else 0, -loads, (rows, vectors)))
        best = max(candidates, key=lambda c: (c[0], c[2]))
        deeper = [c for c in candidates if c[0] >= NEAR_BEST * best[0] and c[1] > best[3][0]]
        return max(deeper, key=lambda c: (c[1], c[0], c[2]))[3] if deeper else best[3]

    @staticmethod
    def kc_limit(target: Target, vectors: int) -> int:
        """The most K rows of a B panel slice (vectors x lanes wide) in a quarter of L2."""
        return max(64, target.l2_bytes // 4 // (vectors * target.f32_lanes * 4))

    @staticmethod
    def _rows_in_l2(target: Target, mr: int, kc: int) -> int:
        """Row groups of an A block (mc x kc) that fit three quarters of
        L2 (the rest: the B slice the tiles share)."""
        return max(1, target.l2_bytes * 3 // 4 // (kc * 4 * mr))

    @staticmethod
    def _blocks(
        target: Target,
        batch: int,
        m: int,
        n: int,
        k: int,
        mr: int,
        nr: int,
        kc: int,
        constant_b: bool,
    ) -> tuple[int, int]:
        """How many blocks to cut M and N into. At least enough that the A
        block (mc x kc) fits beside the B slice in L2 and the B block
        (kc x nc) takes half of it, and with enough work 4 blocks per core
        (the thread pool balances them; `target.cores`, not this host's). Each block reads its A rows and its
        B columns over all of K, so among the cuts giving that many blocks
        the one reading the least is taken: every cut of N reads A once more,
        every cut of M reads B once more (MLAS cuts N when N > M for the same
        reason). A `constant_b` (weights, packed at compile time) counts
        twice: it is read from memory, where A was just written and is in
        cache (197x768x3072 on one thread: 98 GFLOP/s in 2 x 4 blocks, 110
        in 1 x 6)."""
        groups, panels = math.ceil(m / mr), math.ceil(n / nr)
        least_m = math.ceil(groups / MatmulSchedule._rows_in_l2(target, mr, kc))
        least_n = math.ceil(panels / max(1, min(8, target.l2_bytes // 2 // (kc * 4 * nr))))
        big = batch * m * n * k >= PARALLEL_MIN_ELEMENTS * 64
        wanted = 4 * target.cores if big else 1

        def count(blocks_m: int, blocks_n: int) -> int:
            """Blocks there really are (mc and nc are whole tiles)."""
            rows, cols = math.ceil(groups / blocks_m), math.ceil(panels / blocks_n)
            return batch * math.ceil(groups / rows) * math.ceil(panels / cols)

        best, best_cost = (least_m, least_n), None
        for blocks_m in range(least_m, groups + 1):
            blocks_n = least_n
            while blocks_n < panels and count(blocks_m, blocks_n) < wanted:
                blocks_n += 1
            short = max(0, wanted - count(blocks_m, blocks_n))
            cost = (short, blocks_n * m * k + blocks_m * k * n * (2 if constant_b else 1))
            if best_cost is None or cost < best_cost:
                best, best_cost = (blocks_m, blocks_n), cost
            if blocks_n == least_n and not short:
                break  # more M blocks would only read B more often
        return best

    @staticmethod
    def for_shape(
        target: Target,
        batch: int,
        m: int,
        n: int,
        k: int,
        column_multiple: int = 1,
        scratch_registers: int = 0,
        constant_b: bool = False,
    ) -> MatmulSchedule:
        """`column_multiple`: nc is a multiple of it (and of nr), so every
        block's columns, the last one's too when it divides n, start and end
        on its multiples; `scratch_registers`: as register_tile's;
        `constant_b`: B is packed at compile time (weights)."""
        rows, vectors = MatmulSchedule.register_tile(
            target, n, m, scratch_registers, k if constant_b else None
        )
        mr, nr = min(rows, m), vectors * target.f32_lanes
        # the B panel's K block (kc x nr) in a quarter of L2, K cut evenly:
        # every K block reads and writes the C tile once more and restarts
        # the microkernel, which with kc sized to L1 (79 at 1024^3) cost a
        # fifth of the time (one thread, B in cache: 1024^3 90 -> 110
        # GFLOP/s, 197x768x3072 77 -> 85, 256x2048x512 96 -> 106); the
        # slice streams from L2 as well
        kc_limit = MatmulSchedule.kc_limit(target, vectors)
        groups, panels = math.ceil(m / mr), math.ceil(n / nr)

        def blocked(k_blocks: int) -> tuple[int, int, int]:
            kc = math.ceil(k / k_blocks)
            return kc, *MatmulSchedule._blocks(target, batch, m, n, k, mr, nr, kc, constant_b)

        # cutting M reads all of B (the weights) once more, cutting K only
        # the C block: K is cut further (kc >= MIN_KC) where that keeps M
        # whole (197x3072x768: 98 -> 110 GFLOP/s, kc 1024 -> 768)
        fewest = math.ceil(k / kc_limit)
        kc, blocks_m, blocks_n = blocked(fewest)
        most = min(math.ceil(k / MIN_KC), fewest + MAX_K_CUTS_TRIED)
        for more in range(fewest + 1, most + 1) if blocks_m > 1 else ():
            deeper = blocked(more)
            if deeper[1] == 1:
                kc, blocks_m, blocks_n = deeper
                break
        mc, nc = mr * math.ceil(groups / blocks_m), nr * math.ceil(panels / blocks_n)
        unit = math.lcm(nr, column_multiple)
        nc = min(unit * math.ceil(nc / unit), unit * math.ceil(n / unit))
        return MatmulSchedule(mr, nr, target.f32_lanes, kc, mc, nc)

    @staticmethod
    def for_amx_tiles(target: Target, batch: int, m: int, n: int, words: int, constant_b: bool):
        """The schedule of AMX tile kernels over `words` K words (a multiple
        of AMX_TILE_WORDS): a register tile of up to 2 x 2 tiles (32 x 32 of
        C: four accumulator tiles, two of A, two of B, the 8 tile
        registers), K blocks of whole tiles whose B slice takes a quarter of
        L2, and the usual M and N blocks."""
        mr = min(2 * AMX_TILE_ROWS, m)
        nr = AMX_TILE_ROWS if n <= AMX_TILE_ROWS else 2 * AMX_TILE_ROWS
        slice_words = max(AMX_TILE_WORDS, target.l2_bytes // 4 // (nr * 4))
        k_blocks = math.ceil(words / slice_words)
        kc = AMX_TILE_WORDS * math.ceil(words / k_blocks / AMX_TILE_WORDS)
        blocks_m, blocks_n = MatmulSchedule._blocks(
            target, batch, m, n, words, mr, nr, kc, constant_b
        )
        groups, panels = math.ceil(m / mr), math.ceil(n / nr)
        mc, nc = mr * math.ceil(groups / blocks_m), nr * math.ceil(panels / blocks_n)
        return MatmulSchedule(mr, nr, target.f32_lanes, kc, mc, nc)


ENOUGH_ACCUMULATORS = 0.8
"""The share of the most accumulators a register tile shape may leave
unused to load less per FMA (conv_register_tile)."""


def conv_register_tile(
    target: Target, columns: int, output_rows: int, output_blocks: int
) -> tuple[int, int, int]:
    """(m pixels, v output blocks, k output rows) of a tile: m x v
    accumulators beside v weight vectors and a broadcast (more spill: a 7 x 4
    tile of 32 AVX-512 registers ran at half the speed of 6 x 4). A tile
    covers part of a row (k = 1) or, for rows narrower than the registers
    hold, k whole rows (m = k x columns: 2 rows of a 7x7 map). Shapes that
    keep at least ENOUGH_ACCUMULATORS of the most accumulators on average
    over the plane's tiles (a row's last, shorter tile counts) compete on
    the fewest loads per FMA (1/v broadcasts, 1/m weight vectors): more
    vectors also re-read the input fewer times (once per group of v
    blocks). On a 56-wide row 4 x 6 (22.4 accumulators) ran ResNet-50's
    56x56 and 28x28 layers 3-9% faster than 2 x 14 (28); on a 14-wide
    row, 4 x 6 (18.7) ran 3% slower. (AVX2's 16 registers: 2 x 6 against
    1 x 14 ran the 1x1 reductions 7-11% faster, the 3x3 layers 4% slower.)"""
    shapes = []
    for vectors in range(1, min(4, output_blocks) + 1):
        if output_blocks % vectors:
            continue
        free = target.vector_registers - vectors - 1
        pixels = max(1, min(columns, free // vectors))
        shapes.append((pixels, vectors, 1, columns * vectors / math.ceil(columns / pixels)))
        for rows in range(2, min(output_rows, free // vectors // columns) + 1):
            tiles = math.ceil(output_rows / rows)
            used = output_rows * columns * vectors / tiles
            shapes.append((rows * columns, vectors, rows, used))
    most = max(used for *_, used in shapes)
    pixels, vectors, rows, _ = min(
        (shape for shape in shapes if shape[3] >= ENOUGH_ACCUMULATORS * most - 1e-9),
        key=lambda shape: (round(1 / shape[1] + 1 / shape[0], 6), -shape[3]),
    )
    return pixels, vectors, rows


def plane_register_tile(
    target: Target, columns: int, output_rows: int, output_blocks: int
) -> tuple[int, int] | None:
    """(m pixels, v output blocks) for a plane read as one run of pixels (a
    1x1 convolution at unit stride, unpadded: a tile may start anywhere and
    cross rows), where a long row's tile loads less per FMA than
    conv_register_tile's for the map's rows; else None (the rows' tiles,
    whose epilogue runs on each row while it is in L1). 6 x 4 on 14x14 and
    7x7 maps against 14 x 2: ResNet-50's 1x1 layers there ran 2-6% faster."""
    pixels, vectors, _ = conv_register_tile(target, columns, output_rows, output_blocks)
    flat_pixels, flat_vectors, _ = conv_register_tile(
        target, columns * output_rows, 1, output_blocks
    )
    if 1 / flat_vectors + 1 / flat_pixels < 1 / vectors + 1 / pixels - 1e-9:
        return flat_pixels, flat_vectors
    return None
