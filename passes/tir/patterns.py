"""`apply_patterns`: the rewrite driver of the tir passes that rewrite a few
kinds of op (tir-legalize-types, tir-expand-math), which convert-tir-to-llvm
also runs on every module. It visits only the ops of the given kinds (xDSL's
PatternRewriteWalker gives every op to every pattern, in as many walks as it
takes to change nothing), then the ops of those kinds that rewrites create."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint


def apply_patterns(
    root: Operation, patterns: Sequence[RewritePattern], kinds: tuple[type[Operation], ...]
) -> bool:
    """Apply the first of `patterns` that matches to each op nested in `root`
    that is an instance of `kinds`, and to those the rewrites create, until
    none matches; an op rewritten in place is looked at again. Returns
    whether anything changed."""
    worklist = [op for op in root.walk() if isinstance(op, kinds)]
    worklist.reverse()  # popped in walk order
    created: list[Operation] = []
    rewriter = PatternRewriter(InsertPoint.at_start(Block()))  # one for all ops, as xDSL's walker
    rewriter.operation_insertion_handler.append(created.append)
    changed = False
    while worklist:
        op = worklist.pop()
        if op.parent is None:  # erased by an earlier rewrite
            continue
        rewriter.current_operation, rewriter.insertion_point = op, InsertPoint.before(op)
        for pattern in patterns:
            rewriter.has_done_action = False
            created.clear()
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                changed = True
                if op.parent is not None:  # modified in place
                    worklist.append(op)
                worklist.extend(o for o in reversed(created) if isinstance(o, kinds))
                break
    return changed
