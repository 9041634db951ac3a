"""Batch-reduce GEMM statements: the microkernel calls the matmul and
convolution templates emit."""

from __future__ import annotations

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

    def sizes(self) -> dict[str, int]:
        return {
            name: getattr(self, name).value.data for name in ("m", "n", "k", "lda", "ldb", "ldc")
        }

    def check_common(self) -> dict[str, int]:
        sizes = self.sizes()
        for name in ("m", "n", "k"):
            _require(sizes[name] > 0, f"{name} = {sizes[name]} must be positive")
        _require(
            sizes["lda"] >= sizes["k"], f"lda = {sizes['lda']} is smaller than k = {sizes['k']}"
        )
        _require(
            sizes["ldb"] >= sizes["n"], f"ldb = {sizes['ldb']} is smaller than n = {sizes['n']}"
        )
        _require(
            sizes["ldc"] >= sizes["n"], f"ldc = {sizes['ldc']} is smaller than n = {sizes['n']}"
        )
        _require(
            is_integer(self.batch.type) and lanes_of(self.batch.type) == 1,
            f"the batch count has type {self.batch.type}, expected an integer",
        )
        c_type = self.c.type
        footprint = (sizes["m"] - 1) * sizes["ldc"] + sizes["n"]
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
    """Intrinsic brgemm: A_b = A + b * stride_a, B_b = B + b * stride_b."""

    name = "tir.brgemm"
    a = operand_def(TirTensorType)
    b = operand_def(TirTensorType)
    stride_a = prop_def(IntegerAttr[I64])
    stride_b = prop_def(IntegerAttr[I64])
    assembly_format = "$a `,` $b `,` $c `,` $batch attr-dict `:` type($a) `,` type($b) `,` type($c) `,` type($batch)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        sizes = self.check_common()
        self.check_inputs(self.a.type.element_type, self.b.type.element_type)
        batch = _constant_int(self.batch)
        _require(batch is None or batch > 0, f"the batch count {batch} must be positive")
        last = (batch or 1) - 1
        for name, rows, cols, lead, stride in (
            ("A", sizes["m"], sizes["k"], sizes["lda"], "stride_a"),
            ("B", sizes["k"], sizes["n"], sizes["ldb"], "stride_b"),
        ):
            tensor_type = (self.a if name == "A" else self.b).type
            footprint = last * getattr(self, stride).value.data + (rows - 1) * lead + cols
            _require(
                footprint <= tensor_type.element_count(),
                f"{name} needs {footprint} elements (batch, {stride}, shape, leading dim) but {tensor_type} has {tensor_type.element_count()}",
            )


@irdl_op_definition
class ListBrgemmOp(BrgemmBase):
    """Intrinsic list_brgemm: A_b and B_b are the pointers a_list[b], b_list[b]."""

    name = "tir.list_brgemm"
    a_list = operand_def(TirTensorType)
    b_list = operand_def(TirTensorType)
    a_type = prop_def(AnyAttr())
    b_type = prop_def(AnyAttr())
    assembly_format = "$a_list `,` $b_list `,` $c `,` $batch attr-dict `:` type($a_list) `,` type($b_list) `,` type($c) `,` type($batch)"
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        self.check_common()
        for name in ("a_list", "b_list"):
            _require(
                isinstance(getattr(self, name).type.element_type, PtrType),
                f"{name} must be a tensor of !tir.ptr, got {getattr(self, name).type}",
            )
        self.check_inputs(self.a_type, self.b_type)
        batch = _constant_int(self.batch)
        if batch is not None:
            for name in ("a_list", "b_list"):
                count = getattr(self, name).type.element_count()
                _require(
                    batch <= count,
                    f"{name} holds {count} pointers, fewer than the batch count {batch}",
                )


MAX_TILE_ACCUMULATORS = 256
"""A generated microkernel unrolls its tile: beyond this it is not a register tile."""


