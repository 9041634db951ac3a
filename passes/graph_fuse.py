"""graph-fuse: element-wise chains, and element-wise epilogues of matmul and
conv2d, become one `graph.fused` op each (lowered to one loop nest, so the
intermediates never touch memory).

Ops are grouped in block order: an element-wise op joins the group of one
of its producers when they have the same result shape, its other operands
are defined before the group starts (the fused op takes the place of the
group's first op, so every use stays after its definition) or are
constants (moved up to the fused op), and `max-ops` is not reached. A
matmul (f32, plain layouts, no transposes: the brgemm path) or a conv2d
starts a group when an element-wise op of its shape consumes it; the
lowering applies the epilogue to each output tile right after computing it.
Values used outside a group become results of the fused op. Groups of a
single element-wise op, and dead groups (no value used outside), are left
alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler import statistics
from graphcompiler.dialects import graph


@dataclass
class Group:
    ops: list[Operation] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.ops[-1].results[0].type.get_shape()


def _anchorable(op: Operation) -> bool:
    if isinstance(op, graph.Conv2dOp):
        return True
    if not isinstance(op, graph.MatmulOp):
        return False
    props = op.with_defaults(op.properties)
    plain_f32 = all(
        v.type.element_type == Float32Type() and not isinstance(v.type.encoding, graph.FormatAttr)
        for v in (*op.operands, op.result)
    )
    return (
        plain_f32
        and not graph.bool_value(props, "transpose_a")
        and not graph.bool_value(props, "transpose_b")
    )


def find_groups(block: Block, max_ops: int) -> list[Group]:
    ops = list(block.ops)
    position = {op: index for index, op in enumerate(ops)}
    group_of: dict[Operation, Group] = {}
    groups: list[Group] = []

    def defined_before(value: SSAValue, group: Group) -> bool:
        owner = value.owner
        if not isinstance(owner, Operation) or isinstance(owner, graph.ConstantOp):
            return True  # a block argument, or a constant `fuse` moves up
        return position.get(owner, -1) < position[group.ops[0]]

    for op in ops:
        if not isinstance(op, graph.ELEMENTWISE_OPS):
            continue
        shape = op.results[0].type.get_shape()
        chosen = None
        for operand in op.operands:
            producer = operand.owner
            group = group_of.get(producer)
            if (
                group is None
                and isinstance(producer, Operation)
                and producer in position
                and _anchorable(producer)
            ):
                if producer.results[0].type.get_shape() == shape:
                    group = Group([producer])
                    group_of[producer] = group
                    groups.append(group)
            if group is None or group.shape != shape or len(group.ops) >= max_ops:
                continue
            if all(o.owner in group.ops or defined_before(o, group) for o in op.operands):
                chosen = group
                break
        if chosen is None:
            chosen = Group()
            groups.append(chosen)
        chosen.ops.append(op)
        group_of[op] = chosen
    return [g for g in groups if len(g.ops) > 1 and _outputs(g)]


def _outputs(group: Group) -> list[SSAValue]:
    """The group's values used outside it: the fused op's results. A group
    without any is dead code, left for DCE rather than fused into an op of
    no results."""
    members = set(group.ops)
    return [
        r for op in group.ops for r in op.results if any(u.operation not in members for u in r.uses)
    ]


def fuse(group: Group) -> graph.FusedOp:
    """Replace the group's ops by one graph.fused at the place of its first
    op: its inputs are defined before that (find_groups' rule; constants
    written later are moved up) and its users come after it."""
    members = set(group.ops)
    inputs: list[SSAValue] = []
    for op in group.ops:
        for operand in op.operands:
            if operand.owner not in members and operand not in inputs:
                inputs.append(operand)
    outputs = _outputs(group)
    later = set()
    op = group.ops[0].next_op
    while op is not None:
        later.add(op)
        op = op.next_op
    for value in inputs:
        if value.owner in later:  # a constant (find_groups' rule) written after the first op
            value.owner.detach()
            Rewriter.insert_op(value.owner, InsertPoint.before(group.ops[0]))
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    for argument, value in zip(block.args, inputs, strict=True):
        argument.name_hint = value.name_hint
    for op in group.ops:
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
    block.add_op(graph.YieldOp.create(operands=[mapping[v] for v in outputs]))
    fused = graph.FusedOp.create(
        operands=inputs, result_types=[v.type for v in outputs], regions=[Region(block)]
    )
    Rewriter.insert_op(fused, InsertPoint.before(group.ops[0]))
    for value, result in zip(outputs, fused.results, strict=True):
        value.replace_all_uses_with(result)
    for op in reversed(group.ops):
        Rewriter.erase_op(op)
    return fused


@dataclass(frozen=True)
class GraphFusePass(ModulePass):
    """Fuse element-wise chains and matmul/conv2d epilogues into graph.fused ops."""

    name = "graph-fuse"
    max_ops: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fused_groups = fused_ops = 0
        blocks = [b for f in op.walk() if isinstance(f, func.FuncOp) for b in f.body.blocks]
        for block in blocks:
            for group in find_groups(block, self.max_ops):
                fused_groups += 1
                fused_ops += len(group.ops)
                fuse(group)
        statistics.record(self, "fused-groups", fused_groups, "graph.fused ops made")
        statistics.record(self, "fused-ops", fused_ops, "ops moved into them")
