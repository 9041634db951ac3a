"""graph-constant-fold: ops whose inputs are all constants are evaluated at
compile time (with the reference semantics) and replaced by a constant.

A result bigger than `max-elements` that is also bigger than its constant
operands together is left alone: folding a scalar into a broadcast tensor
trades a cheap op for a big constant (seed 003's warning). Ops that do not
grow the data (a concat of weights made by graph-merge-matmul, a transpose
or slice of a weight) are folded whatever their size, so the kernels that
use the result see a constant (a matmul packs it once). A result whose
elements are all equal is stored as a splat (one value).

Folded values are carried from op to op as arrays; only those that an op
left to run (or the function's return) uses become `graph.constant`s. A
dynamically quantized BERT-base folds each weight's zero-point term as
reduce_sum(cast(w, i32)): made constants, the 73 casts were 343 MB of
attributes that only the sums read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from graphcompiler.dialects import graph
from graphcompiler.interpreters import reference
from graphcompiler.ir import pass_statistics
from graphcompiler.ir.element_types import dense_elements
from graphcompiler.ir.pipeline import pass_option


def fold(op: Operation, known: dict[SSAValue, np.ndarray] | None = None) -> np.ndarray:
    """The value of `op`, each of whose operands is a constant or has its
    value in `known`."""
    known = known or {}
    arrays = [
        known[operand] if operand in known else reference._constant(operand.owner)
        for operand in op.operands
    ]
    return reference.evaluate(op, arrays)


def _folded(op: Operation, known: dict[SSAValue, np.ndarray]) -> bool:
    return len(op.results) == 1 and op.results[0] in known


@dataclass(frozen=True)
class GraphConstantFoldPass(ModulePass):
    """Evaluate graph ops whose operands are all constants at compile time."""

    name = "graph-constant-fold"
    max_elements: int = pass_option(
        1 << 16, "ops with bigger results are left to run (their constants would bloat the code)"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        known: dict[SSAValue, np.ndarray] = {}  # the folded ops' values
        skipped = 0
        for candidate in list(op.walk()):
            if not isinstance(candidate, graph.GraphOp) or isinstance(candidate, graph.ConstantOp):
                continue
            operands = candidate.operands
            if (
                len(candidate.results) != 1
                or not operands
                or not all(o in known or isinstance(o.owner, graph.ConstantOp) for o in operands)
            ):
                continue
            result = candidate.results[0]
            size = np.prod(result.type.get_shape(), dtype=np.int64)
            inputs = sum(np.prod(o.type.get_shape(), dtype=np.int64) for o in set(operands))
            if size > self.max_elements and size > inputs:
                skipped += 1
                continue
            known[result] = fold(candidate, known)
        for result, value in known.items():
            if all(_folded(use.operation, known) for use in result.uses):
                continue  # only folded ops read it: dead once they are replaced
            constant = graph.ConstantOp.build_from(
                [],
                value=dense_elements(
                    value,
                    result.type.element_type,
                    shape=result.type.get_shape(),
                    splat_if_uniform=True,
                ),
            )
            Rewriter.replace_op(result.owner, constant)
        region_dce(op.body)  # the constants the folded ops used may be dead now
        pass_statistics.record(self, "folded-ops", len(known), "ops evaluated at compile time")
        pass_statistics.record(
            self, "too-big", skipped, "foldable ops left because of max-elements"
        )
