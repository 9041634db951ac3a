"""Every element type the compiler knows, in one table: its name, width, the
numpy dtype its values are computed in (the reference, the importer, the
graph builder) and the one its buffers hold (the runtime: bf16 travels as
its uint16 bits, the 8- and 4-bit floats as their one-byte codes, 4- and
2-bit integers one to a byte). Byte sizes, dtype conversions and name
lookups all read this table, so a new element type is one row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute

from graphcompiler.ir.bf16 import (  # noqa: F401 - round_to_bf16: API
    bf16_bits,
    from_bf16_bits,
    round_to_bf16,
)
from graphcompiler.ir.narrow_floats import FORMATS


@dataclass(frozen=True)
class ElementType:
    """One row of the table."""

    name: str
    """How builders, `gc-run` and the docs spell it (MLIR's spelling)."""
    make: Callable[[], Attribute]
    bits: int
    compute_dtype: np.dtype
    """What numpy computes its values in (bf16 in float32)."""
    buffer_dtype: np.dtype
    """What a native buffer of it holds (bf16 as its uint16 bits)."""
    encode: Callable[[np.ndarray], np.ndarray] | None = None
    """Compute-dtype values -> buffer contents, where they differ (bf16's
    bits, a float8's codes; rounded to nearest even)."""
    decode: Callable[[np.ndarray], np.ndarray] | None = None
    """encode's inverse (exact)."""

    @property
    def attribute(self) -> Attribute:
        return self.make()

    @property
    def byte_size(self) -> int:
        """Bytes one element takes in memory (i1 takes a byte)."""
        return max(1, self.bits // 8)


def _integer(bits: int, unsigned: bool = False) -> ElementType:
    """One to a byte below 8 bits (as ml_dtypes' int4 arrays hold them)."""
    signedness = Signedness.UNSIGNED if unsigned else Signedness.SIGNLESS
    width = 8 if 1 < bits < 8 else bits
    dtype = np.dtype(np.bool_ if bits == 1 else f"{'u' if unsigned else ''}int{width}")
    name = f"{'ui' if unsigned else 'i'}{bits}"
    return ElementType(name, lambda: IntegerType(bits, signedness), bits, dtype, dtype)


def _float(name: str, make: Callable[[], Attribute], bits: int, buffer: str, compute: str):
    return ElementType(name, make, bits, np.dtype(compute), np.dtype(buffer))


NARROW_FLOAT_TYPES = (
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2Type,
    Float8E5M2FNUZType,
    Float4E2M1FNType,
)
"""The 8- and 4-bit floats: stored as codes, computed in f32 (ir/narrow_floats.py)."""


def _narrow_float(make: Callable[[], Attribute]) -> ElementType:
    """An 8- or 4-bit float: computed in float32, stored as its code."""
    fmt = FORMATS[str(make())]
    return ElementType(
        fmt.name, make, fmt.bits, np.dtype(np.float32), np.dtype(np.uint8), fmt.encode, fmt.decode
    )


ELEMENT_TYPES: tuple[ElementType, ...] = (
    _float("f32", Float32Type, 32, "float32", "float32"),
    _float("f16", Float16Type, 16, "float16", "float16"),
    ElementType(
        "bf16",
        BFloat16Type,
        16,
        np.dtype(np.float32),
        np.dtype(np.uint16),
        bf16_bits,
        from_bf16_bits,
    ),  # fmt: skip
    _float("f64", Float64Type, 64, "float64", "float64"),
    *map(_narrow_float, NARROW_FLOAT_TYPES),
    _integer(64),
    _integer(32),
    _integer(16),
    _integer(8),
    _integer(8, unsigned=True),
    _integer(16, unsigned=True),
    _integer(32, unsigned=True),
    _integer(64, unsigned=True),
    *(_integer(bits, unsigned) for bits in (4, 2) for unsigned in (False, True)),
    _integer(1),
    ElementType("index", IndexType, 64, np.dtype(np.int64), np.dtype(np.int64)),
)
"""Graph tensors take every row but `index` (tir scalars take it too)."""

BY_NAME: dict[str, ElementType] = {row.name: row for row in ELEMENT_TYPES}
_BY_ATTRIBUTE: dict[Attribute, ElementType] = {row.attribute: row for row in ELEMENT_TYPES}


def lookup(element: Attribute) -> ElementType | None:
    """The row of `element` (an integer type of another width: computed)."""
    row = _BY_ATTRIBUTE.get(element)
    if row is None and isinstance(element, IntegerType):
        return ElementType(
            str(element), lambda: element, element.width.data, np.dtype(object), np.dtype(object)
        )
    return row


def by_name(name: str) -> Attribute:
    """The element type spelled `name` (ValueError listing the names)."""
    row = BY_NAME.get(name)
    if row is None:
        raise ValueError(f"unknown element type '{name}' (one of {', '.join(BY_NAME)})")
    return row.attribute


def _row(element: Attribute) -> ElementType:
    row = lookup(element)
    if row is None:
        raise ValueError(f"no element type row for {element}")
    return row


def bit_width(type_: Attribute) -> int:
    """Bits of a scalar, or of all lanes of a vector."""
    if isinstance(type_, VectorType):
        return _row(type_.element_type).bits * type_.get_shape()[0]
    return _row(type_).bits


def byte_size(element: Attribute) -> int:
    return _row(element).byte_size


def compute_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype that holds tensors of `element` (bf16 -> float32)."""
    dtype = _row(element).compute_dtype
    if dtype == np.dtype(object):
        raise ValueError(f"no numpy dtype for element type {element}")
    return dtype


def buffer_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype of a native buffer of `element` (bf16 -> uint16 bits)."""
    dtype = _row(element).buffer_dtype
    if dtype == np.dtype(object):
        raise ValueError(f"no numpy dtype for {element}")
    return dtype


def dense_elements(
    array: np.ndarray,
    element: Attribute,
    *,
    shape: Sequence[int] | None = None,
    splat_if_uniform: bool = False,
) -> DenseIntOrFPElementsAttr:
    """`array` as a dense attribute of `element` and `shape` (the array's
    own by default), held
    as its little-endian bytes (one copy, never a Python list per element);
    bf16 values are rounded to nearest even. With `splat_if_uniform`, an
    array of one repeated value is stored as that value (a splat)."""
    flat = np.asarray(array).reshape(-1)
    type_ = TensorType(element, list(np.shape(array) if shape is None else shape))
    if splat_if_uniform and flat.size and (flat == flat[0]).all():
        flat = flat[:1]
    row = _row(element)
    if row.encode is not None:
        data = row.encode(flat).astype(row.buffer_dtype.newbyteorder("<"), copy=False)
    elif element == IntegerType(1):
        data = flat.astype(np.bool_).astype(np.uint8)
    else:
        data = flat.astype(buffer_dtype(element).newbyteorder("<"), copy=False)
    return DenseIntOrFPElementsAttr(type_, BytesAttr(_viewed_bytes(data) or data.tobytes()))


def dense_values(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The values of a dense attribute, flat, in the compute dtype of its
    element type (one splat value stays one), read from its bytes: no Python
    object per element (an embedding table is 23M of them)."""
    element = attr.get_element_type()
    row = lookup(element)
    if row is None or row.buffer_dtype == np.dtype(object) or row.name == "index":
        return np.asarray(attr.get_values())
    if element == IntegerType(1):  # xDSL stores true as 0xFF, which views and tobytes keep
        return np.frombuffer(attr.data.data, np.uint8) != 0
    raw = np.frombuffer(attr.data.data, row.buffer_dtype.newbyteorder("<"))
    if row.decode is not None:
        return row.decode(raw)
    return raw.astype(row.compute_dtype, copy=False)


def round_values(values: np.ndarray, element: Attribute) -> np.ndarray:
    """Compute-dtype `values` as `element` holds them: bf16 and the narrow
    floats rounded to nearest even, 4- and 2-bit integers wrapped (the low
    bits kept, as a cast to them does); others unchanged."""
    row = _row(element)
    if row.decode is not None:
        return row.decode(row.encode(values))
    if row.compute_dtype.kind in "iu" and row.bits < 8:
        span, low = 1 << row.bits, 0 if row.compute_dtype.kind == "u" else -(1 << (row.bits - 1))
        wrapped = (np.asarray(values).astype(np.int64) - low) % span + low
        return wrapped.astype(row.compute_dtype)
    return values


def _viewed_bytes(data: np.ndarray) -> bytes | None:
    """The bytes object `data` views from start to end (an ONNX initializer's
    raw data, read by np.frombuffer), so the attribute shares it instead of
    holding a copy: model weights are hundreds of MB."""
    base = data.base
    while isinstance(base, np.ndarray):
        base = base.base
    if not isinstance(base, bytes) or data.nbytes != len(base) or not data.flags.c_contiguous:
        return None
    return base if np.frombuffer(base, np.uint8).ctypes.data == data.ctypes.data else None


def max_identity(dtype: np.dtype) -> float | int:
    """max's identity: -inf, or the integer type's minimum."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min if dtype.kind in "iu" else False


def min_identity(dtype: np.dtype) -> float | int:
    """min's identity: +inf, or the integer type's maximum."""
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max if dtype.kind in "iu" else True
