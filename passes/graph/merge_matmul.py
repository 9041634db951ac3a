"""graph-merge-matmul: matmuls sharing their left operand become one matmul
over the concatenated right operands, followed by slices (seed 003).

    %q = matmul %x, %wq    %k = matmul %x, %wk
 -> %w = concat %wq, %wk {axis = 1}   %qk = matmul %x, %w
    %q = slice %qk [.., 0:Nq]   %k = slice %qk [.., Nq:Nq+Nk]

One larger matmul uses the machine better than several thin ones. Only
non-transposed matmuls with 2-D right operands of one element type merge,
and only right operands defined before the first matmul of the group (the
merged ops take its place). With constant weights, graph-constant-fold then
folds the concat away.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects import graph
from graphcompiler.passes.function_pass import FunctionPass


def _mergeable(op: Operation) -> bool:
    if not isinstance(op, graph.MatmulOp):
        return False
    return not op.is_transposed and len(op.b.type.get_shape()) == 2


def merge(group: list[graph.MatmulOp]) -> bool:
    """Merge `group`; False (nothing changed) when the merged ops would not
    be valid, e.g. weights too big to concatenate."""
    first = group[0]
    try:
        concat = graph.ConcatOp.build_from([m.b for m in group], axis=1)
        *batch, rows, _ = first.result.type.get_shape()
        width = concat.result.type.get_shape()[-1]
        result_type = TensorType(first.result.type.element_type, [*batch, rows, width])
        merged = graph.MatmulOp.build_from([first.a, concat.result], result_type)
    except VerifyException:
        return False
    Rewriter.insert_op([concat, merged], InsertPoint.before(first))
    *leading, _ = merged.result.type.get_shape()
    offset = 0
    for matmul in group:
        width = matmul.b.type.get_shape()[1]
        piece = graph.SliceOp.build_from(
            [merged.result], starts=[0] * len(leading) + [offset], ends=[*leading, offset + width]
        )
        Rewriter.insert_op(piece, InsertPoint.before(first))
        matmul.result.replace_all_uses_with(piece.result)
        offset += width
    for matmul in group:
        Rewriter.erase_op(matmul)
    return True


def _groups(block) -> list[list[graph.MatmulOp]]:
    position = {op: index for index, op in enumerate(block.ops)}
    by_input: dict[tuple[SSAValue, object, object], list[graph.MatmulOp]] = {}
    for op in block.ops:
        if _mergeable(op):
            key = (op.a, op.b.type.element_type, op.result.type.element_type)
            by_input.setdefault(key, []).append(op)
    groups = []
    for matmuls in by_input.values():
        first = position[matmuls[0]]

        def defined_before(value: SSAValue, first: int = first) -> bool:
            return not isinstance(value.owner, Operation) or position.get(value.owner, -1) < first

        usable = [m for m in matmuls if defined_before(m.b)]
        if len(usable) > 1:
            groups.append(usable)
    return groups


@dataclass(frozen=True)
class GraphMergeMatmulPass(FunctionPass):
    """Merge matmuls that share their left operand into one matmul + slices."""

    name = "graph-merge-matmul"
    STATISTICS = {"merged-matmuls": "matmuls merged into wider ones"}

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        groups = [group for group in _groups(function.body.block) if merge(group)]
        return {"merged-matmuls": sum(map(len, groups))}
