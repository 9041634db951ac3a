"""Canonicalization patterns of the graph dialect, run by xDSL's `canonicalize`.

The arithmetic simplifications of seed 003, and the ones users expect:

    X * 0, X * Broadcast(0)   -> a zero of the result's shape (integers: NaN * 0 is NaN)
    X * 1, X * Broadcast(1)   -> X          (broadcast to the result's shape if needed)
    X + 0, X + Broadcast(0)   -> X          (idem)
    Log(Exp(X) / Y)           -> X - Log(Y)
    X ** 2, X ** 3            -> X * X, (X * X) * X
    transpose(transpose(X))   -> one transpose, or X when the perms cancel
    reshape(reshape(X))       -> reshape(X)
    E(reshape(X), ...)        -> reshape(E(X, ...))  (leading dims merged back, E element-wise)
    identity reshape / transpose / broadcast_to / cast -> X
    neg(neg(X)) -> X,  relu(relu(X)) -> relu(X)
    batch_norm(X, constants) -> X * S + T  (S, T per channel)
    conv2d(pad(X, zeros on H, W)) -> conv2d(X) with the pad in its padding

"Zero" and "one" are constants whose elements all equal 0 or 1, seen through
any broadcast_to. Every graph op carries `graph.GraphCanonicalization`, so
`canonicalize` finds these patterns.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph import ops as graph
from graphcompiler.ir.element_types import dense_elements, dense_values


def splat_value(value: SSAValue) -> float | None:
    """The single value all elements of `value` hold, if it is a constant
    (possibly broadcast) whose elements are all equal."""
    owner = value.owner
    while isinstance(owner, graph.BroadcastToOp):
        owner = owner.input.owner
    if not isinstance(owner, graph.ConstantOp):
        return None
    values = dense_values(owner.value)  # from the bytes: BERT's biases were 0.25 s as floats
    if values.size == 0 or not (values == values.flat[0]).all():
        return None
    return float(values.flat[0])


def _same_shape(a: SSAValue, b: SSAValue) -> bool:
    return a.type.get_shape() == b.type.get_shape()


def _replace_by_operand(op: Operation, x: SSAValue, rewriter: PatternRewriter) -> None:
    """Replace `op` by its operand `x`: itself, or broadcast to the result's
    shape when broadcasting made the result bigger."""
    result = op.results[0]
    if x.type == result.type:
        rewriter.replace(op, [], [x])
        return
    rewriter.replace(op, graph.BroadcastToOp.build_from([x], result.type))


MAX_SPLAT_ELEMENTS = 1 << 24
"""xDSL stores a splat constant as every element's bytes: past 16M
elements a zero result is a one-element constant broadcast to its shape
(X * 0 over 2^31 x 4 x 8 elements ran out of memory)."""


def _constant_like(result: SSAValue, number: float) -> list[Operation]:
    """A splat constant of `result`'s type (one value, however big the shape)."""
    type_: TensorType = result.type
    value = number if graph.is_float(type_.element_type) else int(number)
    shape = type_.get_shape()
    small = math.prod(shape) <= MAX_SPLAT_ELEMENTS
    attribute = DenseIntOrFPElementsAttr.from_list(
        TensorType(type_.element_type, shape if small else [1] * len(shape)), [value]
    )
    constant = graph.ConstantOp.build_from([], value=attribute)
    if small:
        return [constant]
    return [constant, graph.BroadcastToOp.build_from([constant.result], type_)]


class _GraphPattern(RewritePattern):
    """Patterns for one op class: `rewrite` is only called on those."""

    op_class: type[Operation]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, self.op_class):
            self.rewrite(op, rewriter)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        raise NotImplementedError


