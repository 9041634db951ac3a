"""numpy values across a compiled graph's boundary: its inputs converted
(`cast_inputs`); the element types a buffer holds encoded (bf16 as its
bits, the 8- and 4-bit floats as their codes) as float32 values outside;
rank-0 tensors as one-element buffers."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from graphcompiler.ir.element_types import lookup, round_values


def is_encoded(type_: TensorType) -> bool:
    """Whether the tensor's buffer holds encoded values (bf16 bits, float8
    codes): they cross the boundary as float32 values."""
    row = lookup(type_.element_type)
    return row is not None and row.encode is not None


def cast_input(value: Any, type_: TensorType, label: str) -> Any:
    """`compile(..., cast_inputs=True)`: an array (or nested list, or
    scalar) of another dtype is converted, in one copy, when numpy's
    "same_kind" rule allows it (float64 -> float32, int64 -> int32,
    int -> float, bool -> any); a float array for an integer input is
    refused (that would truncate silently). bf16 and float8 inputs take float32."""
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    encoded = is_encoded(type_)
    target = np.dtype(np.float32) if encoded else native_dtype(type_)
    if array.dtype == target or (encoded and array.dtype == native_dtype(type_)):
        return array
    if not np.can_cast(array.dtype, target, casting="same_kind"):
        raise ValueError(
            f"{label} has dtype {array.dtype}, which does not convert to {target} for {type_} "
            "without changing kind (numpy's same_kind rule); convert it explicitly"
        )
    return np.ascontiguousarray(array, dtype=target)


def native_view(array: np.ndarray, type_: TensorType) -> np.ndarray:
    """A user's out= array as the native buffer (a rank-0 array as one element)."""
    return array.reshape(1) if not type_.get_shape() else array


def native_dtype(type_: TensorType) -> np.dtype:
    """The numpy dtype of the tensor's buffer."""
    from graphcompiler.driver.program import buffer_dtype

    return buffer_dtype(type_.element_type)


def to_native(array: Any, type_: TensorType, label: str) -> Any:
    """Encoded element types travel as float32 values (as in the
    reference), rounded to nearest even and encoded (arrays of the buffer's
    dtype, uint16 for bf16 and uint8 for float8, are taken as encoded
    already); a rank-0 tensor is a buffer of one element, and may be given
    as a numpy scalar (`x.sum()`: a np.float32)."""
    if isinstance(array, np.generic) and not type_.get_shape():
        array = np.asarray(array)
    if not isinstance(array, np.ndarray):
        return array
    row = lookup(type_.element_type)
    if row is not None and row.compute_dtype.kind in "iu" and row.bits < 8:
        array = round_values(array, type_.element_type)  # i4, i2: the low bits, as a cast keeps
    elif row is not None and row.encode is not None:
        if array.dtype == np.float32:
            array = row.encode(array)
        elif array.dtype != row.buffer_dtype:
            raise ValueError(
                f"{label} has dtype {array.dtype}; a {type_} input takes float32 values "
                f"(rounded to {row.name}) or {row.buffer_dtype} arrays of {row.name} encodings"
            )
    return array.reshape(1) if array.ndim == 0 and not type_.get_shape() else array


def from_native(array: np.ndarray, type_: TensorType) -> np.ndarray:
    """An output buffer as the user sees it (to_native's inverse)."""
    row = lookup(type_.element_type)
    if row is not None and row.decode is not None:
        array = row.decode(array)
    return array.reshape(()) if not type_.get_shape() else array
