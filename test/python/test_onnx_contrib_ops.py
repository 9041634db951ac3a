"""onnxruntime's fused transformer ops (frontends/onnx/ops_contrib.py), as
its transformer optimizer writes them into models, against onnxruntime
running the same one-node model: SkipLayerNormalization and
SkipSimplifiedLayerNormalization with and without bias and beta, every
output; SimplifiedLayerNormalization over one and two axes; the GELU
forms with and without bias; QuickGelu; EmbedLayerNormalization with
and without segments, mask and position_ids, every output; Attention with every mask form,
causal or not (rows masked whole included), attention_bias and scale;
MultiHeadAttention, self and cross; RotaryEmbedding in both layouts,
interleaved or not, partial, with positions or an offset; and the
fusions of its graph optimizer (ops_fused.py): FusedConv with each
activation and the residual sum, FusedGemm, FusedMatMul / TransposeMatMul
with every transpose.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx

F = TensorProto.FLOAT
rng = np.random.default_rng(23)


def _model(op_type, inputs, outputs, domain="com.microsoft", **attributes):
    """One node; inputs and outputs as (name, shape), '' for an omitted one."""
    node = helper.make_node(
        op_type, [n for n, _ in inputs], [n for n, _ in outputs], domain=domain, **attributes
    )
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs if n],
        [helper.make_tensor_value_info(n, F, s) for n, s in outputs if n],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def _agrees_with_onnxruntime(model, tolerance=2e-6):
    feeds = {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
    }
    expected = session(model).run(None, feeds)
    got = graphcompiler.compile(import_onnx(model), cache=False)(*feeds.values())
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance)


B, S, H = 2, 5, 24


@pytest.mark.parametrize("simplified", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_skip_normalization_and_its_outputs(simplified, with_bias):
    op_type = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    inputs = [("x", [B, S, H]), ("skip", [B, S, H]), ("gamma", [H])]
    if not simplified:
        inputs.append(("beta", [H]) if with_bias else ("", None))
    if with_bias:
        inputs.append(("bias", [H]))
    while inputs[-1][0] == "":
        inputs.pop()
    outputs = [("y", [B, S, H]), ("", None), ("", None), ("sum", [B, S, H])]
    _agrees_with_onnxruntime(_model(op_type, inputs, outputs, epsilon=1e-5))
    only = _model(op_type, inputs, outputs[:1])  # onnxruntime's default epsilon
    _agrees_with_onnxruntime(only)


def test_skip_with_the_statistics_outputs():
    inputs = [("x", [B, S, H]), ("skip", [B, S, H]), ("gamma", [H]), ("beta", [H])]
    outputs = [("y", [B, S, H]), ("mean", [B, S, 1]), ("inv_std", [B, S, 1]), ("sum", [B, S, H])]
    _agrees_with_onnxruntime(_model("SkipLayerNormalization", inputs, outputs, epsilon=1e-5))


@pytest.mark.parametrize("axis, scale", [(-1, [H]), (1, [S, H])])
def test_simplified_layer_normalization(axis, scale):
    model = _model(
        "SimplifiedLayerNormalization",
        [("x", [B, S, H]), ("scale", scale)],
        [("y", [B, S, H])],
        domain="",
        axis=axis,
        epsilon=1e-6,
    )
    _agrees_with_onnxruntime(model)


@pytest.mark.parametrize(
    "op_type, inputs",
    [
        ("Gelu", [("x", [B, S, H])]),
        ("BiasGelu", [("x", [B, S, H]), ("bias", [H])]),
        ("FastGelu", [("x", [B, S, H])]),
        ("FastGelu", [("x", [B, S, H]), ("bias", [H])]),
        ("QuickGelu", [("x", [B, S, H])]),
    ],
)
def test_gelu_forms(op_type, inputs):
    _agrees_with_onnxruntime(_model(op_type, inputs, [("y", [B, S, H])]))


def test_an_unsupported_attribute_is_one_located_error():
    model = _model("FastGelu", [("x", [B, S, H])], [("y", [B, S, H])], shape_hint=1)
    with pytest.raises(Exception, match="FastGelu.*shape_hint"):
        import_onnx(model)


def _attention_model(op_type, inputs, hidden_out, **attributes):
    """Attention / MultiHeadAttention with typed inputs (name, type, shape)."""
    names = [n for n, *_ in inputs]
    node = helper.make_node(op_type, names, ["y"], domain="com.microsoft", **attributes)
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
        [helper.make_tensor_value_info("y", F, [B, S, hidden_out])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def _run_both(model, feeds, tolerance=2e-5):
    expected = session(model).run(None, feeds)[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(*feeds.values())
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    return got


I32 = TensorProto.INT32
MASKS = {
    "none": None,
    "lengths": np.array([S, 2], np.int32),
    "ends and starts": np.array([S, 4, 0, 1], np.int32),
    "raw": np.array([[1, 1, 1, 1, 1], [1, 0, 1, 1, 0]], np.int32),
    "raw, a row all masked": np.array([[1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], np.int32),
    "per query": (rng.random((B, S, S)) > 0.3).astype(np.int32),
}


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("unidirectional", [0, 1])
def test_bert_attention_with_every_mask_form(mask, unidirectional):
    heads, hidden, v_hidden = 3, 12, 9
    sizes = [hidden, hidden, v_hidden]
    feeds = {
        "x": rng.standard_normal((B, S, H)).astype(np.float32),
        "w": rng.standard_normal((H, sum(sizes))).astype(np.float32) * 0.3,
        "b": rng.standard_normal(sum(sizes)).astype(np.float32),
    }
    inputs = [("x", F, [B, S, H]), ("w", F, [H, sum(sizes)]), ("b", F, [sum(sizes)])]
    if MASKS[mask] is not None:
        feeds["m"] = MASKS[mask]
        inputs.append(("m", I32, list(MASKS[mask].shape)))
    model = _attention_model(
        "Attention",
        inputs,
        v_hidden,
        num_heads=heads,
        qkv_hidden_sizes=sizes,
        unidirectional=unidirectional,
    )
    got = _run_both(model, feeds)
    assert np.isfinite(got).all()


def test_attention_bias_and_scale():
    feeds = {
        "x": rng.standard_normal((B, S, H)).astype(np.float32),
        "w": rng.standard_normal((H, 3 * H)).astype(np.float32) * 0.3,
        "bias": rng.standard_normal((1, 4, S, S)).astype(np.float32),
    }
    inputs = [("x", F, [B, S, H]), ("w", F, [H, 3 * H]), *[("", None, None)] * 3]
    inputs.append(("bias", F, [1, 4, S, S]))
    model = _attention_model("Attention", inputs, H, num_heads=4, scale=0.3)
    _run_both(model, feeds)


@pytest.mark.parametrize("mask", ["none", "lengths", "raw"])
def test_multi_head_attention_cross_and_self(mask):
    keys = 7
    feeds = {
        "q": rng.standard_normal((B, S, H)).astype(np.float32),
        "k": rng.standard_normal((B, keys, H)).astype(np.float32),
        "v": rng.standard_normal((B, keys, H)).astype(np.float32),
        "bias": rng.standard_normal(3 * H).astype(np.float32),
    }
    inputs = [("q", F, [B, S, H]), ("k", F, [B, keys, H]), ("v", F, [B, keys, H])]
    inputs.append(("bias", F, [3 * H]))
    if mask == "lengths":
        feeds["m"] = np.array([keys, 3], np.int32)
    elif mask == "raw":
        feeds["m"] = (rng.random((B, keys)) > 0.3).astype(np.int32)
    if mask != "none":
        inputs.append(("m", I32, list(feeds["m"].shape)))
    _run_both(_attention_model("MultiHeadAttention", inputs, H, num_heads=4), feeds)


def test_attention_with_past_is_one_located_error():
    inputs = [("x", F, [B, S, H]), ("w", F, [H, 3 * H]), ("", None, None), ("", None, None)]
    inputs.append(("past", F, [2, B, 4, 3, 6]))
    model = _attention_model("Attention", inputs, H, num_heads=4)
    with pytest.raises(Exception, match="Attention.*past"):
        import_onnx(model)


I64 = TensorProto.INT64


@pytest.mark.parametrize(
    "layout, interleaved, rotary, offset",
    [
        ("3-D", 0, 0, False),
        ("3-D", 1, 0, False),
        ("3-D", 0, 4, False),  # the first 4 of 6 features of each head
        ("3-D", 1, 4, True),  # positions given as one offset
        ("4-D", 0, 0, False),
        ("4-D", 1, 0, True),
    ],
)
def test_rotary_embedding(layout, interleaved, rotary, offset):
    heads, head = 4, 6
    half = (rotary or head) // 2
    shape = [B, S, heads * head] if layout == "3-D" else [B, heads, S, head]
    positions = np.array([3], np.int64) if offset else rng.integers(0, 16, (B, S))
    feeds = {
        "x": rng.standard_normal(shape).astype(np.float32),
        "pos": positions,
        "cos": rng.standard_normal((16, half)).astype(np.float32),
        "sin": rng.standard_normal((16, half)).astype(np.float32),
    }
    attributes = {"interleaved": interleaved}
    if layout == "3-D":
        attributes["num_heads"] = heads
    if rotary:
        attributes["rotary_embedding_dim"] = rotary
    node = helper.make_node(
        "RotaryEmbedding", list(feeds), ["y"], domain="com.microsoft", **attributes
    )
    inputs = [("x", F, shape), ("pos", I64, list(positions.shape)), ("cos", F, [16, half])]
    inputs.append(("sin", F, [16, half]))
    graph = helper.make_graph(
        [node],
        "rotary",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", F, shape)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    _run_both(helper.make_model(graph, opset_imports=opsets), feeds, tolerance=1e-6)


# --- the fusions of onnxruntime's graph optimizer (ops_fused.py) --------------------------


@pytest.mark.parametrize(
    "activation, params",
    [("", []), ("Relu", []), ("Tanh", []), ("Sigmoid", []), ("LeakyRelu", [0.2]),
     ("Clip", [-0.5, 0.75]), ("HardSigmoid", [0.3, 0.4])],
)  # fmt: skip
@pytest.mark.parametrize("with_sum", [False, True])
def test_fused_conv_with_each_activation_and_the_residual_sum(activation, params, with_sum):
    inputs = [("x", [1, 4, 9, 9]), ("w", [6, 2, 3, 3]), ("b", [6])]
    if with_sum:
        inputs.append(("z", [1, 6, 5, 5]))
    attributes = {"activation": activation} if activation else {}
    if params:
        attributes["activation_params"] = params
    model = _model(
        "FusedConv", inputs, [("y", [1, 6, 5, 5])], kernel_shape=[3, 3], strides=[2, 2],
        pads=[1, 1, 1, 1], group=2, **attributes,
    )  # fmt: skip
    _agrees_with_onnxruntime(model, tolerance=1e-5)


@pytest.mark.parametrize(
    "activation, alpha, beta",
    [("Relu", None, None), ("LeakyRelu", 0.3, None),
     ("HardSigmoid", 0.25, 0.45), ("Tanh", None, None), ("Sigmoid", None, None)],
)  # fmt: skip
def test_fused_gemm_with_its_activation(activation, alpha, beta):
    attributes = {"activation": activation}
    if alpha is not None:
        attributes["activation_alpha"] = alpha
    if beta is not None:
        attributes["activation_beta"] = beta
    model = _model(
        "FusedGemm", [("a", [7, 5]), ("b", [6, 5]), ("c", [6])], [("y", [7, 6])],
        alpha=0.5, beta=2.0, transB=1, **attributes,
    )  # fmt: skip
    _agrees_with_onnxruntime(model, tolerance=1e-5)


@pytest.mark.parametrize(
    "a_shape, b_shape, attributes",
    [
        ([2, 3, 4, 5], [2, 3, 5, 6], {"alpha": 0.125}),
        ([2, 3, 5, 4], [2, 3, 6, 5], {"transA": 1, "transB": 1}),
        ([4, 2, 3, 5], [2, 3, 5, 6], {"transBatchA": 1}),
        ([5, 2, 3, 4], [2, 3, 5, 6], {"transBatchA": 1, "transA": 1}),
        ([2, 3, 4, 5], [5, 2, 3, 6], {"transBatchB": 1}),
        ([2, 3, 4, 5], [6, 2, 3, 5], {"transBatchB": 1, "transB": 1, "alpha": -2.0}),
        ([4, 2, 5], [2, 5, 6], {"transBatchA": 1, "transBatchB": 0}),
        ([3, 4, 5], [6, 5], {"transB": 1}),
        ([5], [2, 5, 6], {}),
        ([2, 4, 5], [5], {"alpha": 3.0}),
    ],
)
@pytest.mark.parametrize("op_type", ["FusedMatMul", "TransposeMatMul"])
def test_fused_matmul_transposes_and_scales_as_onnxruntime(a_shape, b_shape, attributes, op_type):
    if op_type == "TransposeMatMul" and {"transBatchA", "transBatchB"} & set(attributes):
        pytest.skip("TransposeMatMul (FusedMatMul's former name) has no transBatch attributes")
    model = _model(op_type, [("a", a_shape), ("b", b_shape)], [("y", None)], **attributes)
    _agrees_with_onnxruntime(model, tolerance=1e-5)


def test_fused_ops_name_what_they_do_not_support():
    conv = _model(
        "FusedConv", [("x", [1, 2, 5, 5]), ("w", [2, 2, 1, 1])], [("y", [1, 2, 5, 5])],
        activation="Gelu",
    )  # fmt: skip
    with pytest.raises(Exception, match=r"\(FusedConv\): attribute 'activation' = 'Gelu'"):
        import_onnx(conv)
    matmul = _model("FusedMatMul", [("a", [5]), ("b", [5, 3])], [("y", [3])], transA=1)
    with pytest.raises(Exception, match=r"\(FusedMatMul\): input #0 of rank 1 cannot be"):
        import_onnx(matmul)


EMBED_INPUTS = {  # name: (element type, shape); in EmbedLayerNormalization's input order
    "input_ids": (TensorProto.INT32, [2, 5]), "segment_ids": (TensorProto.INT32, [2, 5]),
    "word_embedding": (F, [11, 8]), "position_embedding": (F, [16, 8]),
    "segment_embedding": (F, [2, 8]), "gamma": (F, [8]), "beta": (F, [8]),
    "mask": (TensorProto.INT32, [2, 5]), "position_ids": (TensorProto.INT32, [2, 5]),
}  # fmt: skip


def _embed_feeds():
    feeds = {
        name: rng.standard_normal(shape).astype(np.float32)
        for name, (element, shape) in EMBED_INPUTS.items()
        if element == F
    }
    feeds["input_ids"] = rng.integers(0, 11, (2, 5)).astype(np.int32)
    feeds["segment_ids"] = rng.integers(0, 2, (2, 5)).astype(np.int32)
    feeds["mask"] = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 0]], np.int32)  # counted, not ended
    feeds["position_ids"] = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.int32)
    return feeds


@pytest.mark.parametrize(
    "given",
    [
        ["segment_ids", "segment_embedding", "mask"],
        ["segment_ids", "segment_embedding", "mask", "position_ids"],
        [],  # RoBERTa-like: no segments, no mask (mask_index 0)
    ],
)
@pytest.mark.parametrize("outputs", [["y", "mask_index"], ["y", "mask_index", "embedding_sum"]])
def test_embed_layer_normalization_and_its_outputs(given, outputs):
    required = {"input_ids", "word_embedding", "position_embedding", "gamma", "beta"}
    names = [n if n in required or n in given else "" for n in EMBED_INPUTS]
    while not names[-1]:
        names.pop()
    node = helper.make_node(
        "EmbedLayerNormalization", names, outputs, domain="com.microsoft", epsilon=1e-5
    )
    types = {"y": F, "mask_index": TensorProto.INT32, "embedding_sum": F}
    graph = helper.make_graph(
        [node],
        "embed",
        [helper.make_tensor_value_info(n, *EMBED_INPUTS[n]) for n in names if n],
        [helper.make_tensor_value_info(o, types[o], None) for o in outputs],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    feeds = {n: v for n, v in _embed_feeds().items() if n in names}
    expected = session(model).run(None, feeds)
    got = graphcompiler.compile(import_onnx(model), cache=False)(**feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=2e-6)


def test_embed_layer_normalization_needs_a_position_row_for_each_token():
    names = ["input_ids", "", "word_embedding", "position_embedding", "", "gamma", "beta"]
    inputs = {**EMBED_INPUTS, "position_embedding": (F, [3, 8])}
    node = helper.make_node(
        "EmbedLayerNormalization", names, ["y", "mask_index"], domain="com.microsoft"
    )
    graph = helper.make_graph(
        [node],
        "embed",
        [helper.make_tensor_value_info(n, *inputs[n]) for n in names if n],
        [helper.make_tensor_value_info("y", F, None)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    with pytest.raises(Exception, match="position_embedding has fewer rows than the 5 positions"):
        import_onnx(model)
