"""graph-schedule-ops' heuristic scheduler (passes/graph/schedule_ops.py),
on a recurrence written out step by step:
the scores and distances it keeps between steps give the order that
scoring every ready op afresh at every step gives."""

import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects import func

from graphcompiler.dialects.graph.builders import OpVisitor
from graphcompiler.driver.registration import GRAPH_PASSES, apply_pipeline, default_registry
from graphcompiler.frontends.onnx import import_onnx
from graphcompiler.passes.graph import schedule_ops

BEFORE_SCHEDULING = [p for p in GRAPH_PASSES if p != "graph-schedule-ops"]


def _recurrence(steps: int) -> onnx.ModelProto:
    """A recurrence written out step by step, h = tanh(h R + x_t W), and a
    residual MLP on the stacked states: each step's input projection is
    ready from the start, so many ops are ready at once."""
    f = TensorProto.FLOAT
    hidden, features = 8, 4
    weights = [
        helper.make_tensor(name, f, shape, [0.01 * (i % 7) for i in range(shape[0] * shape[1])])
        for name, shape in (
            ("W", [features, hidden]),
            ("R", [hidden, hidden]),
            ("M", [hidden, hidden]),
        )
    ]
    constants = [
        helper.make_tensor("axis0", TensorProto.INT64, [1], [0]),
        helper.make_tensor("h0", f, [2, hidden], [0.0] * (2 * hidden)),
    ]
    nodes, state = [], "h0"
    for t in range(steps):
        constants += [
            helper.make_tensor(f"start{t}", TensorProto.INT64, [1], [t]),
            helper.make_tensor(f"end{t}", TensorProto.INT64, [1], [t + 1]),
        ]
        nodes += [
            helper.make_node("Slice", ["X", f"start{t}", f"end{t}", "axis0"], [f"x{t}"]),
            helper.make_node("Squeeze", [f"x{t}", "axis0"], [f"xs{t}"]),
            helper.make_node("MatMul", [f"xs{t}", "W"], [f"p{t}"]),
            helper.make_node("MatMul", [state, "R"], [f"r{t}"]),
            helper.make_node("Add", [f"p{t}", f"r{t}"], [f"a{t}"]),
            helper.make_node("Tanh", [f"a{t}"], [f"h{t}"]),
        ]
        state = f"h{t}"
    nodes += [
        helper.make_node("Concat", [f"h{t}" for t in range(steps)], ["Ys"], axis=0),
        helper.make_node("MatMul", ["Ys", "M"], ["P"]),
        helper.make_node("Add", ["P", "Ys"], ["Z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "recurrence",
        [helper.make_tensor_value_info("X", f, [steps, 2, features])],
        [helper.make_tensor_value_info("Z", f, None)],
        [*weights, *constants],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _function_before_scheduling(model: onnx.ModelProto) -> func.FuncOp:
    registry = default_registry()
    module = import_onnx(model)
    apply_pipeline(module, f"builtin.module({','.join(BEFORE_SCHEDULING)})", registry=registry)
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


class _ForgetfulScores(dict):
    """A score store that keeps nothing: every ready op is scored afresh."""

    def __setitem__(self, key, value) -> None:
        pass


@pytest.mark.parametrize("distance_weight", [0.0, 2.0])
def test_kept_scores_give_the_order_of_fresh_ones(monkeypatch, distance_weight):
    function = _function_before_scheduling(_recurrence(24))
    position = {op: index for index, op in enumerate(function.body.block.ops)}
    kept = [position[op] for op in schedule_ops.schedule(function, "heuristic", distance_weight)]
    fresh_init = schedule_ops.HeuristicScheduler.__post_init__

    def forgetful(self) -> None:
        fresh_init(self)
        self._scores = _ForgetfulScores()

    monkeypatch.setattr(schedule_ops.HeuristicScheduler, "__post_init__", forgetful)
    fresh = [position[op] for op in schedule_ops.schedule(function, "heuristic", distance_weight)]
    assert kept == fresh
    assert kept != sorted(kept)  # the heuristic reordered something: the test compares orders


def test_kept_distances_are_those_of_the_current_step():
    """With the distance term on, each user's distance is kept until an op
    it waits on is visited: at every step, the kept ones equal distances
    walked afresh."""
    function = _function_before_scheduling(_recurrence(24))
    checked = []

    class Checking(schedule_ops.HeuristicScheduler):
        def __call__(self, visitor):
            kept, self._distances = self._distances, {}
            for user, distance in kept.items():
                assert self.distance_to_visited(user) == distance
                checked.append(distance)
            self._distances = kept
            return super().__call__(visitor)

    scheduler = Checking(list(function.body.block.ops), distance_weight=2.0)
    OpVisitor.topology_sort(scheduler).order(function)
    assert len(set(checked)) > 2  # near and far users were kept and checked
