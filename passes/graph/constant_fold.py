"""graph-constant-fold: ops whose inputs are all constants are evaluated at
compile time (with the reference semantics) and replaced by a constant.

A result bigger than `max-elements` that is also bigger than its constant
operands together is left alone: folding a scalar into a broadcast tensor
trades a cheap op for a big constant (seed 003's warning). Ops that do not
grow the data (a concat of weights made by graph-merge-matmul, a transpose
or slice of a weight) are folded whatever their size, so the kernels that
use the result see a constant (a matmul packs it once). A result whose
elements are all equal is stored as a splat (one value).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from graphcompiler.dialects import graph
from graphcompiler.interpreters import reference
from graphcompiler.ir import pass_statistics
from graphcompiler.ir.element_types import dense_elements
from graphcompiler.ir.pipeline import pass_option


def fold(op: Operation) -> np.ndarray:
    """The value of `op`, all of whose operands are constants."""
    arrays = [reference._constant(operand.owner) for operand in op.operands]
    return reference.evaluate(op, arrays)


@dataclass(frozen=True)
class GraphConstantFoldPass(ModulePass):
    """Evaluate graph ops whose operands are all constants at compile time."""

    name = "graph-constant-fold"
    max_elements: int = pass_option(
        1 << 16, "ops with bigger results are left to run (their constants would bloat the code)"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        folded = skipped = 0
        for candidate in list(op.walk()):
            if not isinstance(candidate, graph.GraphOp) or isinstance(candidate, graph.ConstantOp):
                continue
            if not candidate.operands or not all(
                isinstance(o.owner, graph.ConstantOp) for o in candidate.operands
            ):
                continue
            result = candidate.results[0]
            size = np.prod(result.type.get_shape(), dtype=np.int64)
            inputs = sum(
                np.prod(o.type.get_shape(), dtype=np.int64) for o in set(candidate.operands)
            )
            if size > self.max_elements and size > inputs:
                skipped += 1
                continue
            value = fold(candidate)
            constant = graph.ConstantOp.build_from(
                [],
                value=dense_elements(
                    value,
                    result.type.element_type,
                    shape=result.type.get_shape(),
                    splat_if_uniform=True,
                ),
            )
            Rewriter.replace_op(candidate, constant)
            folded += 1
        region_dce(op.body)  # the constants the folded ops used may be dead now
        pass_statistics.record(self, "folded-ops", folded, "ops evaluated at compile time")
        pass_statistics.record(
            self, "too-big", skipped, "foldable ops left because of max-elements"
        )
