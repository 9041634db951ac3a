"""Batch-reduce GEMM statements: the microkernel calls the matmul and
convolution templates emit."""

from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    IntegerAttr,
    IntegerType,
    i1,
    i32,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)

from graphcompiler.dialects.tir.statements import StatementOp
from graphcompiler.dialects.tir.types import (
    MAX_LANES,
    PtrType,
    TirTensorType,
    _require,
    is_integer,
    lanes_of,
)
from graphcompiler.dialects.tir.verify import _constant_int


class BrgemmSizes(NamedTuple):
    """The GEMM of a brgemm: C[m, n] (+)= A[m, k] x B[k, n], with the
    leading dimensions (row strides, in elements) of A, B and C."""

    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int


class BrgemmBase(StatementOp):
    """C[M, N] (+)= sum over b < batch of A_b[M, K] x B_b[N, K]... with leading
    dimensions lda/ldb/ldc (row-major: A_b[m, k] at m * lda + k)."""

    c = operand_def(TirTensorType)
    batch = operand_def()
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    lda = prop_def(IntegerAttr[I64])
    ldb = prop_def(IntegerAttr[I64])
    ldc = prop_def(IntegerAttr[I64])
    accumulate = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    @property
    def gemm_sizes(self) -> BrgemmSizes:
        """m, n, k, lda, ldb and ldc as ints."""
        attributes = (self.m, self.n, self.k, self.lda, self.ldb, self.ldc)
        return BrgemmSizes(*(attribute.value.data for attribute in attributes))

    def sizes(self) -> dict[str, int]:
        """`gemm_sizes` keyed by property name."""
        return self.gemm_sizes._asdict()

    @property
    def quads(self) -> bool:
        """`u8_s8_quads`: four bytes to each i32 of A (u8) and B (s8)."""
        return bool(self.u8_s8_quads.value.data)

    @property
    def accumulates(self) -> bool:
        """`accumulate`: C is added to rather than overwritten."""
        return bool(self.accumulate.value.data)

    def check_common(self) -> BrgemmSizes:
        sizes = self.gemm_sizes
        for name, size in (("m", sizes.m), ("n", sizes.n), ("k", sizes.k)):
            _require(size > 0, f"{name} = {size} must be positive")
        _require(sizes.lda >= sizes.k, f"lda = {sizes.lda} is smaller than k = {sizes.k}")
        _require(sizes.ldb >= sizes.n, f"ldb = {sizes.ldb} is smaller than n = {sizes.n}")
        _require(sizes.ldc >= sizes.n, f"ldc = {sizes.ldc} is smaller than n = {sizes.n}")
        _require(
            is_integer(self.batch.type) and lanes_of(self.batch.type) == 1,
            f"the batch count has type {self.batch.type}, expected an integer",
        )
        c_type = self.c.type
        footprint = (sizes.m - 1) * sizes.ldc + sizes.n
        _require(
            footprint <= c_type.element_count(),
            f"C needs {footprint} elements (m, n, ldc) but {c_type} has {c_type.element_count()}",
        )
        return sizes

    def check_inputs(self, a_element: Attribute, b_element: Attribute) -> None:
        _require(
            a_element == b_element, f"A and B element types differ: {a_element} vs {b_element}"
        )
        expected_c = i32 if isinstance(a_element, IntegerType) else Float32Type()
        _require(
            self.c.type.element_type == expected_c,
            f"C must have element type {expected_c} for {a_element} inputs, got {self.c.type.element_type}",
        )


