"""graph-schedule-ops' heuristic scheduler (passes/graph/schedule_ops.py):
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


def _lstm(steps: int) -> onnx.ModelProto:
    """One LSTM layer over `steps` steps and a residual MLP on its output:
    the unrolled steps keep many ops ready at once."""
    f = TensorProto.FLOAT
    hidden, features = 8, 4
    weights = [
        helper.make_tensor(name, f, shape, [0.01 * (i % 7) for i in range(int(_size(shape)))])
        for name, shape in (
            ("W", [1, 4 * hidden, features]),
            ("R", [1, 4 * hidden, hidden]),
            ("M", [hidden, hidden]),
        )
    ]
    nodes = [
        helper.make_node("LSTM", ["X", "W", "R"], ["Y", "Yh"], hidden_size=hidden),
        helper.make_node("Squeeze", ["Y", "axes"], ["Ys"]),
        helper.make_node("MatMul", ["Ys", "M"], ["P"]),
        helper.make_node("Add", ["P", "Ys"], ["Z"]),
    ]
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    graph = helper.make_graph(
        nodes,
        "lstm",
        [helper.make_tensor_value_info("X", f, [steps, 2, features])],
        [helper.make_tensor_value_info("Z", f, None)],
        [*weights, axes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _size(shape) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


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
    function = _function_before_scheduling(_lstm(24))
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
    function = _function_before_scheduling(_lstm(24))
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