@irdl_op_definition
class BrgemmTileOp(StatementOp):
    """Intrinsic brgemm_tile: one register tile of a batch-reduce GEMM (f32),
    C[m, n] (+)= sum over (a_off, b_off) in `offsets` (default one pair
    (0, 0)) of A_b x B_b with A_b[i, l] = a[a_off + i * a_row + l * a_k],
    B_b[l, j] = b[b_off + l * ldb + j], C[i, j] = c[i * ldc + j]. Lowered to a
    microkernel generated for the target (runtime/microkernels.py): m x
    ceil(n / lanes) vector accumulators, broadcast-A/FMA, lanes past n masked.
    With `prefetch_b`, K step l also asks for prefetch_b[l * ldb] to be
    brought into L2: the caller points it at the B block the next tiles read
    (a matmul's next panel), which then arrives while this tile computes."""

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
    offsets = opt_prop_def(DenseArrayBase)
    accumulate = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    accumulate_if = opt_operand_def(i1)
    """A run-time accumulate flag (e.g. `K block != 0`), in place of `accumulate`."""
    prefetch_b = opt_operand_def(TirTensorType)
    assembly_format = (
        "$a `,` $b `,` $c (`accumulate_if` $accumulate_if^)? "
        "(`prefetch` $prefetch_b^ `:` type($prefetch_b))? attr-dict `:` "
        "type($a) `,` type($b) `,` type($c)"
    )
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    def size(self, name: str) -> int:
        return getattr(self, name).value.data

    def offset_pairs(self) -> tuple[tuple[int, int], ...]:
        if self.offsets is None:
            return ((0, 0),)
        flat = [int(x) for x in self.offsets.get_values()]
        return tuple(zip(flat[0::2], flat[1::2], strict=True))

    def verify_(self) -> None:
        m, n, k, lanes = (self.size(x) for x in ("m", "n", "k", "lanes"))
        a_row, a_k, ldb, ldc = (self.size(x) for x in ("a_row", "a_k", "ldb", "ldc"))
        for name, value in (("m", m), ("n", n), ("k", k), ("lanes", lanes)):
            _require(value > 0, f"{name} = {value} must be positive")
        _require(lanes <= MAX_LANES, f"lanes = {lanes} is more than {MAX_LANES}")
        tile = m * -(-n // lanes)
        _require(
            tile <= MAX_TILE_ACCUMULATORS,
            f"a {m} x {n} tile needs {tile} vector accumulators, more than {MAX_TILE_ACCUMULATORS}",
        )
        _require(ldb >= n and ldc >= n, f"ldb = {ldb} and ldc = {ldc} must be at least n = {n}")
        _require(
            self.accumulate_if is None or not self.accumulate.value.data,
            "accumulate and accumulate_if are exclusive",
        )
        if self.offsets is not None:
            count = len(self.offsets.get_values())
            _require(count > 0 and count % 2 == 0, "offsets must hold (A, B) offset pairs")
        pairs = self.offset_pairs()
        _require(all(a >= 0 and b >= 0 for a, b in pairs), "offsets must not be negative")
        prefetched = () if self.prefetch_b is None else (self.prefetch_b,)
        _require(
            not prefetched or pairs == ((0, 0),),
            "prefetch is for one (A, B) offset pair: a matmul tile",
        )
        for operand in (self.a, self.b, self.c, *prefetched):
            _require(
                isinstance(operand.type.element_type, Float32Type),
                f"brgemm_tile computes in f32, got {operand.type}",
            )
        for name, footprint, tensor in (
            ("A", max(a for a, _ in pairs) + (m - 1) * a_row + (k - 1) * a_k + 1, self.a),
            ("B", max(b for _, b in pairs) + (k - 1) * ldb + n, self.b),
            ("C", (m - 1) * ldc + n, self.c),
            *((("prefetch", (k - 1) * ldb + 1, self.prefetch_b),) if prefetched else ()),
        ):
            count = tensor.type.element_count()
            _require(
                footprint <= count,
                f"{name} needs {footprint} elements but {tensor.type} has {count}",
            )