@irdl_op_definition
class BrgemmOp(BrgemmBase):
    """Intrinsic brgemm: A_b = A + b * stride_a, B_b = B + b * stride_b.

    Example:

        %batch = tir.const 2 : index
        tir.brgemm %A, %B, %C, %batch {m = 4 : i64, n = 8 : i64, k = 16 : i64, lda = 16 : i64, ldb = 8 : i64, ldc = 8 : i64, stride_a = 64 : i64, stride_b = 128 : i64} : !tir.tensor<128xf32>, !tir.tensor<256xf32>, !tir.tensor<32xf32>, index
    """

    name = "tir.brgemm"
    a = operand_def(TirTensorType)
    b = operand_def(TirTensorType)
    stride_a = prop_def(IntegerAttr[I64])
    stride_b = prop_def(IntegerAttr[I64])
    assembly_format = "$a `,` $b `,` $c `,` $batch attr-dict `:` type($a) `,` type($b) `,` type($c) `,` type($batch)"
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def batch_strides(self) -> tuple[int, int]:
        """(stride_a, stride_b): the elements between A_b and A_b+1, B_b and B_b+1."""
        return self.stride_a.value.data, self.stride_b.value.data

    def verify_(self) -> None:
        sizes = self.check_common()
        self.check_inputs(self.a.type.element_type, self.b.type.element_type)
        batch = _constant_int(self.batch)
        _require(batch is None or batch > 0, f"the batch count {batch} must be positive")
        last = (batch or 1) - 1
        stride_a, stride_b = self.batch_strides
        for name, tensor, rows, cols, lead, stride_name, stride in (
            ("A", self.a, sizes.m, sizes.k, sizes.lda, "stride_a", stride_a),
            ("B", self.b, sizes.k, sizes.n, sizes.ldb, "stride_b", stride_b),
        ):
            tensor_type = tensor.type
            footprint = last * stride + (rows - 1) * lead + cols
            _require(
                footprint <= tensor_type.element_count(),
                f"{name} needs {footprint} elements (batch, {stride_name}, shape, leading dim) but {tensor_type} has {tensor_type.element_count()}",
            )


@irdl_op_definition
class ListBrgemmOp(BrgemmBase):
    """Intrinsic list_brgemm: A_b and B_b are the pointers a_list[b], b_list[b].

    Example:

        %batch = tir.const 2 : index
        tir.list_brgemm %As, %Bs, %C, %batch {m = 4 : i64, n = 4 : i64, k = 4 : i64, lda = 4 : i64, ldb = 4 : i64, ldc = 4 : i64, a_type = f32, b_type = f32} : !tir.tensor<2x!tir.ptr>, !tir.tensor<2x!tir.ptr>, !tir.tensor<16xf32>, index
    """

    name = "tir.list_brgemm"
    a_list = operand_def(TirTensorType)
    b_list = operand_def(TirTensorType)
    a_type = prop_def(AnyAttr())
    b_type = prop_def(AnyAttr())
    assembly_format = "$a_list `,` $b_list `,` $c `,` $batch attr-dict `:` type($a_list) `,` type($b_list) `,` type($c) `,` type($batch)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        self.check_common()
        lists = (("a_list", self.a_list), ("b_list", self.b_list))
        for name, pointers in lists:
            _require(
                isinstance(pointers.type.element_type, PtrType),
                f"{name} must be a tensor of !tir.ptr, got {pointers.type}",
            )
        self.check_inputs(self.a_type, self.b_type)
        batch = _constant_int(self.batch)
        if batch is not None:
            for name, pointers in lists:
                count = pointers.type.element_count()
                _require(
                    batch <= count,
                    f"{name} holds {count} pointers, fewer than the batch count {batch}",
                )


MAX_TILE_ACCUMULATORS = 256
"""A generated microkernel unrolls its tile: beyond this it is not a register tile."""


class BrgemmTileSizes(NamedTuple):
    """The sizes of a brgemm_tile (see BrgemmTileOp)."""

    m: int
    n: int
    k: int
    lanes: int
    a_row: int
    a_k: int
    ldb: int
    ldc: int


