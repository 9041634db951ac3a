"""Generated brgemm microkernels: one description, any register tile.

`tir.packed_brgemm` computes a register tile C[m, n] (+)= A[m, k] x B[k, n]
where B is a packed panel (row r of the panel at B + r * nr, zero padded to
nr columns). Its lowering calls `gc_ukernel_f32_...`, a function whose name
spells its static parameters; the JIT generates the LLVM IR of every such
function the program declares (`link_microkernels`), the way oneDNN's brgemm
JIT-generates a kernel per shape.

The kernel body is the classic broadcast-A / FMA loop: m x v vector
accumulators (v = ceil(n / lanes)) stay in registers for the whole K loop;
each step loads v vectors of the B panel, broadcasts m elements of A and
issues m * v fused multiply-adds. Columns past n are neither loaded from nor
stored to C (masked vectors), so tails need no scalar code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFIX = "gc_ukernel_f32_"
_NAME = re.compile(
    rf"{PREFIX}m(\d+)_n(\d+)_nr(\d+)_l(\d+)_ar(\d+)_ak(\d+)_ldc(\d+)"
)
_DECLARED = re.compile(rf"declare\s+void\s+@\"?({PREFIX}[A-Za-z0-9_]+)\"?\s*\(")


@dataclass(frozen=True)
class Microkernel:
    """A register tile: C[m, n] at C + i * ldc + j; A[i, k] at
    A + i * a_row + k * a_k (a_row = lda, a_k = 1; transposed A swaps them);
    the B panel holds nr floats a row; vectors have `lanes` floats."""

    m: int
    n: int
    nr: int
    lanes: int
    a_row: int
    a_k: int
    ldc: int

    @property
    def name(self) -> str:
        return (
            f"{PREFIX}m{self.m}_n{self.n}_nr{self.nr}_l{self.lanes}"
            f"_ar{self.a_row}_ak{self.a_k}_ldc{self.ldc}"
        )

    @staticmethod
    def from_name(name: str) -> Microkernel | None:
        match = _NAME.fullmatch(name)
        return Microkernel(*(int(g) for g in match.groups())) if match else None

    @property
    def vectors(self) -> int:
        return -(-self.n // self.lanes)

    def llvm_ir(self) -> str:
        """`void NAME(ptr A, ptr B, ptr C, i64 K, i1 accumulate)`."""
        lanes, vec = self.lanes, f"<{self.lanes} x float>"
        rows, vectors = range(self.m), range(self.vectors)
        lines = [
            f"define void @{self.name}(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %k, i1 %accumulate) #0 {{",
            "entry:",
            "  %empty = icmp sle i64 %k, 0",
            "  br i1 %empty, label %store, label %loop",
            "loop:",
            "  %kk = phi i64 [ 0, %entry ], [ %next, %loop ]",
        ]
        for r in rows:
            for v in vectors:
                lines.append(f"  %acc{r}_{v} = phi {vec} [ zeroinitializer, %entry ], [ %fma{r}_{v}, %loop ]")
        lines.append(f"  %brow = mul i64 %kk, {self.nr}")
        for v in vectors:
            lines += [
                f"  %boff{v} = add i64 %brow, {v * lanes}",
                f"  %bptr{v} = getelementptr inbounds float, ptr %b, i64 %boff{v}",
                f"  %b{v} = load {vec}, ptr %bptr{v}, align 4",
            ]
        lines.append(f"  %acol = mul i64 %kk, {self.a_k}")
        for r in rows:
            lines += [
                f"  %aoff{r} = add i64 %acol, {r * self.a_row}",
                f"  %aptr{r} = getelementptr inbounds float, ptr %a, i64 %aoff{r}",
                f"  %a{r} = load float, ptr %aptr{r}, align 4",
                f"  %ains{r} = insertelement {vec} poison, float %a{r}, i64 0",
                f"  %abc{r} = shufflevector {vec} %ains{r}, {vec} poison, <{lanes} x i32> zeroinitializer",
            ]
            for v in vectors:
                lines.append(
                    f"  %fma{r}_{v} = call {vec} @llvm.fmuladd.v{lanes}f32({vec} %abc{r}, {vec} %b{v}, {vec} %acc{r}_{v})"
                )
        lines += [
            "  %next = add nuw nsw i64 %kk, 1",
            "  %more = icmp slt i64 %next, %k",
            "  br i1 %more, label %loop, label %store",
            "store:",
        ]
        for r in rows:
            for v in vectors:
                lines.append(
                    f"  %sum{r}_{v} = phi {vec} [ zeroinitializer, %entry ], [ %fma{r}_{v}, %loop ]"
                )
        lines.append("  br i1 %accumulate, label %add, label %write")
        lines.append("add:")
        for r in rows:
            for v in vectors:
                pointer = f"%cptr_a{r}_{v}"
                lines.append(
                    f"  {pointer} = getelementptr inbounds float, ptr %c, i64 {r * self.ldc + v * lanes}"
                )
                lines.append(f"  %old{r}_{v} = {self._load_c(v, pointer)}")
                lines.append(f"  %new{r}_{v} = fadd {vec} %sum{r}_{v}, %old{r}_{v}")
        lines.append("  br label %write")
        lines.append("write:")
        for r in rows:
            for v in vectors:
                lines.append(
                    f"  %out{r}_{v} = phi {vec} [ %sum{r}_{v}, %store ], [ %new{r}_{v}, %add ]"
                )
        for r in rows:
            for v in vectors:
                pointer = f"%cptr_w{r}_{v}"
                lines.append(
                    f"  {pointer} = getelementptr inbounds float, ptr %c, i64 {r * self.ldc + v * lanes}"
                )
                lines.append(f"  {self._store_c(v, f'%out{r}_{v}', pointer)}")
        lines += ["  ret void", "}"]
        return "\n".join(lines) + "\n"

    def _mask(self, v: int) -> str | None:
        """The lane mask of vector v of a row, or None when all lanes are in C."""
        valid = self.n - v * self.lanes
        if valid >= self.lanes:
            return None
        bits = ", ".join("i1 true" if lane < valid else "i1 false" for lane in range(self.lanes))
        return f"<{bits}>"

    def _load_c(self, v: int, pointer: str) -> str:
        vec, mask = f"<{self.lanes} x float>", self._mask(v)
        if mask is None:
            return f"load {vec}, ptr {pointer}, align 4"
        return (
            f"call {vec} @llvm.masked.load.v{self.lanes}f32.p0(ptr {pointer}, i32 4, "
            f"<{self.lanes} x i1> {mask}, {vec} zeroinitializer)"
        )

    def _store_c(self, v: int, value: str, pointer: str) -> str:
        vec, mask = f"<{self.lanes} x float>", self._mask(v)
        if mask is None:
            return f"store {vec} {value}, ptr {pointer}, align 4"
        return (
            f"call void @llvm.masked.store.v{self.lanes}f32.p0({vec} {value}, ptr {pointer}, "
            f"i32 4, <{self.lanes} x i1> {mask})"
        )


def _intrinsic_declarations(lanes: set[int]) -> str:
    text = ""
    for n in sorted(lanes):
        vec, mask = f"<{n} x float>", f"<{n} x i1>"
        text += (
            f"declare {vec} @llvm.fmuladd.v{n}f32({vec}, {vec}, {vec})\n"
            f"declare {vec} @llvm.masked.load.v{n}f32.p0(ptr, i32, {mask}, {vec})\n"
            f"declare void @llvm.masked.store.v{n}f32.p0({vec}, ptr, i32, {mask})\n"
        )
    return text


def declared_microkernels(llvm_ir: str) -> list[Microkernel]:
    """The microkernels an LLVM IR program declares (and needs defined)."""
    kernels = []
    for name in dict.fromkeys(_DECLARED.findall(llvm_ir)):
        kernel = Microkernel.from_name(name)
        if kernel is not None:
            kernels.append(kernel)
    return kernels


def microkernel_module(kernels: list[Microkernel]) -> str:
    """One LLVM IR module defining `kernels` (empty text when none)."""
    if not kernels:
        return ""
    body = "".join(kernel.llvm_ir() for kernel in kernels)
    return (
        _intrinsic_declarations({k.lanes for k in kernels})
        + body
        + 'attributes #0 = { nounwind "frame-pointer"="none" }\n'
    )