class MulByConstant(_GraphPattern):
    """X * 0 -> 0 (the result's shape, not X's) for integers; X * 1 -> X.
    A float X * 0 stays: NaN and the infinities times 0 are NaN."""

    op_class = graph.MulOp

    def rewrite(self, op: graph.MulOp, rewriter: PatternRewriter) -> None:
        integers = not graph.is_float(op.result.type.element_type)
        for x, constant in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            number = splat_value(constant)
            if number == 0.0 and integers:
                rewriter.replace(op, _constant_like(op.result, 0.0))
                return
            if number == 1.0:
                _replace_by_operand(op, x, rewriter)
                return


class AddZero(_GraphPattern):
    """X + 0 -> X (broadcast if the zero made the result bigger)."""

    op_class = graph.AddOp

    def rewrite(self, op: graph.AddOp, rewriter: PatternRewriter) -> None:
        for x, constant in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if splat_value(constant) == 0.0:
                _replace_by_operand(op, x, rewriter)
                return


class SelectByConstant(_GraphPattern):
    """select(all true, A, B) -> A; select(all false, A, B) -> B (broadcast
    if the condition or the other side made the result bigger): an expanded
    ONNX Attention's guard for fully masked rows, where no mask is given."""

    op_class = graph.SelectOp

    def rewrite(self, op: graph.SelectOp, rewriter: PatternRewriter) -> None:
        condition, if_true, if_false = op.operands
        number = splat_value(condition)
        if number is not None:
            _replace_by_operand(op, if_true if number else if_false, rewriter)


class LogOfExpDiv(_GraphPattern):
    """log(exp(X) / Y) -> X - log(Y)."""

    op_class = graph.LogOp

    def rewrite(self, op: graph.LogOp, rewriter: PatternRewriter) -> None:
        quotient = op.input.owner
        if not isinstance(quotient, graph.DivOp) or not isinstance(quotient.lhs.owner, graph.ExpOp):
            return
        x = quotient.lhs.owner.input
        log_y = graph.LogOp.build_from([quotient.rhs])
        difference = graph.SubOp.build_from([x, log_y.result])
        if difference.result.type != op.result.type:
            return
        rewriter.replace(op, [log_y, difference])


class PowBySmallInteger(_GraphPattern):
    """X ** 2 -> X * X, X ** 3 -> (X * X) * X: element-wise multiplies that
    vectorize and fuse, where pow is a math-library call per element (GPT-2's
    tanh GELU cubes every activation of its MLP: 10% of its run time). Only
    where X has the result's type (the exponent does not broadcast it); the
    products are within 2 ulp of pow (X * X is numpy's own x ** 2) and keep
    NaN, infinities and the sign of zero."""

    op_class = graph.PowOp

    def rewrite(self, op: graph.PowOp, rewriter: PatternRewriter) -> None:
        exponent = splat_value(op.rhs)
        if exponent not in (2.0, 3.0) or op.lhs.type != op.result.type:
            return
        square = graph.MulOp.build_from([op.lhs, op.lhs])
        if exponent == 2.0:
            rewriter.replace(op, [square])
            return
        rewriter.replace(op, [square, graph.MulOp.build_from([square.result, op.lhs])])


class TransposeOfTranspose(_GraphPattern):
    """transpose(transpose(X)) -> one transpose (X when they cancel); a
    transpose that moves only dims of size 1 (exporters' head splits of one
    head, [b, s, 1, d] -> [b, 1, s, d]) -> a reshape, which is a view, not a
    copy."""

    op_class = graph.TransposeOp

    def rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.permutation
        if perm == list(range(len(perm))):
            rewriter.replace(op, [], [op.input])
            return
        shape = op.input.type.get_shape()
        moved = [p for p in perm if shape[p] != 1]
        blocked = any(
            isinstance(t.encoding, graph.FormatAttr) for t in (op.input.type, op.result.type)
        )
        if moved == sorted(moved) and not blocked:
            rewriter.replace(op, graph.ReshapeOp.build_from([op.input], op.result.type))
            return
        inner = op.input.owner
        if not isinstance(inner, graph.TransposeOp):
            return
        inner_perm = inner.permutation
        combined = [inner_perm[p] for p in perm]
        if combined == list(range(len(combined))):
            rewriter.replace(op, [], [inner.input])
        else:
            rewriter.replace(op, graph.TransposeOp.build_from([inner.input], perm=combined))


