"""ONNX ops without a converter that their schema defines as a function of
other ops (opset 23's Attention, RMSNormalization and RotaryEmbedding,
opset 24's Swish) import as their function bodies, and match onnx's
reference evaluator in both paths; an expanded Attention is fused back into
one graph.attention (its 3-D form's head split read in place); CastLike of
a constant is a constant (a Pad's constant_value in those bodies); an op
with neither a converter nor a body is still one error line."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx  # noqa: E402
from graphcompiler.interpreters import reference  # noqa: E402

rng = np.random.default_rng(11)
F = TensorProto.FLOAT


def _model(node, inputs: dict[str, np.ndarray], opset: int):
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, F, a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, F, None) for o in node.output],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(node, inputs: dict[str, np.ndarray], opset: int = 23) -> str:
    """Both paths against onnx's reference evaluator; the compiled graph's text."""
    model = _model(node, inputs, opset)
    (expected,) = ReferenceEvaluator(model).run(None, inputs)
    module = import_onnx(model)
    np.testing.assert_allclose(reference.run(module, *inputs.values()), expected, atol=2e-6)
    compiled = graphcompiler.compile(import_onnx(model), cache=False)
    np.testing.assert_allclose(compiled(*inputs.values()), expected, atol=2e-6)
    return str(compiled.graph)


def _floats(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "shapes, attributes, transposes",
    [
        ([(2, 8, 10, 16), (2, 8, 12, 16), (2, 8, 12, 24)], {}, 0),
        ([(2, 8, 10, 16), (2, 2, 12, 16), (2, 2, 12, 16)], {}, 0),  # grouped-query: 2 kv heads
        ([(1, 4, 9, 8), (1, 4, 9, 8), (1, 4, 9, 8)], {"is_causal": 1, "scale": 0.3}, 0),
        ([(2, 10, 64), (2, 12, 64), (2, 12, 64)], {"q_num_heads": 4, "kv_num_heads": 4}, 0),
    ],
)
def test_attention_imports_as_its_body_and_fuses_back(shapes, attributes, transposes):
    inputs = dict(zip("qkv", (_floats(*s) for s in shapes), strict=True))
    text = _check(helper.make_node("Attention", list(inputs), ["y"], **attributes), inputs)
    assert "graph.attention" in text
    assert text.count("graph.transpose") == transposes


def test_attention_with_a_mask_and_its_fully_masked_rows():
    inputs = {"q": _floats(1, 2, 6, 8), "k": _floats(1, 2, 7, 8), "v": _floats(1, 2, 7, 8)}
    mask = _floats(6, 7)
    mask[2] = -np.inf  # a fully masked row: 0 by the body's guard, not NaN
    _check(helper.make_node("Attention", ["q", "k", "v", "m"], ["y"]), {**inputs, "m": mask})


def test_rms_normalization_rotary_embedding_and_swish():
    x, scale = _floats(2, 5, 16), _floats(16)
    _check(
        helper.make_node("RMSNormalization", ["x", "s"], ["y"], epsilon=1e-5), {"x": x, "s": scale}
    )
    angles = rng.uniform(0, 3, (2, 5, 8)).astype(np.float32)
    rotary = {"x": _floats(2, 3, 5, 16), "cos": np.cos(angles), "sin": np.sin(angles)}
    _check(helper.make_node("RotaryEmbedding", list(rotary), ["y"]), rotary)
    _check(helper.make_node("Swish", ["x"], ["y"], alpha=1.5), {"x": x}, opset=24)


def test_castlike_of_a_constant_is_a_constant():
    """Pad takes its constant_value only as a constant: a CastLike of one
    (to the type of a run-time value) is folded."""
    like = helper.make_node("CastLike", ["fill", "x"], ["fill_like"])
    pad = helper.make_node("Pad", ["x", "pads", "fill_like"], ["y"])
    graph = helper.make_graph(
        [like, pad],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [4, 3])],
        [
            helper.make_tensor("fill", TensorProto.DOUBLE, [], [-2.5]),
            helper.make_tensor("pads", TensorProto.INT64, [4], [1, 0, 1, 0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = _floats(2, 3)
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(got, np.pad(x, [(1, 1), (0, 0)], constant_values=-2.5))


def test_a_folded_castlike_to_bf16_keeps_bf16():
    """A constant CastLike'd to a bf16 value stays bf16 (numpy holds bf16 in
    f32 arrays: the folded constant takes the op's type, not the array's)."""
    like = helper.make_node("CastLike", ["step", "x"], ["step_like"])
    add = helper.make_node("Add", ["x", "step_like"], ["y"])
    bf16 = TensorProto.BFLOAT16
    graph = helper.make_graph(
        [like, add],
        "g",
        [helper.make_tensor_value_info("x", bf16, [4])],
        [helper.make_tensor_value_info("y", bf16, [4])],
        [helper.make_tensor("step", TensorProto.FLOAT, [1], [0.5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert "tensor<1xbf16>" in str(import_onnx(model))


@pytest.mark.parametrize("opset", [18, 21, 24])
def test_a_body_written_for_an_older_opset_imports_in_a_newer_model(opset):
    """CenterCropPad's and MeanVarianceNormalization's bodies are built for
    opsets 18 and 13: in a model of a later opset they still inline (onnx's
    inliner skips a body that imports another version of the domain)."""
    crop = helper.make_node("CenterCropPad", ["x", "s"], ["y"], axes=[1, 2])
    shape = helper.make_node("Constant", [], ["s"], value_ints=[3, 8])
    graph = helper.make_graph(
        [shape, crop], "g", [helper.make_tensor_value_info("x", F, [2, 5, 6])],
        [helper.make_tensor_value_info("y", F, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    x = _floats(2, 5, 6)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(graphcompiler.compile(model, cache=False)(x), expected)
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2])
    _check(node, {"x": _floats(3, 4, 5)}, opset)


def test_an_op_with_neither_converter_nor_body_is_one_error_line():
    node = helper.make_node("ImageDecoder", ["x"], ["y"], name="h")
    with pytest.raises(OnnxImportError) as error:
        import_onnx(_model(node, {"x": np.zeros(16, np.uint8)}, 23))
    assert str(error.value) == "node 'h' (ImageDecoder): operator is not supported"


def test_flex_attention_of_the_preview_domain_imports_as_its_body():
    """ai.onnx.preview's FlexAttention: grouped K/V heads, a score_mod
    subgraph (a soft cap) and a prob_mod one (a scale), by onnx's body."""
    cap = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value_float=4.0),
         helper.make_node("Div", ["s", "c"], ["d"]), helper.make_node("Tanh", ["d"], ["t"]),
         helper.make_node("Mul", ["t", "c"], ["out"])],
        "score_mod", [helper.make_tensor_value_info("s", F, None)],
        [helper.make_tensor_value_info("out", F, None)],
    )  # fmt: skip
    half = helper.make_graph(
        [helper.make_node("Constant", [], ["h"], value_float=0.5),
         helper.make_node("Mul", ["p", "h"], ["out"])],
        "prob_mod", [helper.make_tensor_value_info("p", F, None)],
        [helper.make_tensor_value_info("out", F, None)],
    )  # fmt: skip
    node = helper.make_node(
        "FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview",
        score_mod=cap, prob_mod=half, scale=0.3,
    )  # fmt: skip
    inputs = {"q": _floats(2, 4, 5, 8), "k": _floats(2, 2, 6, 8), "v": _floats(2, 2, 6, 3)}
    model = _model(node, inputs, 24)
    model.opset_import.append(helper.make_opsetid("ai.onnx.preview", 1))
    q, k, v = inputs.values()
    k, v = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)  # query head h reads K/V head h // 2
    scores = 4.0 * np.tanh(q @ k.transpose(0, 1, 3, 2) * 0.3 / 4.0)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    expected = 0.5 * probs / probs.sum(-1, keepdims=True) @ v
    got = graphcompiler.compile(model, cache=False)(*inputs.values())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
