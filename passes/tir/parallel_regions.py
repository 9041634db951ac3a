"""tir-parallel-regions: consecutive kernels made only of parallel loops run
in one parallel region, one fork and one join for the lot (seed 003: the
per-op scheduling overhead is not negligible against the compute).

    %0 = tir.call @add__2(%t, %x, %b) ...      // pure ops + a parallel loop
    tir.evaluate %0 : none
    %1 = tir.call @relu__3(%u, %t) ...         // the same
    tir.evaluate %1 : none

becomes

    %r = tir.call @sc_region_begin() : () -> none
    tir.evaluate %r : none
    %0 = tir.call @add__2(%t, %x, %b) ...
    tir.evaluate %0 : none
    %1 = tir.call @relu__3(%u, %t) ...
    tir.evaluate %1 : none
    %e = tir.call @sc_region_end() : () -> none
    tir.evaluate %e : none

In a region the runtime queues each parallel loop, with a copy of its
captures, and runs the queue at sc_region_end as the stages of one job:
stage s+1 starts once stage s is done, so each loop still sees what the
previous one wrote (runtime/threadpool.ll). What runs between the loops
must therefore not depend on them having run: a kernel qualifies when its
body holds only pure expressions (constants, index and address arithmetic),
outlined parallel loops and calls of qualifying kernels; the caller's code
between the calls must be pure expressions too. Regions nest (the runtime
counts them), and a region holds at least two loops. Runs after
tir-outline-parallel.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler.dialects import tir
from graphcompiler.runtime import symbols
from graphcompiler.runtime.symbols import PARALLEL_CALL, REGION_BEGIN, REGION_END

PURE_EXPRESSIONS = (
    tir.ConstOp,
    tir.BinaryExpression,
    tir.UnaryExpression,
    tir.ConversionExpression,
    tir.SelectOp,
    tir.TensorPtrOp,
    tir.FuncAddrOp,
    tir.GlobalRefOp,
)
"""Ops that read no memory and write none: safe to run before the queued
loops before them have run."""


class _LoopCounts:
    """How many parallel loops a call of each function starts, for the
    functions whose body does nothing else (None for the others)."""

    def __init__(self, module: ModuleOp):
        self.functions = {
            f.sym_name.data: f for f in module.body.block.ops if isinstance(f, tir.FuncOp)
        }
        self.known: dict[str, int | None] = {}

    def of_call(self, call: tir.CallOp) -> int | None:
        name = call.callee.root_reference.data
        if name == PARALLEL_CALL:
            return 1
        if name not in self.known:
            self.known[name] = None  # a recursive call does not qualify
            function = self.functions.get(name)
            body = function.body.blocks if function is not None else ()
            self.known[name] = self._of_blocks(body) if body else None
        return self.known[name]

    def _of_blocks(self, blocks) -> int | None:
        total = 0
        for block in blocks:
            for op in block.ops:
                count = self.of_op(op)
                if count is None:
                    return None
                total += count
        return total

    def of_op(self, op: Operation) -> int | None:
        """Loops `op` starts (0 for a pure op), None if it does anything else."""
        if isinstance(op, PURE_EXPRESSIONS):
            return 0
        if isinstance(op, tir.EvaluateOp):
            return 0 if isinstance(op.value.owner, tir.CallOp) else None
        if isinstance(op, tir.ReturnOp):
            return 0 if not op.operands else None
        if isinstance(op, tir.StmtsOp):
            return self._of_blocks(op.body.blocks)
        if isinstance(op, tir.CallOp):
            return self.of_call(op)
        return None


def _runs(block: Block, counts: _LoopCounts):
    """Maximal runs of ops in `block` that qualify and start at least two
    loops, as (first loop-starting call, last loop-starting call)."""
    first = last = None
    loops = 0
    for op in block.ops:
        count = counts.of_op(op)
        if count is None:
            if loops >= 2:
                yield first, last
            first = last = None
            loops = 0
        elif count > 0:
            first = first or op
            last = op
            loops += count
    if loops >= 2:
        yield first, last


def _runtime_call(declaration: tir.FuncOp, where: InsertPoint) -> None:
    call = tir.CallOp.create(
        properties={"callee": SymbolRefAttr(StringAttr(declaration.sym_name.data))},
        result_types=[declaration.return_type],
    )
    Rewriter.insert_op(call, where)
    Rewriter.insert_op(tir.EvaluateOp.create(operands=[call.result]), InsertPoint.after(call))


@dataclass(frozen=True)
class TirParallelRegionsPass(ModulePass):
    """Run consecutive kernels made only of parallel loops in one parallel region."""

    name = "tir-parallel-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        counts = _LoopCounts(op)
        regions = []
        for function in counts.functions.values():
            for block in function.body.blocks:
                regions.extend(_runs(block, counts))
        if not regions:
            return
        begin, end = (symbols.declared_in(op, name) for name in (REGION_BEGIN, REGION_END))
        for first, last in regions:
            _runtime_call(begin, InsertPoint.before(first))
            after = last.next_op
            is_its_evaluate = isinstance(after, tir.EvaluateOp) and after.value.owner is last
            _runtime_call(end, InsertPoint.after(after if is_its_evaluate else last))