class ReshapeChain(_GraphPattern):
    """reshape(reshape(X)) -> reshape(X); a reshape to X's own shape -> X."""

    op_class = graph.ReshapeOp

    def rewrite(self, op: graph.ReshapeOp, rewriter: PatternRewriter) -> None:
        source = op.input.owner.input if isinstance(op.input.owner, graph.ReshapeOp) else op.input
        if source.type == op.result.type:
            rewriter.replace(op, [], [source])
        elif source is not op.input:
            rewriter.replace(op, graph.ReshapeOp.build_from([source], op.result.type))


def _regroups_leading_dims(op: Operation) -> bool:
    """A reshape of a plain tensor to a higher rank that keeps the last dim:
    only leading dims are split (a row-vector operand broadcasts the same on
    either side of it)."""
    if not isinstance(op, graph.ReshapeOp):
        return False
    source, result = op.input.type, op.result.type
    return (
        0 < len(source.get_shape()) < len(result.get_shape())
        and source.get_shape()[-1] == result.get_shape()[-1]
        and not isinstance(source.encoding, graph.FormatAttr)
        and not isinstance(result.encoding, graph.FormatAttr)
    )


class ElementwiseBeforeReshape(_GraphPattern):
    """E(reshape(X), Y, c) -> reshape(E(X, reshape(Y), c)) for an
    element-wise E, where the reshape splits X's leading dims (Y: of E's
    result shape; c: a row vector or scalar). Exporters write a Linear layer
    as a 2-D Gemm between reshapes (GPT-2's Conv1D), so its activation and
    residual add ran in the 3-D shape, apart from the matmul: moved to the
    matmul's shape they fuse into its epilogue, and the reshape back to 2-D
    before the next matmul cancels. Only to a lower rank, so it ends."""

    op_class = graph.ELEMENTWISE_OPS

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, graph.BroadcastToOp):
            return
        result = op.results[0]
        split = next((o.owner for o in op.operands if _regroups_leading_dims(o.owner)), None)
        if split is None or split.result.type.get_shape() != result.type.get_shape():
            return
        shape = split.input.type.get_shape()
        operands, reshapes = [], []
        for operand in op.operands:
            dims = operand.type.get_shape()
            if dims == result.type.get_shape():
                owner = operand.owner
                if _regroups_leading_dims(owner) and owner.input.type.get_shape() == shape:
                    operands.append(owner.input)
                    continue
                if isinstance(operand.type.encoding, graph.FormatAttr):
                    return
                merged = graph.ReshapeOp.build_from(
                    [operand], TensorType(operand.type.element_type, shape)
                )
                reshapes.append((merged, operand))
                operands.append(merged.result)
            elif len(dims) <= len(shape) and all(d == 1 for d in dims[:-1]):
                operands.append(operand)  # a row vector or scalar: broadcasts alike
            else:
                return
        free_result = TensorType(result.type.element_type, shape)
        try:
            merged_op = type(op).build_from(
                operands, free_result if isinstance(op, graph.CastOp) else None, **op.properties
            )
        except VerifyException:
            return
        if merged_op.results[0].type != free_result:
            return
        for merged, operand in reshapes:  # right after Y: fusion wants E's inputs early
            owner = operand.owner
            where = (
                InsertPoint.after(owner)
                if isinstance(owner, Operation)
                else InsertPoint.at_start(owner)
            )
            rewriter.insert(merged, where)
        back = graph.ReshapeOp.build_from([merged_op.results[0]], result.type)
        rewriter.replace(op, [merged_op, back])


