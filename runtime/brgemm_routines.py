"""Whole batch-reduce GEMMs (`tir.brgemm`, `tir.list_brgemm`) built from the
generated register-tile microkernels: the one brgemm back end.

A `BrgemmRoutine` computes C[m, n] (+)= sum over b < batch of A_b x B_b,
A_b[i, l] = A_b[i * lda + l], B_b[l, j] = B_b[l * ldb + j], C[i * ldc + j],
where A_b = A + b * stride_a (or the pointer a_list[b] for a listed one),
and likewise B_b. Its LLVM IR loops over the batch and covers C with the
`rows` x `vectors * lanes` register tile the schedule picks (tails take
smaller tiles, masked along n), each tile a `Microkernel` call. Static
sizes are part of the description, so every routine is specialized to its
shape, as oneDNN JIT-generates one brgemm kernel per shape.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from graphcompiler.runtime.microkernels import GeneratedKernel, Microkernel

PREFIX = "gc_brgemm_f32_"


@dataclass(frozen=True)
class BrgemmRoutine:
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    lanes: int
    rows: int
    """Register tile rows."""
    vectors: int
    """Register tile width in vectors."""
    listed: bool = False
    """A and B are lists of block pointers (`tir.list_brgemm`)."""

    @property
    def name(self) -> str:
        fields = "_".join(
            f"{key}{value}" for key, value in self.fields().items() if key != "listed"
        )
        return f"{PREFIX}{fields}{'_list' if self.listed else ''}"

    def fields(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_fields(fields: dict[str, Any]) -> BrgemmRoutine:
        return BrgemmRoutine(**{**fields, "listed": bool(fields.get("listed", False))})

    def _row_ranges(self) -> list[tuple[int, int, int]]:
        """(first row, tiles, rows per tile): the full tiles, then the rest."""
        full, rest = divmod(self.m, self.rows)
        return [r for r in ((0, full, self.rows), (full * self.rows, 1, rest)) if r[1] and r[2]]

    def _column_ranges(self) -> list[tuple[int, int, int]]:
        width = self.vectors * self.lanes
        full, rest = divmod(self.n, width)
        return [c for c in ((0, full, width), (full * width, 1, rest)) if c[1] and c[2]]

    def _tile(self, rows: int, columns: int) -> Microkernel:
        return Microkernel(rows, columns, self.lanes, self.lda, 1, self.ldb, self.ldc)

    def microkernels(self) -> tuple[Microkernel, ...]:
        """The tile kernels this routine calls."""
        return tuple(
            self._tile(rows, columns)
            for _, _, rows in self._row_ranges()
            for _, _, columns in self._column_ranges()
        )

    def llvm_ir(self) -> str:
        """`void NAME(ptr A, ptr B, ptr C, i64 batch, i1 accumulate)`: with no
        batch (batch <= 0), C becomes 0 unless `accumulate`."""
        lines = [
            f"define void @{self.name}(ptr %A, ptr %B, ptr noalias %C, i64 %batch, i1 %accumulate) #0 {{",
            "entry:",
            "  %has_batch = icmp sgt i64 %batch, 0",
            "  br i1 %has_batch, label %batch_loop, label %empty",
            "empty:",
            "  br i1 %accumulate, label %done, label %zero",
            "zero:",
        ]
        for row in range(self.m):
            lines += [
                f"  %zrow{row} = getelementptr inbounds float, ptr %C, i64 {row * self.ldc}",
                f"  call void @llvm.memset.p0.i64(ptr %zrow{row}, i8 0, i64 {self.n * 4}, i1 false)",
            ]
        lines += ["  br label %done", "batch_loop:"]
        lines += [
            "  %b = phi i64 [ 0, %entry ], [ %b_next, %tiles_done ]",
            "  %later = icmp sgt i64 %b, 0",
            "  %acc = or i1 %later, %accumulate",
        ]
        for operand, stride in (("A", self.stride_a), ("B", self.stride_b)):
            if self.listed:
                lines += [
                    f"  %{operand}_slot = getelementptr ptr, ptr %{operand}, i64 %b",
                    f"  %{operand}_b = load ptr, ptr %{operand}_slot",
                ]
            else:
                lines += [
                    f"  %{operand}_offset = mul i64 %b, {stride}",
                    f"  %{operand}_b = getelementptr float, ptr %{operand}, i64 %{operand}_offset",
                ]
        counters = []
        for index, (row_start, row_tiles, rows) in enumerate(self._row_ranges()):
            for jndex, (column_start, column_tiles, columns) in enumerate(self._column_ranges()):
                label = f"t{index}_{jndex}"
                counters += [f"  %{label}_i_var = alloca i64", f"  %{label}_j_var = alloca i64"]
                lines += self._tile_loops(
                    label, row_start, row_tiles, rows, column_start, column_tiles, columns
                )
        lines[2:2] = counters  # in the entry block: one stack slot each, not one per batch
        lines += [
            "  br label %tiles_done",
            "tiles_done:",
            "  %b_next = add nsw i64 %b, 1",
            "  %b_more = icmp slt i64 %b_next, %batch",
            "  br i1 %b_more, label %batch_loop, label %done",
            "done:",
            "  ret void",
            "}",
        ]
        return "\n".join(lines) + "\n"

    def _tile_loops(
        self,
        label: str,
        row_start: int,
        row_tiles: int,
        rows: int,
        column_start: int,
        column_tiles: int,
        columns: int,
    ) -> list[str]:
        """Loops over `row_tiles` x `column_tiles` tiles of rows x columns
        from (row_start, column_start), one microkernel call each; the loop
        counters live in the entry block's allocas, which LLVM's mem2reg turns
        into registers."""
        kernel = self._tile(rows, columns)
        i, j = f"%{label}_i", f"%{label}_j"
        return [
            f"  store i64 0, ptr {i}_var",
            f"  br label %{label}_rows",
            f"{label}_rows:",
            f"  {i} = load i64, ptr {i}_var",
            f"  store i64 0, ptr {j}_var",
            f"  br label %{label}_columns",
            f"{label}_columns:",
            f"  {j} = load i64, ptr {j}_var",
            f"  {i}_row = mul i64 {i}, {rows}",
            f"  {i}_r = add i64 {i}_row, {row_start}",
            f"  {j}_col = mul i64 {j}, {columns}",
            f"  {j}_c = add i64 {j}_col, {column_start}",
            f"  %{label}_a_at = mul i64 {i}_r, {self.lda}",
            f"  %{label}_a = getelementptr float, ptr %A_b, i64 %{label}_a_at",
            f"  %{label}_b = getelementptr float, ptr %B_b, i64 {j}_c",
            f"  %{label}_c_row = mul i64 {i}_r, {self.ldc}",
            f"  %{label}_c_at = add i64 %{label}_c_row, {j}_c",
            f"  %{label}_c = getelementptr float, ptr %C, i64 %{label}_c_at",
            f"  call void @{kernel.name}(ptr %{label}_a, ptr %{label}_b, ptr %{label}_c, i64 {self.k}, i1 %acc)",
            f"  {j}_next = add i64 {j}, 1",
            f"  store i64 {j}_next, ptr {j}_var",
            f"  {j}_more = icmp slt i64 {j}_next, {column_tiles}",
            f"  br i1 {j}_more, label %{label}_columns, label %{label}_row_done",
            f"{label}_row_done:",
            f"  {i}_next = add i64 {i}, 1",
            f"  store i64 {i}_next, ptr {i}_var",
            f"  {i}_more = icmp slt i64 {i}_next, {row_tiles}",
            f"  br i1 {i}_more, label %{label}_rows, label %{label}_done",
            f"{label}_done:",
        ]


KERNEL_KINDS: dict[str, type] = {"microkernel": Microkernel, "brgemm": BrgemmRoutine}
"""Every kind of generated kernel, by the name its parameters are stored
under (IR attributes `gc.<kind>`, compile-cache entries)."""


def kind_of(kernel: GeneratedKernel) -> str:
    return next(name for name, kind in KERNEL_KINDS.items() if isinstance(kernel, kind))
