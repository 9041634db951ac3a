"""numpy values across a compiled graph's boundary: its inputs converted
(`cast_inputs`), bf16 tensors as float32 values outside and bf16 bits
inside, rank-0 tensors as one-element buffers."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, TensorType

from graphcompiler.ir.bf16 import bf16_bits, from_bf16_bits


def cast_input(value: Any, type_: TensorType, label: str) -> Any:
    """`compile(..., cast_inputs=True)`: an array (or nested list, or
    scalar) of another dtype is converted, in one copy, when numpy's
    "same_kind" rule allows it (float64 -> float32, int64 -> int32,
    int -> float, bool -> any); a float array for an integer input is
    refused (that would truncate silently). bf16 inputs take float32."""
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    bf16 = isinstance(type_.element_type, BFloat16Type)
    target = np.dtype(np.float32) if bf16 else native_dtype(type_)
    if array.dtype == target or (bf16 and array.dtype == np.uint16):
        return array
    if not np.can_cast(array.dtype, target, casting="same_kind"):
        raise ValueError(
            f"{label} has dtype {array.dtype}, which does not convert to {target} for {type_} "
            "without changing kind (numpy's same_kind rule); convert it explicitly"
        )
    return np.ascontiguousarray(array, dtype=target)


def is_bf16(type_: TensorType) -> bool:
    """bf16 tensors cross the boundary as float32 values."""
    return isinstance(type_.element_type, BFloat16Type)


def native_view(array: np.ndarray, type_: TensorType) -> np.ndarray:
    """A user's out= array as the native buffer (a rank-0 array as one element)."""
    return array.reshape(1) if not type_.get_shape() else array


def native_dtype(type_: TensorType) -> np.dtype:
    """The numpy dtype of the tensor's buffer."""
    from graphcompiler.driver.program import buffer_dtype

    return buffer_dtype(type_.element_type)


def to_native(array: Any, type_: TensorType, label: str) -> Any:
    """bf16 tensors travel as float32 (as in the reference), rounded to bf16
    and stored as bf16 bits (uint16 arrays are taken as such bits); a rank-0
    tensor is a buffer of one element."""
    if not isinstance(array, np.ndarray):
        return array
    if isinstance(type_.element_type, BFloat16Type):
        if array.dtype == np.float32:
            array = bf16_bits(array)
        elif array.dtype != np.uint16:
            raise ValueError(
                f"{label} has dtype {array.dtype}; a {type_} input takes float32 values "
                "(rounded to bf16) or uint16 arrays of bf16 bit patterns"
            )
    return array.reshape(1) if array.ndim == 0 and not type_.get_shape() else array


def from_native(array: np.ndarray, type_: TensorType) -> np.ndarray:
    """An output buffer as the user sees it (to_native's inverse)."""
    if isinstance(type_.element_type, BFloat16Type):
        array = from_bf16_bits(array)
    return array.reshape(()) if not type_.get_shape() else array
