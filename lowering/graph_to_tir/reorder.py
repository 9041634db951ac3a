"""graph.to_blocked and graph.from_blocked: channel planes to pixel blocks
and back (dialects/graph/layout.py)."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerType,
    VectorType,
    i32,
)
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.tir.types import MAX_LANES
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, worth_parallel_work
from graphcompiler.lowering.graph_to_tir.matmul import unflatten

f32 = Float32Type()


def reorder(kernel: Kernel, op) -> None:
    """graph.to_blocked / graph.from_blocked: for each image and block of b
    channels, the b planes [b, S] become the pixels' blocks [S, b] (or
    back), through flat views of both (S = the spatial size). f32 and
    integer blocks of a power-of-two vector width move b pixels at a time:
    b vectors loaded, transposed in registers (`transpose_vectors`; 8- and
    16-bit integers widened to i32 lanes), b vectors stored; the pixels past
    the last such tile (and other element types) one element at a time. A padded last block has fewer planes: to_blocked writes
    zeros in its other lanes. Parallel over the blocks."""
    b = kernel.b
    to_blocked = op.name == "graph.to_blocked"
    plain, blocked = (
        (kernel.inputs[0], kernel.out) if to_blocked else (kernel.out, kernel.inputs[0])
    )
    n, blocks, *spatial, block = blocked.shape
    whole, last = divmod(plain.shape[1], block)
    pixels = math.prod(spatial)
    rank = len(blocked.shape)
    vectorized = (
        _moves_vectors(plain.element) and 2 <= block <= MAX_LANES and block & (block - 1) == 0
    )
    tiled = pixels - pixels % block if vectorized else 0  # pixels moved by whole tiles
    outer = [n, blocks]
    parallel = worth_parallel_work(n * blocks, n * blocks * pixels * block)
    with kernel.loop_nest([n * blocks], parallel) as (flat,):
        image, channels = unflatten(kernel, flat, outer)

        def copy(lanes: int) -> None:
            first = b.mul(channels, block)
            planes = b.tensor_ptr(plain.value, [image, first] + [0] * (rank - 3), [lanes * pixels])
            pixel_blocks = b.tensor_ptr(
                blocked.value, [image, channels] + [0] * (rank - 2), [pixels * block]
            )
            if tiled:
                with b.make_for(0, tiled, block) as pixel:
                    _reorder_tile(b, planes, pixel_blocks, pixel, pixels, lanes, block, to_blocked)
            if tiled < pixels:
                with b.make_for(tiled, pixels, 1) as pixel, b.make_for(0, lanes, 1) as lane:
                    in_plane = b.add(b.mul(lane, pixels), pixel)
                    in_block = b.add(b.mul(pixel, block), lane)
                    if to_blocked:
                        b.make_store(b.make_load(planes, [in_plane]), pixel_blocks, [in_block])
                    else:
                        b.make_store(b.make_load(pixel_blocks, [in_block]), planes, [in_plane])
                if to_blocked and lanes < block:
                    zero = b.const(0, pixel_blocks.type.element_type)
                    with b.make_for(tiled, pixels, 1) as pixel, b.make_for(lanes, block, 1) as lane:
                        b.make_store(zero, pixel_blocks, [b.add(b.mul(pixel, block), lane)])

        if not last or not whole:
            copy(last or block)
        else:
            branch = b.make_if(b.binary(tir.LtOp, channels, whole), with_else=True)
            with b.at_end_of(branch.then_region.block):
                copy(block)
            with b.at_end_of(branch.else_region.block):
                copy(last)


def _moves_vectors(element) -> bool:
    """f32, and integers of at most 32 bits (widened to i32 lanes for the
    transpose: a u8 network's reorders moved a byte at a time)."""
    return element == f32 or (isinstance(element, IntegerType) and 8 <= element.width.data <= 32)


def _reorder_tile(b, planes, pixel_blocks, pixel, pixels: int, lanes: int, block: int, to_blocked):
    """Pixels [pixel, pixel + block) of `lanes` planes to their blocks (or
    back); narrower integers are transposed as i32 lanes."""
    element = planes.type.element_type
    wide = f32 if element == f32 else i32
    vector = VectorType(wide, [block])

    def load(tensor, index) -> SSAValue:
        value = b.make_load(tensor, [index], block)
        return value if element == wide else b.cast(value, vector)

    def store(value, tensor, index) -> None:
        if element != wide:
            value = b.cast(value, VectorType(element, [block]))
        b.make_store(value, tensor, [index], block)

    if to_blocked:
        rows = [load(planes, b.add(pixel, lane * pixels)) for lane in range(lanes)]
        rows += [b.const(0.0 if wide == f32 else 0, vector)] * (block - lanes)
        for offset, column in enumerate(transpose_vectors(b, rows)):
            store(column, pixel_blocks, b.mul(b.add(pixel, offset), block))
    else:
        rows = [load(pixel_blocks, b.mul(b.add(pixel, i), block)) for i in range(block)]
        for lane, column in enumerate(transpose_vectors(b, rows)[:lanes]):
            store(column, planes, b.add(pixel, lane * pixels))


def transpose_vectors(b, rows: list[SSAValue]) -> list[SSAValue]:
    """The columns of the n x n matrix whose rows are the n vectors `rows`
    (n a power of two): log2(n) stages, each swapping the off-diagonal
    h x h blocks of every 2h x 2h block (h = n / 2, ..., 1) with two
    two-source permutes per pair of rows (vpermt2ps on AVX-512)."""
    n = len(rows)
    indices = VectorType(i32, [n])
    h = n // 2
    while h:
        low = [j if j & h == 0 else j - h + n for j in range(n)]  # row i: its own, then row i + h's
        high = [j + h if j & h == 0 else j + n for j in range(n)]
        picks = [
            b.const(DenseIntOrFPElementsAttr.from_list(indices, mask), indices)
            for mask in (low, high)
        ]
        swapped = list(rows)
        for i in range(n):
            if i & h == 0:
                for target, pick in ((i, picks[0]), (i + h, picks[1])):
                    op = tir.Permutex2varOp.create(
                        operands=[rows[i], pick, rows[i + h]], result_types=[rows[i].type]
                    )
                    swapped[target] = b.insert(op).result
        rows, h = swapped, h // 2
    return rows
