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
- distance(t) = (max over users u of t of distanceToVisitedOps(u) - 1) * w,
  where distanceToVisitedOps(u) is how many ops deep u's unvisited
  producers go, the candidate among them: 1 when u waits on ready ops
  only, else 1 + the deepest of them. Seed 000 calls it the farthest
  distance from the visited ops (a user that still waits on other work
  will not run soon, so the output lives long); this is the reference
  implementation's longest producer path (oneDNN Graph Compiler's
  get_op_distance_to_visited_set) less one, as the seed says a distance
  is at least 1. It is counted up to DISTANCE_HORIZON hops or
  WAIT_BUDGET ops waited on, beyond which a user is far enough (a
  256-step recurrence's final concat waits on every step).

The weight w is the option `distance-weight`: the seed's 2, or 0 (the
default), which leaves the term out. Measured, the term made memory plans
larger, not smaller: with w = 2, full-size Llama's arena grew from 3.8 to
5.6 MiB and DeBERTa-v2's (small test model) from 10.0 to 12.1 KiB, with
BERT, GPT-2 and ViT unchanged. It defers ops whose users wait, and so also
the op that would free their inputs (@waits in the pass's lit test shows
the deferral it is for).

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
DISTANCE_HORIZON = 4
"""The most hops distanceToVisitedOps counts: its penalty, (4 - 1) * 2, is
already more than an input can score (2.5 at most)."""
WAIT_BUDGET = 32
"""A user that waits on more unvisited ops than this is at the horizon."""


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
    outputs live to the end. Constants count none: they are globals, in
    no op's memory (and the heuristic takes them all first)."""
    position = {op: index for index, op in enumerate(ops)}
    last_use: dict[SSAValue, int] = {}
    for op in ops:
        for operand in op.operands:
            last_use[operand] = max(last_use.get(operand, -1), position[op])
    kept = set(outputs)
    live = peak = sum(tensor_bytes(v) for v in inputs)
    for index, op in enumerate(ops):
        if not isinstance(op, graph.ConstantOp):
            live += sum(tensor_bytes(r) for r in op.results)
        peak = max(peak, live)
        for value in {*op.operands, *op.results}:
            if (
                value not in kept
                and not isinstance(value.owner, graph.ConstantOp)
                and last_use.get(value, index) == index
            ):
                live -= tensor_bytes(value)
    return peak


@dataclass
class HeuristicScheduler:
    """The seed 000 selector for OpVisitor: the ready op with the best score."""

    ops: list[Operation]
    distance_weight: float = 0.0

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
        # and each user's distance, kept until an op it waits on is visited;
        # the scores that read it go with it
        self._distances: dict[Operation, int] = {}
        self._waited_by = {op: set() for op in self.ops}  # op -> users whose distance waits on it
        self._scores_reading = {op: set() for op in self.ops}  # user -> scores reading its distance

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

    def distance_to_visited(self, op: Operation) -> int:
        """How many ops deep `op`'s unvisited producers go (1 when they are
        all ready), up to DISTANCE_HORIZON: the longest producer path, one
        level of the walk per hop (a level is a set, so a diamond is not
        walked twice in it). More than WAIT_BUDGET ops to wait on is as far
        as the horizon. Kept until one of the ops it waits on is visited."""
        if op in self._distances:
            return self._distances[op]
        level, depth, waited = {op}, 0, set()
        while depth < DISTANCE_HORIZON:
            waiting = {
                operand.owner
                for current in level
                for operand in current.operands
                if operand.owner in self.order and operand.owner not in self.visited_set
            }
            if not waiting:
                break
            waited |= waiting
            level, depth = waiting, depth + 1
            if len(waited) > WAIT_BUDGET:
                depth = DISTANCE_HORIZON
                break
        self._distances[op] = depth
        for other in waited:
            self._waited_by[other].add(op)
        return depth

    def score(self, op: Operation) -> float:
        if isinstance(op, func.ReturnOp):
            return float("-inf")
        if op in self._scores:
            return self._scores[op]
        total = 0.0
        for value in dict.fromkeys(op.operands):  # in order: the same sum in every process
            total += self.normalized(value) * self.heat(value) / self.refcount(value, op)
        for result in op.results:
            total -= self.normalized(result)
            if self.distance_weight:
                total -= (self.farthest_user(result, op) - 1) * self.distance_weight
        self._scores[op] = total
        return total

    def farthest_user(self, result: SSAValue, op: Operation) -> int:
        """The largest distanceToVisitedOps of `result`'s users (1 if none);
        `op`'s score reads them."""
        farthest = 1
        for user in self.users(result):
            if not isinstance(user, func.ReturnOp):  # an output lives to the end anyway
                farthest = max(farthest, self.distance_to_visited(user))
                self._scores_reading[user].add(op)
        return farthest

    def _forget_scores(self, visited: Operation, heat_changed: Sequence[Operation]) -> None:
        """Drop the kept scores that `visited` changes: those that read a
        distance waiting on it, those of its operands' users (their refcounts), and
        those of the users of `heat_changed`'s results (hot, or no longer)."""
        stale = {visited}
        for user in self._waited_by.pop(visited):
            if self._distances.pop(user, None) is not None:
                stale.update(self._scores_reading[user])
                self._scores_reading[user].clear()
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


def schedule(function: func.FuncOp, policy: str, distance_weight: float = 0.0) -> list[Operation]:
    """The ops of `function` in the order `policy` chooses (return last)."""
    ops = list(function.body.block.ops)
    if policy == "heuristic":
        visitor = OpVisitor.topology_sort(HeuristicScheduler(ops, distance_weight))
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
    distance_weight: float = pass_option(
        0.0, "the heuristic's penalty per hop of distance (seed 000: 2; see the docstring)"
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
        order = schedule(function, self.policy, self.distance_weight)
        for scheduled in order:
            scheduled.detach()
            block.add_op(scheduled)
        after = peak_live_bytes(order, block.args, outputs)
        return {"peak-bytes-before": before, "peak-bytes-after": after}
