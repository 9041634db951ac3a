"""ai.onnx.preview.training's optimizer steps (frontends/onnx/ops_training.py)
against onnx's reference evaluator: two tensors updated at once, the
first step and a later one (T a graph input, so its test is made at run
time), regularization before and after, Momentum's Nesterov mode."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

F = TensorProto.FLOAT
SHAPES = ([3, 2], [4])


def _model(op, accumulators, **attributes):
    names = ["x0", "x1", "g0", "g1"] + [f"{a}{i}" for a in "vh"[:accumulators] for i in (0, 1)]
    outputs = ["x0_new", "x1_new"] + [f"{a}{i}_new" for a in "vh"[:accumulators] for i in (0, 1)]
    shapes = {n: SHAPES[int(n[-1])] for n in names}
    node = helper.make_node(
        op, ["r", "t", *names], outputs, domain="ai.onnx.preview.training", **attributes
    )
    inputs = [helper.make_tensor_value_info("r", F, []),
              helper.make_tensor_value_info("t", TensorProto.INT64, []),
              *(helper.make_tensor_value_info(n, F, shapes[n]) for n in names)]  # fmt: skip
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info(o, F, None) for o in outputs]
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18),
                       helper.make_opsetid("ai.onnx.preview.training", 1)],
    )  # fmt: skip
    return model, names, shapes


@pytest.mark.parametrize(
    ("op", "accumulators", "attributes"),
    [
        ("Adagrad", 1, dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01)),
        ("Momentum", 1, dict(alpha=0.9, beta=0.5, mode="standard", norm_coefficient=0.02)),
        ("Momentum", 1, dict(alpha=0.8, beta=0.3, mode="nesterov", norm_coefficient=0.0)),
        ("Adam", 2, dict(alpha=0.85, beta=0.99, epsilon=1e-4, norm_coefficient=0.01,
                         norm_coefficient_post=0.02)),
    ],
)  # fmt: skip
def test_optimizer_steps_match_onnx_reference(op, accumulators, attributes):
    model, names, shapes = _model(op, accumulators, **attributes)
    rng = np.random.default_rng(len(op) + accumulators)
    compiled = graphcompiler.compile(import_onnx(model), cache=False)
    for step in (0, 3):  # the first step and a later one, in one compiled graph
        feeds = {"r": np.array(0.1, np.float32), "t": np.array(step, np.int64)}
        for name in names:
            values = rng.normal(size=shapes[name]).astype(np.float32)
            feeds[name] = np.abs(values) if name.startswith("h") else values
        expected = ReferenceEvaluator(model).run(None, feeds)
        got = compiled(*feeds.values())
        for have, want in zip(got, expected, strict=True):
            np.testing.assert_allclose(have, want, rtol=2e-5, atol=1e-6)


def test_momentum_without_its_required_attributes_is_one_error_line():
    model, _, _ = _model("Momentum", 1, mode="standard")
    with pytest.raises(OnnxImportError, match="attribute 'alpha' is required") as error:
        import_onnx(model)
    assert "\n" not in str(error.value)
