"""graph-schedule-ops: reorder each graph function's ops (seed 000).

`policy=heuristic` walks the graph in topological order (the seed's
`OpVisitor` with the DAG updater) and, among the ready ops, picks the one
with the highest score:

    score(op) = sum over inputs t of  NormalizedSize(t) * heat(t) / refcount(t)
              - sum over outputs t of (NormalizedSize(t) + distance(t))

- NormalizedSize(t) = bytes(t) / bytes(largest tensor of the graph);
- heat(t) = 2.5 if t was produced by the op visited last, 1.5 by the one
  before it, else 1.0 (hot inputs are still in cache);
- refcount(t) = 1 if this op is t's last unvisited user (running it frees
  t), else the number of ops using t;
- distance(t) = (max over users u of t of distanceToVisitedOps(u) - 1) * 2,
  where distanceToVisitedOps(u) is the length of the shortest producer path
  from u back to a visited op (graph inputs and the candidate count as
  visited; always >= 1): outputs whose consumers are far from runnable live
  long.

Constants are taken first, outside the scoring: they become globals, not
tensors the ops' memory or cache holds, so visiting one makes nothing hot
and frees nothing (and scoring every weight of a model at every step was
most of the pass's time).

`policy=dfs` and `policy=bfs` use the seed's predefined topological orders.
The pass records the peak live bytes before and after as statistics: graph
inputs and op results, each alive until its last use (outputs: to the end).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import OpVisitor
from graphcompiler.dialects.graph.ops import is_element_type
from graphcompiler.ir.element_types import byte_size
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.passes.function_pass import FunctionPass

HEAT_LAST, HEAT_BEFORE_LAST, HEAT_COLD = 2.5, 1.5, 1.0


def tensor_bytes(value: SSAValue) -> int:
    """Bytes of a tensor value; scalars (and tensors of other element types)
    count 0, they do not compete for the cache."""
    if not isinstance(value.type, TensorType) or not is_element_type(value.type.element_type):
        return 0
    count = 1
    for dim in value.type.get_shape():
        count *= dim
    return count * byte_size(value.type.element_type)


def peak_live_bytes(
    ops: Sequence[Operation], inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]
) -> int:
    """The most tensor bytes alive at once when running `ops` in order. A
    tensor lives from its op (inputs: from the start) to its last user;
    outputs live to the end."""
    position = {op: index for index, op in enumerate(ops)}
    last_use: dict[SSAValue, int] = {}
    for op in ops:
        for operand in op.operands:
            last_use[operand] = max(last_use.get(operand, -1), position[op])
    kept = set(outputs)
    live = peak = sum(tensor_bytes(v) for v in inputs)
    for index, op in enumerate(ops):
        live += sum(tensor_bytes(r) for r in op.results)
        peak = max(peak, live)
        for value in {*op.operands, *op.results}:
            if value not in kept and last_use.get(value, index) == index:
                live -= tensor_bytes(value)
    return peak


@dataclass
class HeuristicScheduler:
    """The seed 000 selector for OpVisitor: the ready op with the best score."""

    ops: list[Operation]

    def __post_init__(self) -> None:
        self.order = {op: index for index, op in enumerate(self.ops)}
        values = {v for op in self.ops for v in (*op.operands, *op.results)}
        self.size = {v: tensor_bytes(v) for v in values}
        self.largest = max(self.size.values(), default=1) or 1
        self.visited: list[Operation] = []  # in order: heat reads the last two
        self.visited_set: set[Operation] = set()  # membership, asked per score
        self.constants_left = True
        # each value's users (the order does not change them), and how many
        # are not visited yet: a score asks both of every operand, and an
        # unrolled recurrence has as many ready ops as a value has users
        self._users = {
            v: frozenset(use.operation for use in v.uses if use.operation in self.order)
            for v in values
        }
        self.unvisited_users = {v: len(users) for v, users in self._users.items()}
        # scores of ready ops, kept until what they read changes (a visit):
        # an unrolled recurrence has many ready ops, each scored at every
        # step otherwise (a 256-step LSTM: 3.9 s of its compile)
        self._scores: dict[Operation, float] = {}
        self._read_by: dict[Operation, set[Operation]] = {}  # op -> scores whose walks saw it

    def normalized(self, value: SSAValue) -> float:
        return self.size[value] / self.largest

    def users(self, value: SSAValue) -> frozenset[Operation]:
        return self._users[value]

    def heat(self, value: SSAValue) -> float:
        producer = value.owner
        if self.visited and producer is self.visited[-1]:
            return HEAT_LAST
        if len(self.visited) > 1 and producer is self.visited[-2]:
            return HEAT_BEFORE_LAST
        return HEAT_COLD

    def refcount(self, value: SSAValue, op: Operation) -> int:
        """1 when `op` (a ready user, so not visited) is the value's last
        unvisited user, else its number of users."""
        return 1 if self.unvisited_users[value] == 1 else len(self._users[value])

    def distance_to_visited(
        self, op: Operation, candidate: Operation, walked: set | None = None
    ) -> int:
        """Hops from `op` back to the visited ops (the candidate and the graph
        inputs count as visited), along its producers: the shortest path,
        found breadth-first (a depth-first walk is exponential in diamonds).
        `walked` collects the ops whose being visited the answer depends on."""
        seen = {op}
        try:
            if op is candidate or op in self.visited_set:
                return 0
            frontier, depth = [op], 1
            while frontier:
                next_frontier = []
                for current in frontier:
                    producers = [operand.owner for operand in current.operands]
                    if not producers or any(
                        p is candidate or p in self.visited_set or p not in self.order
                        for p in producers
                    ):
                        seen.update(producers)
                        return depth
                    for producer in producers:
                        if producer not in seen:
                            seen.add(producer)
                            next_frontier.append(producer)
                frontier, depth = next_frontier, depth + 1
            return depth
        finally:
            if walked is not None:
                walked.update(seen)

    def score(self, op: Operation) -> float:
        if isinstance(op, func.ReturnOp):
            return float("-inf")
        if op in self._scores:
            return self._scores[op]
        total, walked = 0.0, set()
        for value in dict.fromkeys(op.operands):  # in order: the same sum in every process
            total += self.normalized(value) * self.heat(value) / self.refcount(value, op)
        for result in op.results:
            users = self.users(result)
            farthest = max((self.distance_to_visited(u, op, walked) for u in users), default=1)
            total -= self.normalized(result) + (farthest - 1) * 2
        for other in walked:
            self._read_by.setdefault(other, set()).add(op)
        self._scores[op] = total
        return total

    def _forget_scores(self, visited: Operation, heat_changed: Sequence[Operation]) -> None:
        """Drop the kept scores that `visited` changes: those whose distance
        walks saw it, those of its operands' users (their refcounts), and
        those of the users of `heat_changed`'s results (hot, or no longer)."""
        stale = self._read_by.pop(visited, set())
        stale.add(visited)
        for value in visited.operands:
            stale.update(self._users.get(value, ()))
        for op in heat_changed:
            for result in op.results:
                stale.update(self._users.get(result, ()))
        for op in stale:
            self._scores.pop(op, None)

    def __call__(self, visitor: OpVisitor) -> Operation | None:
        if self.constants_left:  # all ready from the start: they have no producers
            constant = next((o for o in visitor.to_visit if isinstance(o, graph.ConstantOp)), None)
            if constant is not None:
                visitor.to_visit.remove(constant)
                self._visit(constant)  # not in `visited`: it makes nothing hot
                return constant
            self.constants_left = False
        best = max(visitor.to_visit, key=lambda op: (self.score(op), -self.order[op]))
        visitor.to_visit.remove(best)
        self.visited.append(best)
        self._visit(best, heat_changed=self.visited[-3:])
        return best

    def _visit(self, op: Operation, heat_changed: Sequence[Operation] = ()) -> None:
        self.visited_set.add(op)
        for operand in set(op.operands):
            if operand in self.unvisited_users:
                self.unvisited_users[operand] -= 1
        self._forget_scores(op, heat_changed)


