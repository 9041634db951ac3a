"""Microkernels on AMX tiles: the register tile of a brgemm on byte quads
(u8 x s8 into i32, `tdpbusd`) or bf16 pairs (into f32, `tdpbf16ps`) as up
to 2 x 2 accumulator tiles of 16 rows by 16 sums, which one instruction
each multiplies by an A tile (16 rows of 16 K words) and a B tile (16 K
words of 16 columns): 16 x 16 x 64 byte products per instruction, where
`vpdpbusd` makes 16 x 4 (measured on a Sapphire Rapids core: 1024^3 int8
in 1.1 ms against 4.4 with VNNI). The operands are the ones the vector
kernels read, packed four (two) K steps to a 32-bit word: A rows `a_row`
words apart, B rows `ldb` words apart, which is the layout AMX's B tiles
want (K / 4 rows of N x 4 bytes). LLVM configures the tiles (ldtilecfg,
tilerelease) from the shapes, all constants of the kernel.

Linux hands AMX's 8 KiB of tile state to a process only when asked once
(`enable_amx`); until then the first tile instruction kills it.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphcompiler.target.description import Target

TILE_PRODUCTS = {"u8s8": "tdpbusd", "bf16": "tdpbf16ps"}
"""The AMX instruction multiplying tiles of each kind of packed words."""
TILE_ROWS = 16
"""Rows of a tile, and 32-bit columns of its 64-byte rows."""
CHUNK_ROWS = 2 * TILE_ROWS
"""Rows of C a kernel computes at a time: 2 x 2 accumulator tiles, 2 of A
and 2 of B are the 8 tile registers."""
EXTENSIONS = {"u8s8": "amx-int8", "bf16": "amx-bf16"}


def has_amx(target: Target, kind: str) -> bool:
    """Whether `target` multiplies words of `kind` ("u8s8", "bf16") on AMX
    tiles (and Linux lets this process use them)."""
    extensions = target.extensions
    wanted = "amx-tile" in extensions and EXTENSIONS.get(kind, "") in extensions
    return wanted and enable_amx()


def fits_tiles(kernel, k: int) -> bool:
    """Whether a microkernel's tile can run on AMX: up to 2 x 2 tiles of C
    at a time (rows beyond 32 in whole chunks of 32, one after the other),
    whole tiles of K, A rows evenly apart (a matmul's, or a convolution's
    pixels in pixel-major words, with its taps), and C's 16 columns of a
    tile contiguous in a row (a row contiguous, or a channel-blocked
    output's blocks of 16, a plane apart: `c_vector`)."""
    return (
        kernel.pairs in TILE_PRODUCTS
        and (kernel.m <= CHUNK_ROWS or kernel.m % CHUNK_ROWS == 0)
        and kernel.n <= 2 * TILE_ROWS
        and k % TILE_ROWS == 0
        and kernel.a_k == 1
        and (not kernel.c_vector or kernel.lanes == TILE_ROWS)
        and not kernel.a_wrap
    )


def tile_kernel_ir(kernel) -> str:
    """`void NAME(ptr A, ptr B, ptr C, i64 K, i1 accumulate)`: for each
    chunk of 32 rows, the C tiles loaded (accumulate) or zeroed, for each
    tap of the grid (one loop over them all, a tap's offsets computed from
    its index) K / 16 steps of tile products, the C tiles stored (only C's
    m rows and n columns). One call takes all the row chunks of a panel: configuring
    and releasing the tiles costs about as much as 100 tile products."""
    chunk = min(CHUNK_ROWS, kernel.m)
    rows = [min(TILE_ROWS, chunk - TILE_ROWS * i) for i in range(-(-chunk // TILE_ROWS))]
    cols = [min(TILE_ROWS, kernel.n - TILE_ROWS * j) for j in range(-(-kernel.n // TILE_ROWS))]
    tiles = [(i, j) for i in range(len(rows)) for j in range(len(cols))]
    product, amx = TILE_PRODUCTS[kernel.pairs], "x86_amx"
    column = kernel.c_vector or TILE_ROWS  # where C's next 16 columns start

    def shape(i: int, j: int) -> str:
        return f"i16 {rows[i]}, i16 {4 * cols[j]}"

    lines = [
        f"define void @{kernel.name}(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %k, i1 %accumulate) #0 {{",
        "entry:",
        "  br label %chunk",
        "chunk:",
        "  %g = phi i64 [ 0, %entry ], [ %g_next, %store ]",
        f"  %aoffg = mul i64 %g, {chunk * kernel.a_row}",
        "  %ag = getelementptr inbounds i32, ptr %a, i64 %aoffg",
        f"  %coffg = mul i64 %g, {chunk * kernel.ldc}",
        "  %cg = getelementptr inbounds i32, ptr %c, i64 %coffg",
    ]
    lines += [  # where each C tile of the chunk starts: loaded from, stored to
        f"  %cptr_{i}_{j} = getelementptr inbounds i32, ptr %cg, i64 {TILE_ROWS * i * kernel.ldc + j * column}"
        for i, j in tiles
    ]
    lines += ["  br i1 %accumulate, label %load, label %zero", "load:"]
    lines += [
        f"  %cl_{i}_{j} = call {amx} @llvm.x86.tileloadd64.internal({shape(i, j)}, ptr %cptr_{i}_{j}, i64 {4 * kernel.ldc})"
        for i, j in tiles
    ]
    lines += ["  br label %tap", "zero:"]
    lines += [
        f"  %cz_{i}_{j} = call {amx} @llvm.x86.tilezero.internal({shape(i, j)})" for i, j in tiles
    ]
    # the taps, flattened: tap t's offsets from its digits in the levels' counts
    taps = kernel.taps or ((1, 0, 0),)
    lines += [
        "  br label %tap",
        "tap:",
        "  %t = phi i64 [ 0, %load ], [ 0, %zero ], [ %t_next, %tap_end ]",
    ]
    lines += [
        f"  %acct_{i}_{j} = phi {amx} [ %cl_{i}_{j}, %load ], [ %cz_{i}_{j}, %zero ], [ %d_{i}_{j}, %tap_end ]"
        for i, j in tiles
    ]
    inner, a_terms, b_terms = 1, [], []
    for depth in reversed(range(len(taps))):
        count, a_step, b_step = taps[depth]
        lines += [
            f"  %tq{depth} = udiv i64 %t, {inner}",
            f"  %td{depth} = urem i64 %tq{depth}, {count}",
            f"  %tapa_{depth} = mul i64 %td{depth}, {a_step}",
            f"  %tapb_{depth} = mul i64 %td{depth}, {b_step}",
        ]
        a_terms.append(f"%tapa_{depth}")
        b_terms.append(f"%tapb_{depth}")
        inner *= count
    for name, terms in (("tapa", a_terms), ("tapb", b_terms)):  # %name = the terms' sum
        previous = "0"
        for index, term in enumerate(terms):
            lines.append(f"  %{name}{index} = add i64 {previous}, {term}")
            previous = f"%{name}{index}"
        lines.append(f"  %{name} = add i64 {previous}, 0")
    lines += [
        "  br label %loop",
        "loop:",
        "  %l = phi i64 [ 0, %tap ], [ %l_next, %loop ]",
    ]
    lines += [
        f"  %acc_{i}_{j} = phi {amx} [ %acct_{i}_{j}, %tap ], [ %d_{i}_{j}, %loop ]"
        for i, j in tiles
    ]

    def operand_tile(name: str, base: str, offset: str, shape: str, row_words: int) -> list[str]:
        """Tile `name` of rows `row_words` apart, from `base` + `offset` words."""
        return [
            f"  %{name}off = add i64 {offset}",
            f"  %{name}ptr = getelementptr inbounds i32, ptr {base}, i64 %{name}off",
            f"  %{name} = call {amx} @llvm.x86.tileloadd64.internal({shape}, ptr %{name}ptr, i64 {4 * row_words})",
        ]

    lines += [
        f"  %kword = mul i64 %l, {TILE_ROWS}",
        "  %akword = add i64 %kword, %tapa",
        f"  %brow0 = mul i64 %kword, {kernel.ldb}",
        "  %brow = add i64 %brow0, %tapb",
    ]
    # each operand tile loaded just before its first product: tile registers
    # are not renamed, so a load waits for the products still reading the
    # register, and the first products need not wait for the last loads
    for i, height in enumerate(rows):  # 16 K words of `height` rows of A
        a_offset = f"%akword, {i * TILE_ROWS * kernel.a_row}"
        lines += operand_tile(f"ta{i}", "%ag", a_offset, f"i16 {height}, i16 64", kernel.a_row)
        for j, width in enumerate(cols):  # 16 K words of B, `width` columns
            if i == 0:
                b_shape = f"i16 {TILE_ROWS}, i16 {4 * width}"
                lines += operand_tile(
                    f"tb{j}", "%b", f"%brow, {j * TILE_ROWS}", b_shape, kernel.ldb
                )
            lines.append(
                f"  %d_{i}_{j} = call {amx} @llvm.x86.{product}.internal({shape(i, j)}, i16 64, {amx} %acc_{i}_{j}, {amx} %ta{i}, {amx} %tb{j})"
            )
    lines += [
        "  %l_next = add nuw nsw i64 %l, 1",
        f"  %k_next = mul i64 %l_next, {TILE_ROWS}",
        "  %l_more = icmp slt i64 %k_next, %k",
        "  br i1 %l_more, label %loop, label %tap_end",
        "tap_end:",
        "  %t_next = add nuw nsw i64 %t, 1",
        f"  %t_more = icmp slt i64 %t_next, {inner}",
        "  br i1 %t_more, label %tap, label %store",
        "store:",
    ]
    lines += [
        f"  call void @llvm.x86.tilestored64.internal({shape(i, j)}, ptr %cptr_{i}_{j}, i64 {4 * kernel.ldc}, {amx} %d_{i}_{j})"
        for i, j in tiles
    ]
    lines += [
        "  %g_next = add nuw nsw i64 %g, 1",
        f"  %g_more = icmp slt i64 %g_next, {kernel.m // chunk}",
        "  br i1 %g_more, label %chunk, label %done",
        "done:",
    ]
    return "\n".join([*lines, "  ret void", "}"]) + "\n"


def tile_declarations(kinds: set[str]) -> str:
    """The AMX intrinsics the tile kernels of `kinds` ("u8s8", "bf16") call."""
    if not kinds:
        return ""
    amx = "x86_amx"
    text = (
        f"declare {amx} @llvm.x86.tileloadd64.internal(i16, i16, ptr, i64)\n"
        f"declare {amx} @llvm.x86.tilezero.internal(i16, i16)\n"
        f"declare void @llvm.x86.tilestored64.internal(i16, i16, ptr, i64, {amx})\n"
    )
    for kind in sorted(kinds):
        text += f"declare {amx} @llvm.x86.{TILE_PRODUCTS[kind]}.internal(i16, i16, i16, {amx}, {amx}, {amx})\n"
    return text


_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18
_SYS_ARCH_PRCTL = 158  # x86-64


@functools.cache
def enable_amx() -> bool:
    """Ask Linux for this process's AMX tile state (once; every thread then
    has it); whether it was granted (False elsewhere and on refusal)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) == 0
    except (OSError, AttributeError):
        return False
