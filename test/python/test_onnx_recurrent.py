"""ONNX RNN, GRU and LSTM (frontends/onnx/ops_recurrent.py: a graph.loop
over a step function) against onnxruntime on the same one-node model (against onnx's
reference evaluator for layout 1, which onnxruntime lacks): every
direction, initial states, biases, sequence lengths with padded batches,
GRU's linear_before_reset, LSTM's peepholes, clip, input_forget, other activations; a
long sequence compiles its step once.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx

F, I32 = TensorProto.FLOAT, TensorProto.INT32
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
rng = np.random.default_rng(41)


def _model(kind, steps, batch, features, hidden, directions, *, lengths=False, initial=False,
           bias=True, peepholes=False, layout=0, **attributes):  # fmt: skip
    """The node and its inputs (random), outputs Y, Y_h (and Y_c)."""
    gates, d = GATES[kind], directions
    x_shape = [steps, batch, features] if layout == 0 else [batch, steps, features]
    state = [d, batch, hidden] if layout == 0 else [batch, d, hidden]
    feeds = {
        "X": rng.standard_normal(x_shape).astype(np.float32),
        "W": (rng.standard_normal((d, gates * hidden, features)) * 0.5).astype(np.float32),
        "R": (rng.standard_normal((d, gates * hidden, hidden)) * 0.5).astype(np.float32),
    }
    names = ["X", "W", "R", "", "", "", "", ""]
    if bias:
        feeds["B"] = rng.standard_normal((d, 2 * gates * hidden)).astype(np.float32)
        names[3] = "B"
    if lengths:
        feeds["L"] = rng.integers(1, steps + 1, batch).astype(np.int32)
        feeds["L"][0] = steps
        names[4] = "L"
    if initial:
        feeds["H0"] = rng.standard_normal(state).astype(np.float32)
        names[5] = "H0"
        if kind == "LSTM":
            feeds["C0"] = rng.standard_normal(state).astype(np.float32)
            names[6] = "C0"
    if peepholes:
        feeds["P"] = rng.standard_normal((d, 3 * hidden)).astype(np.float32)
        names[7] = "P"
    while names and names[-1] == "":
        names.pop()
    y_shape = [steps, d, batch, hidden] if layout == 0 else [batch, steps, d, hidden]
    outputs = [("Y", y_shape), ("Y_h", state)] + ([("Y_c", state)] if kind == "LSTM" else [])
    if layout:
        attributes["layout"] = 1
    direction = {1: "forward", 2: "bidirectional"}[d] if "direction" not in attributes else None
    if direction:
        attributes["direction"] = direction
    node = helper.make_node(kind, names, [n for n, _ in outputs], hidden_size=hidden, **attributes)
    types = {"L": I32}
    graph = helper.make_graph(
        [node],
        kind,
        [helper.make_tensor_value_info(n, types.get(n, F), feeds[n].shape) for n in feeds],
        [helper.make_tensor_value_info(n, F, s) for n, s in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), feeds


def _check(model, feeds, reference=False):
    if reference:
        expected = ReferenceEvaluator(model).run(None, feeds)
    else:
        expected = session(model).run(None, feeds)
    got = graphcompiler.compile(import_onnx(model), cache=False)(*feeds.values())
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lengths", [False, True])
def test_directions_and_sequence_lengths(kind, direction, lengths):
    d = 2 if direction == "bidirectional" else 1
    model, feeds = _model(kind, 6, 3, 5, 4, d, lengths=lengths, initial=True, direction=direction)
    _check(model, feeds)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_reset_before_or_after_the_product(linear_before_reset):
    model, feeds = _model(
        "GRU", 5, 2, 3, 6, 2, initial=True, linear_before_reset=linear_before_reset
    )
    _check(model, feeds)


def test_lstm_peepholes_and_clip():
    model, feeds = _model("LSTM", 5, 2, 3, 4, 2, initial=True, peepholes=True, clip=0.7)
    _check(model, feeds)


def test_lstm_input_forget_couples_the_gates():
    """f = 1 - i (onnxruntime's; onnx's reference evaluator differs), with
    peepholes, whose forget part is then unused."""
    model, feeds = _model("LSTM", 5, 2, 3, 4, 2, initial=True, peepholes=True, input_forget=1)
    _check(model, feeds)


@pytest.mark.parametrize(
    "kind, activations, alpha, beta",
    [
        ("RNN", ["Relu"], [], []),
        ("RNN", ["LeakyRelu"], [0.3], []),
        ("GRU", ["HardSigmoid", "Softsign"], [0.3], [0.4]),
        ("LSTM", ["Sigmoid", "ScaledTanh", "Affine"], [0.5, 2.0], [0.8, 0.1]),
    ],
)
def test_other_activations(kind, activations, alpha, beta):
    attributes = {"activations": activations}
    if alpha:
        attributes["activation_alpha"] = alpha
    if beta:
        attributes["activation_beta"] = beta
    model, feeds = _model(kind, 4, 2, 3, 4, 1, bias=False, **attributes)
    _check(model, feeds)


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_batch_major_layout(kind):
    model, feeds = _model(kind, 5, 3, 4, 4, 2, initial=True, layout=1)
    _check(model, feeds, reference=True)


def test_a_long_sequence_compiles_its_step_once():
    """The steps are a graph.loop: 64 steps have the functions and calls of
    4 (only the input projection's matmul kernel differs, by its rows)."""
    calls = {}
    for steps in (4, 64):
        model, feeds = _model("LSTM", steps, 2, 8, 16, 1, initial=True, lengths=True)
        compiled = graphcompiler.compile(import_onnx(model), cache=False)
        expected = session(model).run(None, feeds)
        for g, e in zip(compiled(*feeds.values()), expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
        assert compiled.graph.count("graph.loop @") == 1
        calls[steps] = (compiled.tir.count("tir.func @"), compiled.tir.count("tir.call @"))
    assert calls[4] == calls[64]