class IdentityConversion(_GraphPattern):
    """broadcast_to or cast to the operand's own type -> the operand."""

    op_class = (graph.BroadcastToOp, graph.CastOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class Involution(_GraphPattern):
    """neg(neg(X)) -> X."""

    op_class = graph.NegOp

    def rewrite(self, op: graph.NegOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.owner, graph.NegOp):
            rewriter.replace(op, [], [op.input.owner.input])


class Idempotence(_GraphPattern):
    """relu(relu(X)) -> relu(X)."""

    op_class = graph.ReluOp

    def rewrite(self, op: graph.ReluOp, rewriter: PatternRewriter) -> None:
        if isinstance(op.input.owner, graph.ReluOp):
            rewriter.replace(op, [], [op.input])


class BatchNormOfConstants(_GraphPattern):
    """batch_norm(X, scale, bias, mean, var) with constant parameters ->
    X * S + T, where S = scale / sqrt(var + epsilon) and T = bias - mean * S
    are [C, 1, ...] constants computed in f64. The pair fuses into the
    epilogue of X's producer (a convolution's), where the batch_norm kernel
    read and wrote the whole tensor once more (onnxruntime folds it too).
    Left alone where S or T is not finite (a zero variance without
    epsilon): X * S + T would not give the op's infs and NaNs."""

    op_class = graph.BatchNormOp

    def rewrite(self, op: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        owners = [value.owner for value in (op.scale, op.bias, op.mean, op.var)]
        if not all(isinstance(owner, graph.ConstantOp) for owner in owners):
            return
        shape = op.input.type.get_shape()
        scale, bias, mean, var = (
            np.broadcast_to(np.array(owner.value.get_values(), np.float64), [shape[1]])
            for owner in owners
        )
        with np.errstate(all="ignore"):
            factor = scale / np.sqrt(var + op.epsilon_value)
            shift = bias - mean * factor
        if not (np.isfinite(factor).all() and np.isfinite(shift).all()):
            return
        per_channel = [shape[1]] + [1] * (len(shape) - 2)
        element = op.input.type.element_type
        factor_op, shift_op = (
            graph.ConstantOp.build_from([], value=dense_elements(v.reshape(per_channel), element))
            for v in (factor, shift)
        )
        scaled = graph.MulOp.build_from([op.input, factor_op.result])
        shifted = graph.AddOp.build_from([scaled.result, shift_op.result])
        rewriter.replace(op, [factor_op, shift_op, scaled, shifted])


class PadIntoConvolution(_GraphPattern):
    """conv2d(pad(X)) -> conv2d(X) with the pad added to its padding, where
    the pad puts the convolution's own pad value (zeros; an integer
    convolution's `pad_value`) before and after H and W only: the
    convolution pads itself, without a pass that copies X
    (MobileNet-v2's stride-2 layers come with an explicit Pad, "same"
    padding the way TensorFlow splits it)."""

    op_class = graph.Conv2dOp

    def rewrite(self, op: graph.Conv2dOp, rewriter: PatternRewriter) -> None:
        pad = op.input.owner
        if not isinstance(pad, graph.PadOp) or pad.pad_mode != "constant":
            return
        if pad.fill_value != op.padding_value:
            return
        batch, channels, rows, columns = pad.amounts(4)
        if batch != (0, 0) or channels != (0, 0) or min(*rows, *columns) < 0:
            return
        top, left, bottom, right = op.window_padding
        padding = [top + rows[0], left + columns[0], bottom + rows[1], right + columns[1]]
        properties = {**op.properties, "padding": padding}
        merged = graph.Conv2dOp.build_from([pad.input, op.weight], op.result.type, **properties)
        rewriter.replace(op, merged)


PATTERNS: tuple[RewritePattern, ...] = (
    MulByConstant(),
    AddZero(),
    SelectByConstant(),
    LogOfExpDiv(),
    PowBySmallInteger(),
    TransposeOfTranspose(),
    ReshapeChain(),
    ElementwiseBeforeReshape(),
    IdentityConversion(),
    Involution(),
    Idempotence(),
    BatchNormOfConstants(),
    PadIntoConvolution(),
)

graph.GraphCanonicalization.patterns.extend(PATTERNS)
