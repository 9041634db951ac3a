"""graph-fuse: element-wise chains, and element-wise epilogues of matmul and
conv2d, become one `graph.fused` op each (lowered to one loop nest, so the
intermediates never touch memory).

Ops are grouped in block order: an element-wise op joins the group of one
of its producers when they have the same result shape, its other operands
are defined before the group starts (the fused op takes the place of the
group's first op, so every use stays after its definition) or are
constants (moved up to the fused op), and `max-ops` is not reached; an
op that can join no producer's group joins that of the element-wise op
just before it on the same terms (a formula's branches written op by op,
as the ONNX importer's Atan or Asinh, become one kernel). A
matmul (f32, plain layouts, no transposes: the brgemm path; or one that
widens, integers or bf16 packed into words, transposed or not) or a conv2d
starts a group when an element-wise op of its shape consumes it; the
lowering applies the epilogue to each output tile right after computing it.
Values used outside a group become results of the fused op. Groups of a
single element-wise op, dead groups (no value used outside) and the dead
ops of a group are left alone, for DCE.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler.dialects import graph
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.passes.function_pass import FunctionPass


@dataclass
class Group:
    ops: list[Operation] = field(default_factory=list)
    at: Operation | None = None
    """Where the fused op goes (its inputs are defined before): the first
    op, or a row anchor (its producers feed nothing else, so their inputs
    are defined before it too)."""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.ops[-1].results[0].type.get_shape()

    @property
    def start(self) -> Operation:
        return self.at or self.ops[0]


def _plain_f32(*values: SSAValue) -> bool:
    return all(
        v.type.element_type == Float32Type() and not isinstance(v.type.encoding, graph.FormatAttr)
        for v in values
    )


def _plain(value: SSAValue) -> bool:
    return not isinstance(value.type.encoding, graph.FormatAttr)


def _row_anchorable(op: Operation) -> bool:
    """softmax, log_softmax or layer_norm over the innermost axis, f32, plain."""
    if not isinstance(op, graph.ROW_ANCHORS) or not _plain_f32(*op.operands, *op.results):
        return False
    rank = len(op.operands[0].type.get_shape())
    return rank > 0 and op.normalized_axis(rank) == rank - 1


def _producers(anchor: Operation, position, taken, max_ops) -> list:
    """The element-wise ops before `anchor` whose results feed only its
    first operand or each other, of the anchor's shape, plain layouts, not
    in another group. Such an op is an operand's owner of the anchor or of a
    member, so only those are visited, the latest first (every user of an
    op is then decided before it): not every op before the anchor."""
    members: set[Operation] = set()
    shape = anchor.results[0].type.get_shape()
    pending: list[tuple[int, int, Operation]] = []  # (-position, id, op): latest first
    seen: set[Operation] = set()

    def visit_operands_of(op: Operation) -> None:
        for value in op.operands[:1] if op is anchor else op.operands:
            owner = value.owner
            if isinstance(owner, Operation) and owner in position and owner not in seen:
                seen.add(owner)
                heapq.heappush(pending, (-position[owner], id(owner), owner))

    visit_operands_of(anchor)
    while pending and len(members) + 1 < max_ops:
        op = heapq.heappop(pending)[2]
        if op in taken or not isinstance(op, graph.ELEMENTWISE_OPS):
            continue
        result = op.results[0]
        uses = list(result.uses)
        if (
            uses
            and result.type.get_shape() == shape
            and all(_plain(v) for v in (*op.operands, result))
            and all(
                u.operation in members or (u.operation is anchor and u.index == 0) for u in uses
            )
        ):
            members.add(op)
            visit_operands_of(op)
    return sorted(members, key=position.__getitem__)


def _anchorable(op: Operation) -> bool:
    if isinstance(op, graph.Conv2dOp | graph.BlockedConv2dOp):
        return True
    if not isinstance(op, graph.MatmulOp):
        return False
    if op.widens:  # integer or bf16 operands: the packed-word kernels, transposed or not
        return all(_plain(v) for v in (*op.operands, op.result))
    return _plain_f32(*op.operands, op.result) and not op.is_transposed


def find_groups(block: Block, max_ops: int) -> list[Group]:
    ops = list(block.ops)
    position = {op: index for index, op in enumerate(ops)}
    group_of: dict[Operation, Group] = {}
    groups: list[Group] = []

    def defined_before(value: SSAValue, group: Group) -> bool:
        owner = value.owner
        if not isinstance(owner, Operation) or isinstance(owner, graph.ConstantOp):
            return True  # a block argument, or a constant `fuse` moves up
        return position.get(owner, -1) < position[group.start]

    producers: dict[Operation, list[Operation]] = {}
    latest_plain: dict[tuple[int, ...], Group] = {}  # by shape: element-wise ops only
    taken: set[Operation] = set()
    for op in ops:  # first, so that a row anchor's producers form no chain of their own
        if _row_anchorable(op):
            producers[op] = _producers(op, position, taken, max_ops)
            taken.update(producers[op])

    for op in ops:
        if op in taken:  # placed with its row anchor
            continue
        if op in producers:
            group = Group([*producers[op], op], at=op)
            groups.append(group)
            for member in group.ops:
                group_of[member] = group
            continue
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
        if chosen is None:  # no producer's group: the one of the op just before, if it can
            latest = latest_plain.get(shape)
            if (
                latest is not None
                and _previous(ops, position, op) in latest.ops
                and len(latest.ops) < max_ops
                and all(o.owner in latest.ops or defined_before(o, latest) for o in op.operands)
            ):
                chosen = latest
        if chosen is None:
            chosen = Group()
            groups.append(chosen)
        if chosen.at is None and isinstance(
            chosen.ops[0] if chosen.ops else op, graph.ELEMENTWISE_OPS
        ):
            latest_plain[shape] = chosen
        chosen.ops.append(op)
        group_of[op] = chosen
    for group in groups:
        _recompute_widening_tails(group, group_of)
        _drop_dead_ops(group)
    return [g for g in groups if len(g.ops) > 1 and _outputs(g)]


def _previous(ops: list[Operation], position: dict, op: Operation) -> Operation | None:
    """The op before `op` in the block, constants skipped (fuse moves them up)."""
    index = position[op] - 1
    while index >= 0 and isinstance(ops[index], graph.ConstantOp):
        index -= 1
    return ops[index] if index >= 0 else None


def _drop_dead_ops(group: Group) -> None:
    """Keep the ops whose results reach a use outside the group: a dead
    chain that joined a live one's group (same shape, independent inputs)
    is left for DCE, not computed by the fused op."""
    members, live = set(group.ops), set()
    for op in reversed(group.ops):  # users after their producers
        uses = [u.operation for r in op.results for u in r.uses]
        if any(user not in members or user in live for user in uses):
            live.add(op)
    group.ops = [op for op in group.ops if op in live]
    if group.at is not None and group.at not in live:
        group.at = None


WIDENING_TAIL_OPS = 4
"""The most element-wise ops a consumer group recomputes to read a narrower
value (a dequantization is 3: cast, subtract the zero point, scale)."""


def _bits(value: SSAValue) -> int:
    element = value.type.element_type
    return element.bitwidth if hasattr(element, "bitwidth") else element.width.data


def _widening_tail(value: SSAValue, group: Group) -> tuple[SSAValue, list[Operation]] | None:
    """(u, tail) where the group computes `value` from a narrower u of its
    shape by the element-wise ops `tail` (at most WIDENING_TAIL_OPS, in
    order), each taking one value of the chain and otherwise only values
    defined before the group: a dequantization of the u8 a quantization
    made (or of a group input)."""
    members = set(group.ops)
    shape = value.type.get_shape()
    tail: list[Operation] = []
    best = None
    current = value
    while current.owner in members and len(tail) < WIDENING_TAIL_OPS:
        op = current.owner
        if not isinstance(op, graph.ELEMENTWISE_OPS):
            break
        chain = [o for o in op.operands if o.owner in members]
        if not chain:  # the tail starts at a group input
            chain = [o for o in op.operands if o.type.get_shape() == shape]
        if len(chain) != 1:
            break
        tail.insert(0, op)
        current = chain[0]
        if current.type.get_shape() == shape and _bits(current) < _bits(value):
            best = (current, list(tail))
    return best


def _recompute_widening_tails(group: Group, group_of: dict[Operation, Group]) -> None:
    """A value the group hands only to other groups, computed from a
    narrower one by a short tail of element-wise ops (_widening_tail), is
    recomputed by each consumer group from the narrower value instead, so
    that the narrower one crosses memory: a quantized network's layers then
    pass u8 activations, not their dequantized f32 (4x the bytes)."""
    members = set(group.ops)
    for op in list(group.ops):
        for value in op.results:
            outside = [u.operation for u in value.uses if u.operation not in members]
            consumers = list(
                {id(group_of.get(user)): group_of.get(user) for user in outside}.values()
            )
            anchors = [user for user in outside if not isinstance(user, graph.ELEMENTWISE_OPS)]
            if not outside or anchors or any(consumer is None for consumer in consumers):
                continue  # an anchor, or an op outside any group, needs the value itself
            found = _widening_tail(value, group)
            if found is None:
                continue
            narrow, tail = found
            for consumer in consumers:
                users = [user for user in outside if group_of[user] is consumer]
                first = min(consumer.ops.index(user) for user in users)
                mapping: dict[SSAValue, SSAValue] = {}  # each clone reads the previous
                clones = [tail_op.clone(value_mapper=mapping) for tail_op in tail]
                Rewriter.insert_op(clones, InsertPoint.before(consumer.ops[first]))
                consumer.ops[first:first] = clones
                for clone in clones:
                    group_of[clone] = consumer
                for user in users:
                    for index, operand in enumerate(user.operands):
                        if operand is value:
                            user.operands[index] = clones[-1].results[0]
            for tail_op in reversed(tail):  # dead in this group now, unless still used
                if not tail_op.results[0].uses:
                    group.ops.remove(tail_op)
                    members.discard(tail_op)
                    del group_of[tail_op]
                    Rewriter.erase_op(tail_op)


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
    # an input written after the first op comes before the member using it:
    # the ops up to the last member are enough (not all the later ones,
    # which made fusing an unrolled recurrence quadratic in its steps)
    between, members_left = set(), len(members) - 1
    op = group.start.next_op
    while op is not None and members_left:
        if op in members:
            members_left -= 1
        else:
            between.add(op)
        op = op.next_op
    for value in inputs:
        if value.owner in between:  # a constant (find_groups' rule) written after the first op
            value.owner.detach()
            Rewriter.insert_op(value.owner, InsertPoint.before(group.start))
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
    Rewriter.insert_op(fused, InsertPoint.before(group.start))
    for value, result in zip(outputs, fused.results, strict=True):
        value.replace_all_uses_with(result)
    for op in reversed(group.ops):
        Rewriter.erase_op(op)
    return fused


@dataclass(frozen=True)
class GraphFusePass(FunctionPass):
    """Fuse element-wise chains and matmul/conv2d epilogues into graph.fused ops."""

    name = "graph-fuse"
    max_ops: int = pass_option(32, "the most ops one fused group takes")
    STATISTICS = {"fused-groups": "graph.fused ops made", "fused-ops": "ops moved into them"}

    def run_on_function(self, function: func.FuncOp) -> dict[str, int]:
        groups = find_groups(function.body.block, self.max_ops)
        counts = {"fused-groups": len(groups), "fused-ops": sum(len(group.ops) for group in groups)}
        for group in groups:
            fuse(group)
        return counts
