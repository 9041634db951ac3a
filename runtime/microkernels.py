"""Generated brgemm microkernels: one description, any register tile.

`tir.brgemm_tile` computes one register tile of a batch-reduce GEMM,
C[m, n] (+)= sum over offset pairs of A_b[m, k] x B_b[k, n], with B rows
`ldb` apart: a packed B panel (matmul) or rows of a convolution's input, one
offset pair per filter tap. Its lowering declares a `Microkernel` (the
function `gc_ukernel_f32_...`, whose parameters the declaration carries as
an attribute and the translated program as `LlvmProgram.microkernels`); the
JIT generates the LLVM IR of each, the way oneDNN's brgemm JIT-generates a
kernel per shape.

The kernel body is the classic broadcast-A / FMA loop: m x v vector
accumulators (v = ceil(n / lanes)) stay in registers across every K loop;
each step loads v vectors of B, broadcasts m elements of A and issues m * v
fused multiply-adds. Lanes past n are masked on every B load and C access,
so tails need no scalar code and never touch memory outside the tile.
A kernel on pairs takes A and B of i32, each element two 16-bit values,
K steps 2l and 2l + 1 (the VNNI layout of 16-bit data), and a step
multiplies and adds the pairs, twice the products per instruction of an f32
FMA: i16 pairs into i32 sums (`vpmaddwd`, which LLVM selects from the
sign-extended products), bf16 pairs into f32 sums (`vdpbf16ps` with
`dot_instruction`, on AVX512-BF16; else each half widened to f32 by a shift
and two FMAs, the same sums: a bf16 product is exact in f32, and the odd
half is added first, as the instruction does; only its flushing of
subnormals differs). A kernel on byte quads takes four K steps to an i32,
u8 in A and s8 in B, and adds their four products to an i32 sum: VNNI's
`vpdpbusd` with `dot_instruction` (four times the products per
instruction of an f32 FMA); else the bytes widened, multiplied and summed
in i32, the same exact sums (the path every host's tests run).
A prefetching kernel also takes a pointer into the B block that the next
tiles read and, at K step l of the tap at B offset b_t, prefetches the
line at pf + b_t + (l / prefetch_every) * ldb into L2 (a matmul's next
panel, a convolution's next input blocks' weights): the caller spreads the
block's lines over the tiles that share a panel, so the next B panel streams in
from memory while this one computes (3% on a 4-layer encoder whose weights
do not fit in the caches). Every tile taking an even share of the next panel
(prefetch_every > 1), rather than the first few tiles all of it, ran
ViT-B/16 2-4% faster: fewer prefetches in flight at once, from memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from graphcompiler.runtime.amx_tiles import has_amx, tile_declarations, tile_kernel_ir

if TYPE_CHECKING:
    from graphcompiler.target.description import Target

PREFIX = "gc_ukernel_f32_"
PAIRS_PREFIXES = {
    "i16": "gc_ukernel_i16x2_",
    "bf16": "gc_ukernel_bf16x2_",
    "u8s8": "gc_ukernel_u8s8x4_",
}


NOT_UNROLLED = ", !llvm.loop !not_unrolled"
"""Marks a tap loop's latch branch: `microkernel_module` makes it a loop ID
that disables LLVM's unrolling. Unrolled, a 3x3 filter's tap loops became
9 copies of the K loop, each its own remainder loops: ResNet-50's 21
microkernels took 0.80 s of LLVM's time, 0.63 s without, running as fast
(a tap's loop overhead is a few instructions beside a whole K loop). The K
loop stays LLVM's to unroll: on 8 lanes, with fewer FMAs a step, a 1024^3
matmul ran 5% slower without that."""


@dataclass(frozen=True)
class Microkernel:
    """A register tile C[m, n] (+)= sum over the tap grid of A_t x B_t, where
    A_t[i, l] = A[a_t + i * a_row + l * a_k] and B_t[l, j] = B[b_t + l * ldb + j];
    C[i, j] at C + i * ldc + j; vectors of `lanes` floats (vector v of a C
    row `c_vector` elements after vector v - 1 when set: a channel-blocked
    output keeps each block of channels a plane apart). `taps` nests loops,
    outer first, each (count, a_step, b_step): tap (i_0, i_1, ...) has offsets
    a_t = sum i_d * a_step_d and b_t = sum i_d * b_step_d. A matmul tile has no
    taps (one (0, 0) pair); a convolution loops over its filter rows and
    columns, so the code is the same size for a 1x1 and a 32x32 filter."""

    m: int
    n: int
    lanes: int
    a_row: int
    a_k: int
    ldb: int
    ldc: int
    taps: tuple[tuple[int, int, int], ...] = ()
    c_vector: int = 0
    """Elements between consecutive vectors of a C row; 0: `lanes` (contiguous)."""
    a_wrap: int = 0
    """When set, A's rows come in runs of `a_wrap` (`a_row` apart), each run
    `a_wrap_step` after the previous: a convolution tile of whole output
    rows narrower than the tile (7 pixels a row, 2 rows a tile)."""
    a_wrap_step: int = 0
    prefetch: bool = False
    prefetch_every: int = 1
    """K steps per prefetched B row (a prefetching kernel)."""
    pairs: str = ""
    """What each i32 element of A and B holds: "" (f32 elements), two i16
    ("i16"), two bf16 ("bf16"), or four bytes, u8 in A and s8 in B ("u8s8")."""
    dot_instruction: bool = False
    """Use the target's dot-product instruction: `vdpbf16ps` on bf16 pairs,
    `vpdpbusd` on byte quads (`has_dot_instruction`)."""
    amx: bool = False
    """Byte quads or bf16 pairs on AMX tiles (runtime/amx_tiles.py)."""

    @property
    def name(self) -> str:
        taps = "".join(f"_t{count}x{a}x{b}" for count, a, b in self.taps)
        prefix = PAIRS_PREFIXES.get(self.pairs, PREFIX)
        return (
            f"{prefix}m{self.m}_n{self.n}_l{self.lanes}_ar{self.a_row}_ak{self.a_k}"
            f"_ldb{self.ldb}_ldc{self.ldc}{taps}{f'_cv{self.c_vector}' if self.c_vector else ''}"
            f"{f'_w{self.a_wrap}x{self.a_wrap_step}' if self.a_wrap else ''}"
            f"{'_pf' if self.prefetch else ''}"
            f"{self.prefetch_every if self.prefetch and self.prefetch_every > 1 else ''}"
            f"{'_dot' if self.dot_instruction else ''}{'_amx' if self.amx else ''}"
        )

    def fields(self) -> dict[str, Any]:
        """The parameters as plain values (for IR attributes and the cache)."""
        fields = asdict(self)
        fields["taps"] = [value for level in self.taps for value in level]
        return fields

    @staticmethod
    def from_fields(fields: dict[str, Any]) -> Microkernel:
        flat = list(fields["taps"])
        taps = tuple(zip(flat[0::3], flat[1::3], flat[2::3], strict=True))
        return Microkernel(**{**fields, "taps": taps})

    def microkernels(self) -> tuple[Microkernel, ...]:
        """A microkernel calls no other."""
        return ()

    @property
    def scalar(self) -> str:
        """The LLVM type of one element of A and B."""
        return "i32" if self.pairs else "float"

    @property
    def sum_scalar(self) -> str:
        """The LLVM type of one element of C (the sums)."""
        return "i32" if self.pairs in ("i16", "u8s8") else "float"

    @property
    def vec(self) -> str:
        """The LLVM vector type of one register of A or B."""
        return f"<{self.lanes} x {self.scalar}>"

    @property
    def sum_vec(self) -> str:
        """The LLVM vector type of one accumulator."""
        return f"<{self.lanes} x {self.sum_scalar}>"

    @property
    def vectors(self) -> int:
        return -(-self.n // self.lanes)

    def llvm_ir(self) -> str:
        """`void NAME(ptr A, ptr B, ptr C, i64 K, i1 accumulate[, ptr pf])`,
        K >= 1: one loop per tap level around the K loop; the accumulators
        live in registers across all of them."""
        if self.amx:
            return tile_kernel_ir(self)
        tiles = [(r, v) for r in range(self.m) for v in range(self.vectors)]
        prefetch = ", ptr %pf" if self.prefetch else ""
        lines = [
            f"define void @{self.name}(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %k, i1 %accumulate{prefetch}) #0 {{",
            "entry:",
        ]
        sums = {t: f"%fma_{t[0]}_{t[1]}" for t in tiles}
        previous, carried, a_base, b_base = "entry", {t: "zeroinitializer" for t in tiles}, "0", "0"
        latches: list[str] = []
        for depth, (count, a_step, b_step) in enumerate(self.taps):
            label, latch = f"tap{depth}", f"tap{depth}_next"
            exit_ = "store" if depth == 0 else f"tap{depth - 1}_next"
            lines += [f"  br label %{label}", f"{label}:",
                      f"  %i{depth} = phi i64 [ 0, %{previous} ], [ %i{depth}_next, %{latch} ]"]  # fmt: skip
            lines += [
                f"  %acc{depth}_{r}_{v} = phi {self.sum_vec} [ {carried[r, v]}, %{previous} ], [ {sums[r, v]}, %{latch} ]"
                for r, v in tiles
            ]
            lines += [
                f"  %a_step{depth} = mul i64 %i{depth}, {a_step}",
                f"  %a_at{depth} = add i64 {a_base}, %a_step{depth}",
                f"  %b_step{depth} = mul i64 %i{depth}, {b_step}",
                f"  %b_at{depth} = add i64 {b_base}, %b_step{depth}",
            ]
            latches = [f"{latch}:", f"  %i{depth}_next = add nuw nsw i64 %i{depth}, 1",
                       f"  %i{depth}_more = icmp slt i64 %i{depth}_next, {count}",
                       f"  br i1 %i{depth}_more, label %{label}, label %{exit_}{NOT_UNROLLED}",
                       *latches]  # fmt: skip
            previous, a_base, b_base = label, f"%a_at{depth}", f"%b_at{depth}"
            carried = {t: f"%acc{depth}_{t[0]}_{t[1]}" for t in tiles}
        after = f"tap{len(self.taps) - 1}_next" if self.taps else "store"
        lines.append("  br label %loop")
        lines += self._loop(previous, carried, a_base, b_base, after)
        lines += latches
        lines.append("store:")
        lines += self._write(sums)
        lines += ["  ret void", "}"]
        return "\n".join(lines) + "\n"

    def _loop(
        self, previous: str, carried: dict, a_base: str, b_base: str, after: str
    ) -> list[str]:
        """The K loop at tap offsets (a_base, b_base): v B vectors, m
        broadcasts, m x v FMAs per step; its last sums are `%fma_r_v`."""
        lanes, vec = self.lanes, self.vec
        lines = ["loop:", f"  %l = phi i64 [ 0, %{previous} ], [ %l_next, %loop ]"]
        lines += [
            f"  %acc_{r}_{v} = phi {self.sum_vec} [ {carried[r, v]}, %{previous} ], [ %fma_{r}_{v}, %loop ]"
            for r, v in carried
        ]
        lines += [f"  %brow = mul i64 %l, {self.ldb}", f"  %bbase = add i64 %brow, {b_base}"]
        for v in range(self.vectors):
            lines += [
                f"  %boff{v} = add i64 %bbase, {v * lanes}",
                f"  %bptr{v} = getelementptr inbounds {self.scalar}, ptr %b, i64 %boff{v}",
                f"  %b{v} = {self._load(v, f'%bptr{v}', self.scalar)}",
            ]
        if self.prefetch:  # into L2 (locality 2), a read of data
            row = "%brow"
            if self.prefetch_every > 1:
                row = "%pfrow"
                lines += [
                    f"  %pfstep = udiv i64 %l, {self.prefetch_every}",
                    f"  %pfrow = mul i64 %pfstep, {self.ldb}",
                ]
            if b_base != "0":  # the tap's rows (a convolution's next weights)
                lines.append(f"  %pftap = add i64 {row}, {b_base}")
                row = "%pftap"
            lines += [
                f"  %pfptr = getelementptr {self.scalar}, ptr %pf, i64 {row}",
                "  call void @llvm.prefetch.p0(ptr %pfptr, i32 0, i32 2, i32 1)",
            ]
        lines += [f"  %acol = mul i64 %l, {self.a_k}", f"  %abase = add i64 %acol, {a_base}"]
        for r in range(self.m):
            lines += [
                f"  %aoff{r} = add i64 %abase, {self.a_offset(r)}",
                f"  %aptr{r} = getelementptr inbounds {self.scalar}, ptr %a, i64 %aoff{r}",
                f"  %a{r} = load {self.scalar}, ptr %aptr{r}, align 4",
                f"  %ains{r} = insertelement {vec} poison, {self.scalar} %a{r}, i64 0",
                f"  %abc{r} = shufflevector {vec} %ains{r}, {vec} poison, <{lanes} x i32> zeroinitializer",
            ]
            for v in range(self.vectors):
                lines += self._multiply_add(f"%fma_{r}_{v}", f"%abc{r}", f"%b{v}", f"%acc_{r}_{v}")
        return lines + [
            "  %l_next = add nuw nsw i64 %l, 1",
            "  %l_more = icmp slt i64 %l_next, %k",
            f"  br i1 %l_more, label %loop, label %{after}",
        ]

    def _multiply_add(self, result: str, a: str, b: str, acc: str) -> list[str]:
        """result = acc + a * b: one FMA, or the pairs' dot products."""
        vec, lanes = self.vec, self.lanes
        if self.pairs == "bf16":
            return self._bf16_pairs_multiply_add(result, a, b, acc)
        if self.pairs == "u8s8":
            return self._byte_quads_multiply_add(result, a, b, acc)
        if not self.pairs:
            return [
                f"  {result} = call {vec} @llvm.fmuladd.v{lanes}f32({vec} {a}, {vec} {b}, {vec} {acc})"
            ]
        # i16 pairs: sign-extended products, even plus odd (LLVM selects `vpmaddwd`)
        wide, name = f"<{2 * lanes} x i32>", result[1:]
        halves = [", ".join(f"i32 {2 * i + odd}" for i in range(lanes)) for odd in (0, 1)]
        lines = []
        for side, value in (("a", a), ("b", b)):
            lines += [
                f"  %{name}_{side}16 = bitcast {vec} {value} to <{2 * lanes} x i16>",
                f"  %{name}_{side}32 = sext <{2 * lanes} x i16> %{name}_{side}16 to {wide}",
            ]
        lines.append(f"  %{name}_p = mul nsw {wide} %{name}_a32, %{name}_b32")
        for odd, picked in enumerate(halves):
            lines.append(
                f"  %{name}_h{odd} = shufflevector {wide} %{name}_p, {wide} poison, <{lanes} x i32> <{picked}>"
            )
        return lines + [
            f"  %{name}_s = add {vec} %{name}_h0, %{name}_h1",
            f"  {result} = add {vec} %{name}_s, {acc}",
        ]

    def _bf16_pairs_multiply_add(self, result: str, a: str, b: str, acc: str) -> list[str]:
        """acc + the dot products of bf16 pairs in f32: `vdpbf16ps`, or each
        half widened (the high half masked, the low one shifted up) and two
        FMAs, the odd half first as the instruction adds them."""
        vec, sums, lanes, name = self.vec, self.sum_vec, self.lanes, result[1:]
        if self.dot_instruction:
            halves = f"<{2 * lanes} x bfloat>"
            return [
                f"  %{name}_a = bitcast {vec} {a} to {halves}",
                f"  %{name}_b = bitcast {vec} {b} to {halves}",
                f"  {result} = call {sums} @{_dpbf16ps(lanes)}({sums} {acc}, {halves} %{name}_a, {halves} %{name}_b)",
            ]
        lines = []
        for side, value in (("a", a), ("b", b)):
            lines += [
                f"  %{name}_{side}hi_bits = and {vec} {value}, splat (i32 -65536)",
                f"  %{name}_{side}lo_bits = shl {vec} {value}, splat (i32 16)",
                f"  %{name}_{side}hi = bitcast {vec} %{name}_{side}hi_bits to {sums}",
                f"  %{name}_{side}lo = bitcast {vec} %{name}_{side}lo_bits to {sums}",
            ]
        fmuladd = f"@llvm.fmuladd.v{lanes}f32"
        return lines + [
            f"  %{name}_odd = call {sums} {fmuladd}({sums} %{name}_ahi, {sums} %{name}_bhi, {sums} {acc})",
            f"  {result} = call {sums} {fmuladd}({sums} %{name}_alo, {sums} %{name}_blo, {sums} %{name}_odd)",
        ]

    def _byte_quads_multiply_add(self, result: str, a: str, b: str, acc: str) -> list[str]:
        """acc + the dot products of u8 (A) by s8 (B) byte quads in i32:
        `vpdpbusd`, or the bytes widened (A zero-, B sign-extended),
        multiplied and each lane's four products added."""
        vec, lanes, name = self.vec, self.lanes, result[1:]
        bytes_ = f"<{4 * lanes} x i8>"
        lines = [
            f"  %{name}_a8 = bitcast {vec} {a} to {bytes_}",
            f"  %{name}_b8 = bitcast {vec} {b} to {bytes_}",
        ]
        if self.dot_instruction:
            call = f"call {vec} @{_vpdpbusd(lanes)}({vec} {acc}, {bytes_} %{name}_a8, {bytes_} %{name}_b8)"
            return lines + [f"  {result} = {call}"]
        wide = f"<{4 * lanes} x i32>"
        lines += [
            f"  %{name}_a32 = zext {bytes_} %{name}_a8 to {wide}",
            f"  %{name}_b32 = sext {bytes_} %{name}_b8 to {wide}",
            f"  %{name}_p = mul nsw {wide} %{name}_a32, %{name}_b32",
        ]
        for byte in range(4):
            picked = ", ".join(f"i32 {4 * i + byte}" for i in range(lanes))
            lines.append(
                f"  %{name}_q{byte} = shufflevector {wide} %{name}_p, {wide} poison, <{lanes} x i32> <{picked}>"
            )
        return lines + [
            f"  %{name}_s01 = add {vec} %{name}_q0, %{name}_q1",
            f"  %{name}_s23 = add {vec} %{name}_q2, %{name}_q3",
            f"  %{name}_s = add {vec} %{name}_s01, %{name}_s23",
            f"  {result} = add {vec} %{name}_s, {acc}",
        ]

    def a_offset(self, r: int) -> int:
        """Where row r of A starts (relative to the tap's offset)."""
        if not self.a_wrap:
            return r * self.a_row
        return r // self.a_wrap * self.a_wrap_step + r % self.a_wrap * self.a_row

    def _c_offset(self, r: int, v: int) -> int:
        """Where vector v of C row r starts."""
        return r * self.ldc + v * (self.c_vector or self.lanes)

    def _write(self, sums: dict) -> list[str]:
        """C = sums, or C += sums when accumulating (masked past n)."""
        vec, scalar = self.sum_vec, self.sum_scalar
        lines = ["  br i1 %accumulate, label %add, label %write", "add:"]
        for r, v in sums:
            pointer = f"%cptr_a{r}_{v}"
            lines += [
                f"  {pointer} = getelementptr inbounds {scalar}, ptr %c, i64 {self._c_offset(r, v)}",
                f"  %old{r}_{v} = {self._load(v, pointer, scalar)}",
                f"  %new{r}_{v} = {'add' if scalar == 'i32' else 'fadd'} {vec} {sums[r, v]}, %old{r}_{v}",
            ]
        lines += ["  br label %write", "write:"]
        for r, v in sums:
            lines.append(
                f"  %out{r}_{v} = phi {vec} [ {sums[r, v]}, %store ], [ %new{r}_{v}, %add ]"
            )
        for r, v in sums:
            pointer = f"%cptr_w{r}_{v}"
            lines += [
                f"  {pointer} = getelementptr inbounds {scalar}, ptr %c, i64 {self._c_offset(r, v)}",
                f"  {self._store(v, f'%out{r}_{v}', pointer, scalar)}",
            ]
        return lines

    def _mask(self, v: int) -> str | None:
        """The lane mask of vector v of a row, or None when all lanes are in C."""
        valid = self.n - v * self.lanes
        if valid >= self.lanes:
            return None
        bits = ", ".join("i1 true" if lane < valid else "i1 false" for lane in range(self.lanes))
        return f"<{bits}>"

    def _load(self, v: int, pointer: str, scalar: str) -> str:
        """Vector v of a row of `scalar` (float or i32) elements, masked past n."""
        vec, mask = f"<{self.lanes} x {scalar}>", self._mask(v)
        if mask is None:
            return f"load {vec}, ptr {pointer}, align 4"
        return (
            f"call {vec} @llvm.masked.load.v{self.lanes}{_SUFFIXES[scalar]}.p0(ptr {pointer}, i32 4, "
            f"<{self.lanes} x i1> {mask}, {vec} zeroinitializer)"
        )

    def _store(self, v: int, value: str, pointer: str, scalar: str) -> str:
        vec, mask = f"<{self.lanes} x {scalar}>", self._mask(v)
        if mask is None:
            return f"store {vec} {value}, ptr {pointer}, align 4"
        return (
            f"call void @llvm.masked.store.v{self.lanes}{_SUFFIXES[scalar]}.p0({vec} {value}, ptr {pointer}, "
            f"i32 4, <{self.lanes} x i1> {mask})"
        )


_SUFFIXES = {"float": "f32", "i32": "i32"}
"""The element part of intrinsic names."""


def _dpbf16ps(lanes: int) -> str:
    """The AVX512-BF16 dot product of bf16 pairs into f32 for `lanes` sums."""
    return f"llvm.x86.avx512bf16.dpbf16ps.{32 * lanes}"


def _vpdpbusd(lanes: int) -> str:
    """The VNNI dot product of u8 x s8 byte quads into `lanes` i32 sums."""
    return f"llvm.x86.avx512.vpdpbusd.{32 * lanes}"


def has_dot_instruction(target: Target, pairs: str, lanes: int) -> bool:
    """Whether `target` has the dot-product instruction of `pairs` kernels
    of `lanes`: AVX512-BF16's `vdpbf16ps`, AVX512-VNNI's `vpdpbusd` (on 16
    lanes; AVX-VNNI's on 8)."""
    extensions = target.extensions
    if pairs == "bf16":
        return "avx512bf16" in extensions
    if pairs == "u8s8":
        return "avx512vnni" in extensions or (lanes == 8 and "avxvnni" in extensions)
    return False


def byte_quads(target: Target) -> bool:
    """Whether u8 x s8 products run on byte quads (`vpdpbusd`, or AMX
    tiles); elsewhere matmuls take pairs, as other integers of at most 16
    bits, and convolutions stay f32 (graph-integer-matmul)."""
    return has_dot_instruction(target, "u8s8", target.f32_lanes) or has_amx(target, "u8s8")


def _intrinsic_declarations(lanes: set[int], dots: set[tuple[str, int]]) -> str:
    text = (
        "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)\n"
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)\n"
    )
    for pairs, n in sorted(dots):
        if pairs == "bf16":
            sums, halves = f"<{n} x float>", f"<{2 * n} x bfloat>"
            text += f"declare {sums} @{_dpbf16ps(n)}({sums}, {halves}, {halves})\n"
        else:
            sums, quads = f"<{n} x i32>", f"<{4 * n} x i8>"
            text += f"declare {sums} @{_vpdpbusd(n)}({sums}, {quads}, {quads})\n"
    for n in sorted(lanes):
        mask = f"<{n} x i1>"
        text += f"declare <{n} x float> @llvm.fmuladd.v{n}f32(<{n} x float>, <{n} x float>, <{n} x float>)\n"
        for scalar, suffix in (("float", "f32"), ("i32", "i32")):
            vec = f"<{n} x {scalar}>"
            text += (
                f"declare {vec} @llvm.masked.load.v{n}{suffix}.p0(ptr, i32, {mask}, {vec})\n"
                f"declare void @llvm.masked.store.v{n}{suffix}.p0({vec}, ptr, i32, {mask})\n"
            )
    return text


