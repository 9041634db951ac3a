"""Verifying modules: xDSL's verifier run op by op, so that a failure is
reported at the op that failed, plus what xDSL does not check but later
stages rely on (builtin types MLIR rejects, dominance, single-block graph
functions)."""

from __future__ import annotations

import math
import re

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    FixedBitwidthType,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    NoneType,
    TensorType,
    TupleType,
    UnrankedMemRefType,
    UnrankedTensorType,
    VectorType,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Region,
    SSAValue,
)
from xdsl.irdl.dominance import DominanceInfo
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from graphcompiler.ir.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    location_of,
    op_diagnostic,
)

SPLIT_MARKER = "// -----"
_SPLIT_LINE = re.compile(r"^// -----[ \t]*$", re.MULTILINE)


MAX_INTEGER_WIDTH = 16777215
"""MLIR's IntegerType::kMaxWidth."""

MAX_TENSOR_BYTES = 2**40
"""1 TiB: larger shaped types are typos (a 14-digit dimension), and would
make xDSL expand a splat constant until memory runs out."""

_NOT_TENSOR_ELEMENTS = (
    TensorType, UnrankedTensorType, MemRefType, UnrankedMemRefType, FunctionType, NoneType, TupleType,
)  # fmt: skip


def builtin_type_error(type_: Attribute) -> str | None:
    """Why `type_` is not a valid builtin type (MLIR rejects it, xDSL builds
    it anyway and later stages fail), or None."""
    if isinstance(type_, IntegerType) and type_.width.data > MAX_INTEGER_WIDTH:
        return f"integer bitwidth {type_.width.data} is larger than the maximum {MAX_INTEGER_WIDTH}"
    if isinstance(type_, VectorType):
        if any(dim <= 0 for dim in type_.get_shape()):
            return f"vector types must have positive constant sizes, got {type_}"
        if not isinstance(type_.element_type, IntegerType | IndexType | AnyFloat):
            return f"vector elements must be integers, indices or floats, got {type_.element_type}"
    if isinstance(type_, TensorType | UnrankedTensorType) and isinstance(
        type_.element_type, _NOT_TENSOR_ELEMENTS
    ):
        return f"invalid tensor element type {type_.element_type}"
    if isinstance(type_, TensorType | VectorType | MemRefType) and isinstance(
        type_.element_type, FixedBitwidthType
    ):
        shape = type_.get_shape()
        if all(dim >= 0 for dim in shape):
            size = math.prod(shape) * max(type_.element_type.bitwidth, 8) // 8
            if size > MAX_TENSOR_BYTES:
                return (
                    f"{type_} has {size} bytes, more than the {MAX_TENSOR_BYTES} (1 TiB) supported"
                )
    return None


def _defining_block(value: SSAValue) -> Block | None:
    return value.block if isinstance(value, BlockArgument) else value.op.parent_block()


def dominates(
    value: SSAValue,
    user: Operation,
    dominance: dict[Region, DominanceInfo],
    positions: dict[Block, dict[Operation, int]],
) -> bool:
    """Whether `value` is defined before its use by `user`: earlier in an
    enclosing block, or in a block of an enclosing region that dominates
    the use's block. `dominance` caches the per-region analysis and
    `positions` each block's op order (xDSL's is_before_in_block walks the
    block: an unrolled 256-step recurrence's final concat made the check
    quadratic, 0.9 s of its compile)."""
    block = _defining_block(value)
    if block is None:
        return False
    ancestor = block.find_ancestor_op_in_block(user)
    if ancestor is not None:
        if isinstance(value, BlockArgument):
            return True
        if block not in positions:
            positions[block] = {op: index for index, op in enumerate(block.ops)}
        order = positions[block]
        return order[value.op] < order[ancestor]
    use_block = user.parent_block()
    while use_block is not None and use_block.parent is not block.parent:
        parent = use_block.parent_op()
        use_block = parent.parent_block() if parent is not None else None
    if use_block is None:
        return False
    region = block.parent
    if region not in dominance:
        dominance[region] = DominanceInfo(region)
    return dominance[region].dominates(block, use_block)


def _check_graph_function(function: Operation) -> None:
    """Single-block func.func bodies and dominance: later stages rely on both
    (the graph passes and convert-graph-to-tir walk a function's one block),
    so they are checked here, once, before any pass runs."""
    if isinstance(function, func.FuncOp) and len(function.body.blocks) > 1:
        raise DiagnosticError(
            op_diagnostic(function, "a graph function must have a single block (no branches)")
        )
    dominance: dict[Region, DominanceInfo] = {}
    positions: dict[Block, dict[Operation, int]] = {}
    for op in function.walk():
        for index, operand in enumerate(op.operands):
            if not dominates(operand, op, dominance, positions):
                diagnostic = op_diagnostic(op, f"operand #{index} does not dominate this use")
                if isinstance(operand, OpResult):
                    where = location_of(operand.op)
                    diagnostic.notes.append(
                        Diagnostic(Severity.NOTE, "operand defined here", where)
                    )
                raise DiagnosticError(diagnostic)


def verify_module(op: Operation) -> None:
    """Verify `op` and everything nested in it, raising a `DiagnosticError`
    located at the first op (outermost first) that fails."""
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as error:
        raise DiagnosticError(op_diagnostic(op, str(error))) from None
    except Exception as error:
        # xDSL prints the whole module into a failed verifier's exception;
        # when that printing fails (an attribute it cannot print), the
        # printer's exception replaces the verifier's, which is the one to report.
        if not isinstance(error.__context__, VerifyException):
            raise
        raise DiagnosticError(op_diagnostic(op, str(error.__context__))) from None
    if isinstance(op, func.FuncOp) or op.name == "tir.func":  # tir bodies need dominance too
        _check_graph_function(op)
    for region in op.regions:
        for block in region.blocks:
            if (
                block.first_op is None
                and len(region.blocks) == 1
                and not op.has_trait(NoTerminator)
            ):
                raise DiagnosticError(
                    op_diagnostic(op, "expects a non-empty block ending in a terminator")
                )
            for nested in block.ops:
                verify_module(nested)
