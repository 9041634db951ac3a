"""bf16 values in numpy, which has no bf16 dtype: rounded f32 values, and
the uint16 bits a native buffer holds. numpy only, so that the artifact
loader (runtime/artifact.py) converts bf16 arguments without xDSL."""

from __future__ import annotations

import numpy as np


def round_to_bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bf16 (ties to even), keeping NaN
    and the shape (rank 0 included)."""
    single = np.array(values, dtype=np.float32, order="C")  # ascontiguousarray makes 0-d 1-d
    bits = single.view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isnan(single), single, rounded.view(np.float32)).astype(np.float32)


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """The uint16 bits of float32 `values` rounded to bf16 (a native buffer);
    a NaN stays a (quiet) NaN, where its payload's low bits alone would
    leave the bits of inf."""
    rounded = round_to_bf16(values)
    bits = (rounded.view(np.uint32) >> 16).astype(np.uint16)
    return np.where(np.isnan(rounded), bits | 0x40, bits).astype(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    """float32 values of bf16 `bits` (exact)."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)