def _numbered_loop_ids(body: str) -> str:
    """`body` with each NOT_UNROLLED marker a distinct loop ID (as LLVM
    wants one per loop) that disables unrolling, and their definitions."""
    pieces = body.split(NOT_UNROLLED)
    if len(pieces) == 1:
        return body
    ids = range(1, len(pieces))
    marked = "".join(f", !llvm.loop !{i}{piece}" for i, piece in zip(ids, pieces[1:], strict=True))
    definitions = "".join(f"!{i} = distinct !{{!{i}, !0}}\n" for i in ids)
    return pieces[0] + marked + '!0 = !{!"llvm.loop.unroll.disable"}\n' + definitions


class GeneratedKernel(Protocol):
    """What the JIT generates on a program's demand: a microkernel, or a
    routine made of microkernel calls (runtime/brgemm_routines.py)."""

    name: str
    lanes: int

    def llvm_ir(self) -> str: ...

    def microkernels(self) -> tuple[Microkernel, ...]: ...


def microkernel_module(kernels: Sequence[GeneratedKernel]) -> str:
    """One LLVM IR module defining `kernels` and the microkernels they call
    (empty text when none)."""
    defined: dict[str, GeneratedKernel] = {}
    for kernel in kernels:
        for needed in (kernel, *kernel.microkernels()):
            defined.setdefault(needed.name, needed)
    if not defined:
        return ""
    body = _numbered_loop_ids("".join(kernel.llvm_ir() for kernel in defined.values()))
    # noinline: a kernel calls its microkernels once per register tile; inlined
    # into every call site they multiplied the JIT's time for no speed
    return (
        tile_declarations(
            {k.pairs for k in defined.values() if isinstance(k, Microkernel) and k.amx}
        )
        + _intrinsic_declarations(
            {k.lanes for k in defined.values()},
            {
                (k.pairs, k.lanes)
                for k in defined.values()
                if isinstance(k, Microkernel) and k.dot_instruction
            },
        )
        + body
        + 'attributes #0 = { noinline nounwind "frame-pointer"="none" }\n'
    )
