"""graph-lookup-tables: an element-wise chain from one byte tensor to a byte
tensor becomes a table read (graph.lookup).

A quantized model computes its activations between quantize and dequantize
pairs: GELU in a QDQ BERT is

    x (u8) -> dequantize -> / sqrt 2 -> quantize -> dequantize -> erf ->
    quantize -> dequantize -> + 1 -> quantize -> ... -> * 0.5 -> quantize

and SiLU in a QDQ EfficientNet dequantizes x twice (x * sigmoid(x)). Each
element of the result is a function of the same element of x alone, and x
has 256 values: the function is a table of 256 entries, computed here once
by the reference interpreter (so the table holds the reference's exact
values: erf, exp and the divisions of every quantize) and read per element
at run time (onnxruntime's QLinearSigmoid and QLinearLeakyRelu read such
tables). BERT-base's GELU chains took 12.5 ms of its 58 ms in QDQ on one
core; their tables a fraction of that.

What qualifies: a cast to an 8-bit integer whose operand is computed by
element-wise ops (graph.ELEMENTWISE_OPS but broadcast_to) of the result's
shape from single-element constants and one 8-bit tensor of that shape,
with at least MIN_CHAIN_OPS ops and one that is not a quantization's
arithmetic (a chain that only requantizes is as cheap computed). The
chain's ops stay where something else reads them; the others are erased.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from graphcompiler.dialects import graph
from graphcompiler.interpreters import reference
from graphcompiler.ir.element_types import dense_elements
from graphcompiler.passes.function_pass import FunctionPass

MIN_CHAIN_OPS = 8
"""A dequantize (cast, sub, mul), one op, and a quantize (div, round, add,
cast): fewer is a requantization or less."""
QUANTIZING_OPS = (
    graph.CastOp, graph.SubOp, graph.MulOp, graph.DivOp, graph.AddOp, graph.RoundOp,
    graph.MaximumOp, graph.MinimumOp, graph.ClampOp, graph.ReluOp,
)  # fmt: skip
"""Ops that (de)quantizing and clipping consist of: cheap element-wise, a
chain of only these is left to run."""
CHAIN_OPS = tuple(op for op in graph.ELEMENTWISE_OPS if op is not graph.BroadcastToOp)


def _is_byte(type_) -> bool:
    element = type_.element_type
    return isinstance(element, IntegerType) and element.width.data == 8


def _is_scalar_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, graph.ConstantOp) and (
        int(np.prod(value.type.get_shape(), dtype=np.int64)) == 1
    )


def _chain(
    end: graph.CastOp, order: dict[Operation, int]
) -> tuple[SSAValue, list[Operation]] | None:
    """(x, the chain's ops in program order) for `end`'s element-wise chain
    from one byte tensor x, or None (`order`: the block's ops' positions).
    The walk stops at byte tensors; while more than one remains, the latest
    is opened up (a quantize inside the chain, or an earlier table), until
    one is left: the chain's source."""
    block, shape = end.parent_block(), end.result.type.get_shape()
    ops: set[Operation] = {end}
    leaves: set[SSAValue] = set()

    def inside(value: SSAValue) -> bool:
        owner = value.owner
        return (
            isinstance(owner, CHAIN_OPS)
            and owner.parent_block() is block
            and value.type.get_shape() == shape
        )

    def openable(leaf: SSAValue) -> bool:
        """A byte tensor the chain may compute too: an element-wise op's,
        or an earlier table's (which this table then takes in)."""
        owner = leaf.owner
        return inside(leaf) or (
            isinstance(owner, graph.LookupOp)
            and owner.parent_block() is block
            and leaf.type.get_shape() == shape
        )

    def add_operands(op: Operation) -> bool:
        """Add the ops computing `op`'s operands, down to byte tensors and
        single-element constants; False at anything else."""
        pending = list(op.operands)
        while pending:
            value = pending.pop()
            if _is_scalar_constant(value):
                continue
            if _is_byte(value.type):
                leaves.add(value)
            elif not inside(value):
                return False
            elif value.owner not in ops:
                ops.add(value.owner)
                pending.extend(value.owner.operands)
        return True

    if not add_operands(end):
        return None
    # open the latest byte tensor while there are two sources, or one that
    # leaves only a requantization (the rest of a chain an earlier table took)
    while len(leaves) > 1 or (
        len(leaves) == 1 and not _worth_a_table(ops) and openable(next(iter(leaves)))
    ):
        latest = max(leaves, key=lambda leaf: order.get(leaf.owner, -1))
        if not openable(latest):
            return None
        leaves.discard(latest)
        ops.add(latest.owner)
        if not add_operands(latest.owner):
            return None
    if len(leaves) != 1:
        return None
    (source,) = leaves
    if source.type.get_shape() != shape:
        return None
    return source, sorted(ops, key=lambda op: order[op])


def _worth_a_table(ops) -> bool:
    """An earlier table among the ops (one table then replaces two), or
    MIN_CHAIN_OPS ops of which one is not (de)quantizing arithmetic."""
    if any(isinstance(op, graph.LookupOp) for op in ops):
        return True
    return len(ops) >= MIN_CHAIN_OPS and any(not isinstance(op, QUANTIZING_OPS) for op in ops)


class _OfEntries:
    """`op` as the reference interpreter sees it, its result of one element
    per table entry (a cast's semantics reads its result type)."""

    def __init__(self, op: Operation, result_type: TensorType):
        self._op = op
        self.result = SimpleNamespace(type=result_type)
        self.results = [self.result]

    def __getattr__(self, name: str):
        return getattr(self._op, name)


def _table(source: SSAValue, ops: list[Operation]) -> np.ndarray:
    """The chain's result for each of the source's 256 values, in order
    (from -128 for i8), by the reference interpreter."""
    signed = source.type.element_type.signedness.data != Signedness.UNSIGNED
    values: dict[SSAValue, np.ndarray] = {
        source: np.arange(-128, 128, dtype=np.int8) if signed else np.arange(256, dtype=np.uint8)
    }
    entries = graph.TABLE_ENTRIES
    for op in ops:
        operands = [
            values[operand]
            if operand in values
            else reference.evaluate(operand.owner, []).reshape(1)
            for operand in op.operands
        ]
        result_type = TensorType(op.results[0].type.element_type, [entries])
        with np.errstate(all="ignore"):
            computed = reference.IMPLEMENTATIONS[type(op)](_OfEntries(op, result_type), *operands)
        values[op.results[0]] = reference.to_tensor(computed, result_type)
    return values[ops[-1].results[0]]


@dataclass(frozen=True)
class GraphLookupTablesPass(FunctionPass):
    """Element-wise chains from one byte tensor to a byte tensor as table reads (module doc)."""

    name = "graph-lookup-tables"
    STATISTICS = {"lookup-tables": "element-wise byte chains read from a table"}

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        count = 0
        ops = list(function.body.block.ops)
        order = {op: index for index, op in enumerate(ops)}
        for op in ops:
            if op.parent is None or not (isinstance(op, graph.CastOp) and _is_byte(op.result.type)):
                continue  # erased with a chain, or no byte result
            found = _chain(op, order)
            if found is None or not _worth_a_table(found[1]):
                continue
            source, chain = found
            element = op.result.type.element_type
            table = dense_elements(_table(source, chain), element)
            lookup = graph.LookupOp.create(
                operands=[source], result_types=[op.result.type], properties={"table": table}
            )
            Rewriter.replace_op(op, lookup)
            order[lookup] = order[op]
            for dead in reversed(chain[:-1]):  # what only the table's result read
                if not any(result.uses for result in dead.results):
                    Rewriter.erase_op(dead)
            count += 1
        return {"lookup-tables": count}