def schedule(function: func.FuncOp, policy: str) -> list[Operation]:
    """The ops of `function` in the order `policy` chooses (return last)."""
    ops = list(function.body.block.ops)
    if policy == "heuristic":
        visitor = OpVisitor.topology_sort(HeuristicScheduler(ops))
    elif policy == "dfs":
        visitor = OpVisitor.dfs_topology_sort()
    elif policy == "bfs":
        visitor = OpVisitor.topology_sort(OpVisitor.dequeue_selector)
    else:
        raise DiagnosticException(f"unknown policy '{policy}' (heuristic, dfs or bfs)")
    order = [op for op in visitor.order(function) if not isinstance(op, func.ReturnOp)]
    reached = set(order)
    unreached = [op for op in ops if op not in reached and not isinstance(op, func.ReturnOp)]
    return [*order, *unreached, ops[-1]]


def is_graph_body(function: func.FuncOp) -> bool:
    """One block of graph ops ending in func.return: only then is any
    topological order of the ops as good as the written one (other ops may
    have side effects, or regions using values the order does not see)."""
    if len(function.body.blocks) != 1:
        return False
    block = function.body.block
    return isinstance(block.last_op, func.ReturnOp) and all(
        op.dialect_name() == "graph" for op in block.ops if op is not block.last_op
    )


@dataclass(frozen=True)
class GraphScheduleOpsPass(FunctionPass):
    """Reorder graph ops to keep hot inputs in cache and live tensors small."""

    name = "graph-schedule-ops"
    policy: str = pass_option(
        "heuristic",
        "'heuristic' (the design's scoring formula), 'dfs' or 'bfs' (the seed's orders)",
    )
    STATISTICS = {
        "peak-bytes-before": "peak live bytes before",
        "peak-bytes-after": "peak live bytes after",
    }

    def run_on_function(self, function: func.FuncOp) -> dict[str, int] | None:
        if not is_graph_body(function):
            return None
        block = function.body.block
        outputs = list(block.last_op.operands)
        before = peak_live_bytes(list(block.ops), block.args, outputs)
        order = schedule(function, self.policy)
        for scheduled in order:
            scheduled.detach()
            block.add_op(scheduled)
        after = peak_live_bytes(order, block.args, outputs)
        return {"peak-bytes-before": before, "peak-bytes-after": after}
