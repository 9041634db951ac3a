"""`FunctionPass`: a pass that works on each function body on its own.

Most graph passes rewrite one graph function at a time and count what they
did. The walk over the module's functions and the statistics are the same
for all of them, so they live here: a subclass implements `run_on_function`
and returns its counts; `apply` sums them over the module and records one
statistic per name in `STATISTICS` (zero included, so `--mlir-pass-statistics`
always lists them).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Mapping
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from graphcompiler.ir import pass_statistics


class FunctionPass(ModulePass, ABC):
    """Runs `run_on_function` on every `func.func` that has a body (the
    verifier gives a graph function exactly one block)."""

    STATISTICS: ClassVar[Mapping[str, str]] = {}
    """Statistic name -> description, for the counts `run_on_function` returns."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        totals: Counter[str] = Counter()
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp) and f.body.blocks]:
            totals.update(self.run_on_function(function) or {})
        for name, description in self.STATISTICS.items():
            pass_statistics.record(self, name, totals[name], description)

    @abstractmethod
    def run_on_function(self, function: func.FuncOp) -> Mapping[str, int] | None:
        """Rewrite `function`; return the counts named in STATISTICS."""
