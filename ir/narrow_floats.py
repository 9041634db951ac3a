"""The 8- and 4-bit float formats (float8 E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ;
float4 E2M1FN), as ONNX and MLIR name them: one description each, and
their conversions in numpy. A value of one is stored as its code, one byte
an element (as ml_dtypes and onnx's numpy arrays hold them), and computed
in f32, which holds every code's value exactly. numpy only, so that the
artifact loader converts arguments without xDSL.

Conversion to a format rounds to nearest even and does not saturate
(ml_dtypes' `astype`, onnx's `Cast` with saturate=0): a magnitude that
rounds past the largest finite value becomes inf where the format has one
(E5M2), else NaN (float4, which has no NaN either, saturates). The
importer saturates (ONNX's default) by clamping first.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class FloatFormat:
    """Sign, `exponent_bits`, `mantissa_bits`; an exponent field f > 0 is
    2^(f - bias) x 1.mantissa, f = 0 the subnormals. Special codes:
    `ieee` (E5M2): the top exponent field is inf (mantissa 0) or NaN;
    `nan_code` (E4M3FN: all magnitude bits set, either sign); `unsigned_zero`
    (the FNUZ formats): 0x80, "negative zero", is the one NaN."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    ieee: bool = False
    nan_code: int | None = None
    unsigned_zero: bool = False

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def sign_bit(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def min_exponent(self) -> int:
        """The exponent of the smallest normal value (and of the subnormals' unit)."""
        return 1 - self.bias

    @property
    def max_code(self) -> int:
        """The magnitude code of the largest finite value."""
        top = self.sign_bit - 1
        if self.ieee:
            return top - (1 << self.mantissa_bits)  # below the inf/NaN exponent field
        return top - 1 if self.nan_code is not None else top

    @property
    def max_value(self) -> float:
        return float(self.values[self.max_code])

    @property
    def ieee_nan(self) -> int:
        """An IEEE-like format's NaN magnitude code: the quiet one after inf."""
        return self.max_code + 1 + (1 << (self.mantissa_bits - 1))

    @property
    def has_nan(self) -> bool:
        return self.ieee or self.nan_code is not None or self.unsigned_zero

    def nan(self, negative: np.ndarray) -> np.ndarray:
        """The code of a NaN of sign `negative` (ml_dtypes' choice of code)."""
        if self.unsigned_zero:
            return np.full(negative.shape, self.sign_bit, np.uint8)
        if self.ieee:
            code = self.ieee_nan
        elif self.nan_code is not None:
            code = self.nan_code
        else:  # no NaN (float4): ml_dtypes gives a zero of the opposite sign
            return np.where(negative, 0, self.sign_bit).astype(np.uint8)
        return np.where(negative, code | self.sign_bit, code).astype(np.uint8)

    def overflow(self, negative: np.ndarray) -> np.ndarray:
        """The code of a magnitude past the largest finite value."""
        if self.ieee:
            inf = self.max_code + 1
            return np.where(negative, inf | self.sign_bit, inf).astype(np.uint8)
        if not self.has_nan:
            return np.where(negative, self.max_code | self.sign_bit, self.max_code).astype(np.uint8)
        return self.nan(negative)

    @cached_property
    def values(self) -> np.ndarray:
        """The f32 value of every code (a lookup table, 2^bits entries)."""
        codes = np.arange(1 << self.bits)
        magnitude = codes & (self.sign_bit - 1)
        field, mantissa = (
            magnitude >> self.mantissa_bits,
            magnitude & ((1 << self.mantissa_bits) - 1),
        )
        exponent = np.maximum(field, 1) - self.bias - self.mantissa_bits
        significand = np.where(field > 0, mantissa + (1 << self.mantissa_bits), mantissa)
        values = np.ldexp(significand.astype(np.float64), exponent)
        values = np.where(codes & self.sign_bit, -values, values)
        if self.ieee:
            top = field == (1 << self.exponent_bits) - 1
            values = np.where(
                top, np.where(mantissa == 0, np.copysign(np.inf, values), np.nan), values
            )
        if self.nan_code is not None:
            values = np.where(magnitude == self.nan_code, np.nan, values)
        if self.unsigned_zero:
            values = np.where(codes == self.sign_bit, np.nan, values)
        return values.astype(np.float32)

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The codes of `values` rounded to nearest even (uint8, same shape)."""
        with np.errstate(invalid="ignore"):  # signaling NaNs widen quietly
            x = np.asarray(values, dtype=np.float32).astype(np.float64)
        negative, nan = np.signbit(x), np.isnan(x)
        magnitude = np.minimum(np.abs(np.where(nan, 0.0, x)), 2.0 * self.max_value)  # inf: past max
        exponent = np.frexp(magnitude)[1] - 1
        exponent = np.where(
            magnitude > 0, np.maximum(exponent, self.min_exponent), self.min_exponent
        )
        units = np.rint(np.ldexp(magnitude, self.mantissa_bits - exponent)).astype(np.int64)
        code = ((exponent - self.min_exponent) << self.mantissa_bits) + units
        signed = np.where(
            negative & ~(self.unsigned_zero & (code == 0)), code | self.sign_bit, code
        )
        result = np.where(code > self.max_code, self.overflow(negative), signed)
        return np.where(nan, self.nan(negative), result).astype(np.uint8)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The f32 values of `codes`."""
        return self.values[np.asarray(codes, dtype=np.uint8)]

    def round(self, values: np.ndarray) -> np.ndarray:
        """`values` rounded to the format, as f32."""
        return self.decode(self.encode(values))


FORMATS: dict[str, FloatFormat] = {
    f.name: f
    for f in (
        FloatFormat("f8E4M3FN", 4, 3, 7, nan_code=0x7F),
        FloatFormat("f8E4M3FNUZ", 4, 3, 8, unsigned_zero=True),
        FloatFormat("f8E5M2", 5, 2, 15, ieee=True),
        FloatFormat("f8E5M2FNUZ", 5, 2, 16, unsigned_zero=True),
        FloatFormat("f4E2M1FN", 2, 1, 1),
    )
}
"""By MLIR's spelling of the type."""
