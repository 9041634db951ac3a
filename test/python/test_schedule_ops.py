"""graph-schedule-ops' heuristic scheduler (passes/graph/schedule_ops.py):
the scores it keeps between steps give the order that scoring every ready
op afresh at every step gives."""

import onnx
from onnx import TensorProto, helper
from xdsl.dialects import func

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


def test_kept_scores_give_the_order_of_fresh_ones(monkeypatch):
    function = _function_before_scheduling(_lstm(24))
    position = {op: index for index, op in enumerate(function.body.block.ops)}
    kept = [position[op] for op in schedule_ops.schedule(function, "heuristic")]
    fresh_init = schedule_ops.HeuristicScheduler.__post_init__

    def forgetful(self) -> None:
        fresh_init(self)
        self._scores = _ForgetfulScores()

    monkeypatch.setattr(schedule_ops.HeuristicScheduler, "__post_init__", forgetful)
    fresh = [position[op] for op in schedule_ops.schedule(function, "heuristic")]
    assert kept == fresh
    assert kept != sorted(kept)  # the heuristic reordered something: the test compares orders