@irdl_op_definition
class BrgemmTileOp(StatementOp):
    """Intrinsic brgemm_tile: one register tile of a batch-reduce GEMM,
    C[m, n] (+)= sum over the offset pairs (a_off, b_off) of the tap grid of
    A_t x B_t with A_t[i, l] = a[a_off + i * a_row + l * a_k],
    B_t[l, j] = b[b_off + l * ldb + j], C[i, j] = c[i * ldc + j]. `taps`
    holds (count, a_step, b_step) triples, outer first: the grid is every
    (i_0, i_1, ...) with 0 <= i_d < count_d, at offsets
    (sum i_d * a_step_d, sum i_d * b_step_d); without taps, the one pair
    (0, 0). A convolution's filter rows and columns are two tap levels,
    loops in the microkernel, not a list that grows with the filter. Lowered to a
    microkernel generated for the target (runtime/microkernels.py): m x
    ceil(n / lanes) vector accumulators, broadcast-A/FMA, lanes past n masked.
    With i32 operands each A and B element is a pair (K steps 2l and 2l + 1,
    low half first): of i16 with an i32 C, which accumulates the pairs' dot
    products in i32; of bf16 with an f32 C, which accumulates them in f32.
    With `u8_s8_quads`, each is four bytes instead (K steps 4l to 4l + 3,
    lowest byte first), u8 in A and s8 in B, their dot products summed into
    an i32 C (VNNI's `vpdpbusd`).
    With `prefetch_b`, K step l of the tap at B offset b_off also asks for
    prefetch_b[b_off + (l / prefetch_every) * ldb] (prefetch_every: 1 unless
    set) to be brought into L2: the caller points it at the B block the
    next tiles read (a matmul's next panel, a convolution's next input
    blocks' weights), which then arrives while this tile computes; with
    prefetch_every > 1 the tile asks for ceil(k / prefetch_every) rows of
    each tap, so that the tiles sharing a panel split its next one.

    Example:

        tir.brgemm_tile %A, %B, %C {m = 4 : i64, n = 16 : i64, k = 8 : i64, lanes = 16 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 16 : i64} : !tir.tensor<32xf32>, !tir.tensor<128xf32>, !tir.tensor<64xf32>
    """

    name = "tir.brgemm_tile"
    a = operand_def(TirTensorType)
    b = operand_def(TirTensorType)
    c = operand_def(TirTensorType)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    lanes = prop_def(IntegerAttr[I64])
    a_row = prop_def(IntegerAttr[I64])
    a_k = prop_def(IntegerAttr[I64])
    ldb = prop_def(IntegerAttr[I64])
    ldc = prop_def(IntegerAttr[I64])
    taps = opt_prop_def(DenseArrayBase)
    a_wrap = opt_prop_def(DenseArrayBase)
    """[rows, step]: A's rows come in runs of `rows` (a_row apart), each run
    `step` after the previous (a tile of whole output rows of a convolution)."""
    ldc_vector = opt_prop_def(IntegerAttr[I64])
    """Elements between a C row's consecutive vectors (default: lanes,
    the row contiguous); a channel-blocked output's blocks are planes apart."""
    accumulate = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    accumulate_if = opt_operand_def(i1)
    """A run-time accumulate flag (e.g. `K block != 0`), in place of `accumulate`."""
    prefetch_b = opt_operand_def(TirTensorType)
    prefetch_every = opt_prop_def(IntegerAttr[I64])
    """K steps per prefetched B row (default 1), with `prefetch_b`."""
    u8_s8_quads = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    """A's and B's i32 elements hold four bytes each: u8 in A, s8 in B."""
    assembly_format = (
        "$a `,` $b `,` $c (`accumulate_if` $accumulate_if^)? "
        "(`prefetch` $prefetch_b^ `:` type($prefetch_b))? attr-dict `:` "
        "type($a) `,` type($b) `,` type($c)"
    )
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    @property
    def tile_sizes(self) -> BrgemmTileSizes:
        """m, n, k, lanes, a_row, a_k, ldb and ldc as ints."""
        attributes = (self.m, self.n, self.k, self.lanes, self.a_row, self.a_k, self.ldb, self.ldc)
        return BrgemmTileSizes(*(attribute.value.data for attribute in attributes))

    def size(self, name: str) -> int:
        """The integer property `name` (`tile_sizes` has them all, typed)."""
        return getattr(self, name).value.data

    @property
    def prefetch_rows_step(self) -> int:
        """`prefetch_every`, or 1: K steps per prefetched row of B."""
        return self.size("prefetch_every") if self.prefetch_every is not None else 1

    @property
    def quads(self) -> bool:
        """`u8_s8_quads`: four bytes to each i32 of A (u8) and B (s8)."""
        return bool(self.u8_s8_quads.value.data)

    @property
    def accumulates(self) -> bool:
        """`accumulate`: C is added to rather than overwritten (unless
        `accumulate_if` decides at run time)."""
        return bool(self.accumulate.value.data)

    @property
    def a_row_runs(self) -> tuple[int, int]:
        """`a_wrap` as (rows, step); (0, 0) without it."""
        if self.a_wrap is None:
            return 0, 0
        rows, step = (int(x) for x in self.a_wrap.get_values())
        return rows, step

    def a_row_offset(self, r: int) -> int:
        """Where row r of A starts, from the tap's offset."""
        rows, step = self.a_row_runs
        a_row = self.size("a_row")
        return r * a_row if not rows else r // rows * step + r % rows * a_row

    @property
    def c_vector_stride(self) -> int:
        """`ldc_vector`, or the lanes (a contiguous C row)."""
        return self.size("ldc_vector") if self.ldc_vector is not None else self.size("lanes")

    def tap_levels(self) -> tuple[tuple[int, int, int], ...]:
        """The (count, a_step, b_step) levels of the tap grid, outer first."""
        if self.taps is None:
            return ()
        flat = [int(x) for x in self.taps.get_values()]
        return tuple(zip(flat[0::3], flat[1::3], flat[2::3], strict=True))

    def verify_(self) -> None:
        m, n, k, lanes, a_row, a_k, ldb, ldc = self.tile_sizes
        for name, value in (("m", m), ("n", n), ("k", k), ("lanes", lanes)):
            _require(value > 0, f"{name} = {value} must be positive")
        _require(lanes <= MAX_LANES, f"lanes = {lanes} is more than {MAX_LANES}")
        tile = m * -(-n // lanes)
        _require(
            tile <= MAX_TILE_ACCUMULATORS,
            f"a {m} x {n} tile needs {tile} vector accumulators, more than {MAX_TILE_ACCUMULATORS}",
        )
        vectors = -(-n // lanes)
        ldc_vector = self.c_vector_stride
        _require(ldc_vector >= lanes, f"ldc_vector = {ldc_vector} must be at least lanes = {lanes}")
        row = (vectors - 1) * ldc_vector + n - (vectors - 1) * lanes  # one C row's extent
        _require(ldb >= n, f"ldb = {ldb} must be at least n = {n}")
        if ldc_vector == lanes:  # one row (a channel-blocked pixel) has no row stride to check
            _require(m == 1 or ldc >= n, f"ldc = {ldc} must be at least n = {n}")
        else:  # a vector column's rows end before the next column starts
            _require(
                ldc >= lanes and (m - 1) * ldc + lanes <= ldc_vector,
                f"ldc = {ldc} must be at least lanes = {lanes}, and {m} rows of it fit "
                f"in ldc_vector = {ldc_vector}",
            )
        _require(
            self.accumulate_if is None or not self.accumulates,
            "accumulate and accumulate_if are exclusive",
        )
        if self.taps is not None:
            count = len(self.taps.get_values())
            _require(count > 0 and count % 3 == 0, "taps must hold (count, A step, B step) triples")
        levels = self.tap_levels()
        _require(
            all(count > 0 and a >= 0 and b >= 0 for count, a, b in levels),
            "tap counts must be positive and steps not negative",
        )
        last_a = sum((count - 1) * a_step for count, a_step, _ in levels)  # the farthest tap
        last_b = sum((count - 1) * b_step for count, _, b_step in levels)
        if self.a_wrap is not None:
            _require(len(self.a_wrap.get_values()) == 2, "a_wrap must hold [rows, step]")
            rows, step = self.a_row_runs
            _require(
                rows > 0 and step >= 0,
                f"a_wrap rows {rows} must be positive, step {step} not negative",
            )
        farthest_row = max(self.a_row_offset(r) for r in range(m))
        prefetched = () if self.prefetch_b is None else (self.prefetch_b,)
        every = self.prefetch_rows_step
        _require(every > 0, f"prefetch_every = {every} must be positive")
        _require(
            self.prefetch_every is None or bool(prefetched),
            "prefetch_every needs a prefetch operand",
        )
        element = self.c.type.element_type
        _require(
            element in (Float32Type(), i32),
            f"brgemm_tile computes in f32 or on i16 pairs in i32, got {self.c.type}",
        )
        operand_element = self.a.type.element_type
        _require(
            operand_element in (element, i32),
            f"{self.a.type} is neither C's element type {element} nor i32 pairs",
        )
        for operand in (self.b, *prefetched):
            _require(
                operand.type.element_type == operand_element,
                f"{operand.type} differs from A's element type {operand_element}",
            )
        _require(
            not self.quads or operand_element == element == i32,
            "u8_s8_quads needs i32 A, B and C",
        )
        for name, footprint, tensor in (
            ("A", last_a + farthest_row + (k - 1) * a_k + 1, self.a),
            ("B", last_b + (k - 1) * ldb + n, self.b),
            ("C", (m - 1) * ldc + row, self.c),
            *(
                (("prefetch", last_b + (k - 1) // every * ldb + 1, self.prefetch_b),)
                if prefetched
                else ()
            ),
        ):
            count = tensor.type.element_count()
            _require(
                footprint <= count,
                f"{name} needs {footprint} elements but {tensor.type} has {count}",
            )
