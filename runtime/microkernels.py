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
A prefetching kernel (matmul tiles) also takes a pointer into the B block
that the next tiles read and, at K step l, prefetches the line at
pf + l * ldb into L2: the caller spreads the block's lines over consecutive
tiles, so the next B panel streams in from memory while this one computes
(3% on a 4-layer encoder whose weights do not fit in the caches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

PREFIX = "gc_ukernel_f32_"


@dataclass(frozen=True)
class Microkernel:
    """A register tile C[m, n] (+)= sum over (a_off, b_off) in `offsets` of
    A_b x B_b, where A_b[i, l] = A[a_off + i * a_row + l * a_k] and
    B_b[l, j] = B[b_off + l * ldb + j]; C[i, j] at C + i * ldc + j; vectors
    of `lanes` floats. A packed B panel has ldb = its width; a convolution
    passes one (weights, input) offset pair per filter tap."""

    m: int
    n: int
    lanes: int
    a_row: int
    a_k: int
    ldb: int
    ldc: int
    offsets: tuple[tuple[int, int], ...] = ((0, 0),)
    prefetch: bool = False

    @property
    def name(self) -> str:
        taps = "" if self.offsets == ((0, 0),) else "".join(f"_o{a}x{b}" for a, b in self.offsets)
        return (
            f"{PREFIX}m{self.m}_n{self.n}_l{self.lanes}_ar{self.a_row}_ak{self.a_k}"
            f"_ldb{self.ldb}_ldc{self.ldc}{taps}{'_pf' if self.prefetch else ''}"
        )

    def fields(self) -> dict[str, Any]:
        """The parameters as plain values (for IR attributes and the cache)."""
        fields = asdict(self)
        fields["offsets"] = [value for pair in self.offsets for value in pair]
        return fields

    @staticmethod
    def from_fields(fields: dict[str, Any]) -> Microkernel:
        flat = list(fields["offsets"])
        offsets = tuple(zip(flat[0::2], flat[1::2], strict=True))
        return Microkernel(**{**fields, "offsets": offsets})

    def microkernels(self) -> tuple[Microkernel, ...]:
        """A microkernel calls no other."""
        return ()

    @property
    def vec(self) -> str:
        """The LLVM vector type of one register."""
        return f"<{self.lanes} x float>"

    @property
    def vectors(self) -> int:
        return -(-self.n // self.lanes)

    def llvm_ir(self) -> str:
        """`void NAME(ptr A, ptr B, ptr C, i64 K, i1 accumulate[, ptr pf])`,
        K >= 1: one K loop per offset pair, the accumulators live across all."""
        tiles = [(r, v) for r in range(self.m) for v in range(self.vectors)]
        prefetch = ", ptr %pf" if self.prefetch else ""
        lines = [
            f"define void @{self.name}(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %k, i1 %accumulate{prefetch}) #0 {{",
            "entry:",
            "  br label %loop0",
        ]
        previous, carried = "entry", {t: "zeroinitializer" for t in tiles}
        for tap, offsets in enumerate(self.offsets):
            lines += self._loop(tap, offsets, previous, carried)
            previous, carried = f"loop{tap}", {t: f"%fma{tap}_{t[0]}_{t[1]}" for t in tiles}
        lines.append("store:")
        lines += self._write(carried)
        lines += ["  ret void", "}"]
        return "\n".join(lines) + "\n"

    def _loop(self, tap: int, offsets: tuple[int, int], previous: str, carried: dict) -> list[str]:
        """The K loop of one offset pair: v B vectors, m broadcasts, m x v FMAs."""
        lanes, vec, label = self.lanes, self.vec, f"loop{tap}"
        after = f"loop{tap + 1}" if tap + 1 < len(self.offsets) else "store"
        a_offset, b_offset = offsets
        lines = [f"{label}:", f"  %k{tap} = phi i64 [ 0, %{previous} ], [ %next{tap}, %{label} ]"]
        for r, v in carried:
            lines.append(
                f"  %acc{tap}_{r}_{v} = phi {vec} [ {carried[r, v]}, %{previous} ], [ %fma{tap}_{r}_{v}, %{label} ]"
            )
        lines.append(f"  %brow{tap} = mul i64 %k{tap}, {self.ldb}")
        for v in range(self.vectors):
            pointer = f"%bptr{tap}_{v}"
            lines += [
                f"  %boff{tap}_{v} = add i64 %brow{tap}, {b_offset + v * lanes}",
                f"  {pointer} = getelementptr inbounds float, ptr %b, i64 %boff{tap}_{v}",
                f"  %b{tap}_{v} = {self._load(v, pointer)}",
            ]
        if self.prefetch:  # into L2 (locality 2), a read of data
            lines += [
                f"  %pfptr{tap} = getelementptr float, ptr %pf, i64 %brow{tap}",
                f"  call void @llvm.prefetch.p0(ptr %pfptr{tap}, i32 0, i32 2, i32 1)",
            ]
        lines.append(f"  %acol{tap} = mul i64 %k{tap}, {self.a_k}")
        for r in range(self.m):
            lines += [
                f"  %aoff{tap}_{r} = add i64 %acol{tap}, {a_offset + r * self.a_row}",
                f"  %aptr{tap}_{r} = getelementptr inbounds float, ptr %a, i64 %aoff{tap}_{r}",
                f"  %a{tap}_{r} = load float, ptr %aptr{tap}_{r}, align 4",
                f"  %ains{tap}_{r} = insertelement {vec} poison, float %a{tap}_{r}, i64 0",
                f"  %abc{tap}_{r} = shufflevector {vec} %ains{tap}_{r}, {vec} poison, <{lanes} x i32> zeroinitializer",
            ]
            for v in range(self.vectors):
                lines.append(
                    f"  %fma{tap}_{r}_{v} = call {vec} @llvm.fmuladd.v{lanes}f32({vec} %abc{tap}_{r}, {vec} %b{tap}_{v}, {vec} %acc{tap}_{r}_{v})"
                )
        return lines + [
            f"  %next{tap} = add nuw nsw i64 %k{tap}, 1",
            f"  %more{tap} = icmp slt i64 %next{tap}, %k",
            f"  br i1 %more{tap}, label %{label}, label %{after}",
        ]

    def _write(self, sums: dict) -> list[str]:
        """C = sums, or C += sums when accumulating (masked past n)."""
        vec = self.vec
        lines = ["  br i1 %accumulate, label %add, label %write", "add:"]
        for r, v in sums:
            pointer = f"%cptr_a{r}_{v}"
            lines += [
                f"  {pointer} = getelementptr inbounds float, ptr %c, i64 {r * self.ldc + v * self.lanes}",
                f"  %old{r}_{v} = {self._load(v, pointer)}",
                f"  %new{r}_{v} = fadd {vec} {sums[r, v]}, %old{r}_{v}",
            ]
        lines += ["  br label %write", "write:"]
        for r, v in sums:
            lines.append(
                f"  %out{r}_{v} = phi {vec} [ {sums[r, v]}, %store ], [ %new{r}_{v}, %add ]"
            )
        for r, v in sums:
            pointer = f"%cptr_w{r}_{v}"
            lines += [
                f"  {pointer} = getelementptr inbounds float, ptr %c, i64 {r * self.ldc + v * self.lanes}",
                f"  {self._store(v, f'%out{r}_{v}', pointer)}",
            ]
        return lines

    def _mask(self, v: int) -> str | None:
        """The lane mask of vector v of a row, or None when all lanes are in C."""
        valid = self.n - v * self.lanes
        if valid >= self.lanes:
            return None
        bits = ", ".join("i1 true" if lane < valid else "i1 false" for lane in range(self.lanes))
        return f"<{bits}>"

    def _load(self, v: int, pointer: str) -> str:
        vec, mask = self.vec, self._mask(v)
        if mask is None:
            return f"load {vec}, ptr {pointer}, align 4"
        return (
            f"call {vec} @llvm.masked.load.v{self.lanes}f32.p0(ptr {pointer}, i32 4, "
            f"<{self.lanes} x i1> {mask}, {vec} zeroinitializer)"
        )

    def _store(self, v: int, value: str, pointer: str) -> str:
        vec, mask = self.vec, self._mask(v)
        if mask is None:
            return f"store {vec} {value}, ptr {pointer}, align 4"
        return (
            f"call void @llvm.masked.store.v{self.lanes}f32.p0({vec} {value}, ptr {pointer}, "
            f"i32 4, <{self.lanes} x i1> {mask})"
        )


def _intrinsic_declarations(lanes: set[int]) -> str:
    text = (
        "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)\n"
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)\n"
    )
    for n in sorted(lanes):
        vec, mask = f"<{n} x float>", f"<{n} x i1>"
        text += (
            f"declare {vec} @llvm.fmuladd.v{n}f32({vec}, {vec}, {vec})\n"
            f"declare {vec} @llvm.masked.load.v{n}f32.p0(ptr, i32, {mask}, {vec})\n"
            f"declare void @llvm.masked.store.v{n}f32.p0({vec}, ptr, i32, {mask})\n"
        )
    return text


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
    body = "".join(kernel.llvm_ir() for kernel in defined.values())
    # noinline: a kernel calls its microkernels once per register tile; inlined
    # into every call site they multiplied the JIT's time for no speed
    return (
        _intrinsic_declarations({k.lanes for k in defined.values()})
        + body
        + 'attributes #0 = { noinline nounwind "frame-pointer"="none" }\n'
    )
