"""tir-legalize-types: the conversions tir leaves implicit, made explicit
with `tir.cast`, so that convert-tir-to-llvm lowers each op one to one over
operands of the type it computes in.

Mixed operands of a binary op are auto-cast to their common type
(`tir.common_type`: int -> float, narrow -> wide):

    %z = tir.mul %x, %k : (f32, i32) -> f32

becomes

    %0 = tir.cast %k : i32 -> f32
    %z = tir.mul %x, %0 : (f32, f32) -> f32

bf16 values travel as their 16 bits (LLVM computes nothing in bf16 here), so
bf16 math is done in f32 and rounded back once (comparisons and isnan need
no rounding back):

    %y = tir.exp %b : bf16 -> bf16

becomes

    %0 = tir.cast %b : bf16 -> f32
    %1 = tir.exp %0 : f32 -> f32
    %y = tir.cast %1 : f32 -> bf16

and a cast between bf16 and anything but f32 goes through f32
(`tir.cast %b : bf16 -> f16` is bf16 -> f32 -> f16), so the conversion only
widens or rounds bf16 bits. Tensor indices of another integer type are cast
to `index`. f16 stays f16: LLVM computes it (natively or promoted) itself.
The 8- and 4-bit floats (f8E4M3FN, ...) are stored as their codes and
legalized exactly like bf16.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce

from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float32Type, IndexType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from graphcompiler.dialects import tir
from graphcompiler.ir.element_types import NARROW_FLOAT_TYPES
from graphcompiler.passes.tir.patterns import apply_patterns


def _is_bf16(type_: Attribute) -> bool:
    """bf16 or an 8- or 4-bit float: stored, never computed on (math in f32)."""
    return isinstance(tir.element_of(type_), (BFloat16Type, *NARROW_FLOAT_TYPES))


def _cast(value: SSAValue, type_: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """`value` as `type_`, through a `tir.cast` inserted before the matched op."""
    if value.type == type_:
        return value
    cast = tir.CastOp.create(operands=[value], result_types=[type_])
    rewriter.insert(cast)
    return cast.result


def _recreate(
    op: Operation, operands: list[SSAValue], result_type: Attribute, rewriter: PatternRewriter
) -> SSAValue:
    """A copy of `op` on `operands` giving `result_type`, inserted before `op`."""
    new = type(op).create(
        operands=operands,
        result_types=[result_type],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    rewriter.insert(new)
    return new.results[0]


class CastOperandsToCommonType(RewritePattern):
    """binary(x: A, y: B) -> binary(cast(x), cast(y)) on their common type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.BinaryExpression, rewriter: PatternRewriter, /) -> None:
        if op.lhs.type == op.rhs.type:
            return
        common = tir.common_type(op.lhs.type, op.rhs.type)
        operands = [_cast(value, common, rewriter) for value in (op.lhs, op.rhs)]
        rewriter.replace(op, [], [_recreate(op, operands, op.result.type, rewriter)])


BF16_MATH = (
    tir.BinaryExpression,
    tir.UnaryExpression,
    tir.FmaddOp,
    tir.IsnanOp,
    tir.RoundAndCastOp,
    tir.VectorReduceExpression,
)
"""Ops that compute on their float operands' values (not only move bits)."""
Bf16Math = reduce(operator.or_, BF16_MATH)  # their union, for op_type_rewrite_pattern


class ComputeBf16InF32(RewritePattern):
    """op(x: bf16) -> cast(op(cast(x): f32)) to bf16 (no cast back for a
    result that is not bf16: comparisons, isnan, round_and_cast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Bf16Math, rewriter: PatternRewriter, /) -> None:
        if not any(_is_bf16(v.type) for v in op.operands):
            return
        if isinstance(op, tir.BinaryExpression) and op.lhs.type != op.rhs.type:
            return  # CastOperandsToCommonType first
        operands = [
            _cast(v, tir.with_element(v.type, Float32Type()), rewriter) if _is_bf16(v.type) else v
            for v in op.operands
        ]
        result_type = op.results[0].type
        if _is_bf16(result_type):
            single = tir.with_element(result_type, Float32Type())
            result = _cast(_recreate(op, operands, single, rewriter), result_type, rewriter)
        else:
            result = _recreate(op, operands, result_type, rewriter)
        rewriter.replace(op, [], [result])


class CastBf16ThroughF32(RewritePattern):
    """cast(x: bf16) to T -> cast(cast(x) to f32) to T, and T to bf16
    likewise, for T other than f32 (f16 included)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.CastOp, rewriter: PatternRewriter, /) -> None:
        source, target = op.input.type, op.result.type
        if source == target or not (_is_bf16(source) or _is_bf16(target)):
            return
        single = tir.with_element(source, Float32Type())
        if single in (source, target):
            return
        rewriter.replace(op, [], [_cast(_cast(op.input, single, rewriter), target, rewriter)])


TENSOR_ACCESSES = (tir.LoadOp, tir.StoreOp, tir.TensorPtrOp, tir.PrefetchOp)
TensorAccess = reduce(operator.or_, TENSOR_ACCESSES)


class CastIndicesToIndex(RewritePattern):
    """A[i: i32] -> A[cast(i) to index], for loads, stores, tensor_ptr and prefetch."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TensorAccess, rewriter: PatternRewriter, /) -> None:
        indices = dict.fromkeys(i for i in op.indices if not isinstance(i.type, IndexType))
        if not indices:
            return
        for index in indices:
            cast = _cast(index, IndexType(), rewriter)
            op.operands = [cast if operand is index else operand for operand in op.operands]
        rewriter.notify_op_modified(op)


KINDS = (*BF16_MATH, tir.CastOp, *TENSOR_ACCESSES)
"""The ops the patterns rewrite."""

PATTERNS: tuple[RewritePattern, ...] = (
    CastOperandsToCommonType(),
    ComputeBf16InF32(),
    CastBf16ThroughF32(),
    CastIndicesToIndex(),
)


def legalize_types(module: ModuleOp) -> bool:
    """Make every implicit conversion of `module`'s tir explicit, in place;
    returns whether there was one."""
    return apply_patterns(module, PATTERNS, KINDS)


@dataclass(frozen=True)
class TirLegalizeTypesPass(ModulePass):
    """Make tir's implicit conversions explicit: auto-casts, bf16 math in f32, bf16 casts via f32."""

    name = "tir-legalize-types"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        legalize_types(op)
