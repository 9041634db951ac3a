"""Quantized models and their pieces: the ONNX quantization converters
(QDQ, operator format, onnxruntime's contrib ops) against numpy's formulas,
the widening integer matmul on i16-pair microkernels against exact integer
products, and the quantized model suite (test/models/quantized, made by
quantize_models.py there) against its exact-integer reference outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.frontends.onnx import OnnxImportError  # noqa: E402
from graphcompiler.ir.element_types import dense_elements  # noqa: E402
from test.python.onnx_node_model import node_model  # noqa: E402
from test.python.onnxruntime_session import session  # noqa: E402

QUANTIZED = Path(__file__).resolve().parents[1] / "models" / "quantized"
MANIFEST = json.loads((QUANTIZED / "manifest.json").read_text())["models"]
TOLERANCE = 1e-5
"""Outputs are floats computed from exact integer sums: what differs is the
rounding of the float ops around them."""


def _run(model, *arrays):
    return graphcompiler.compile(model, cache=False)(*arrays)


# --- the widening integer matmul (i16 pairs, vpmaddwd) ----------------------------------


def _widening_matmul(a_shape, b, transpose_a=False, transpose_b=False):
    """A graph of one i16 x i16 -> i32 matmul with constant B."""
    k_n = "x".join(map(str, b.shape))
    m = a_shape[-1] if transpose_a else a_shape[-2]
    n = b.shape[-2] if transpose_b else b.shape[-1]
    batch = list(np.broadcast_shapes(tuple(a_shape[:-2]), b.shape[:-2]))
    out = "x".join(map(str, [*batch, m, n]))
    a_text = "x".join(map(str, a_shape))
    flags = (
        f" {{transpose_a = {str(transpose_a).lower()}, transpose_b = {str(transpose_b).lower()}}}"
    )
    module = graphcompiler.parse(f"""
func.func @main(%a: tensor<{a_text}xi16>) -> tensor<{out}xi32> {{
  %b = graph.constant dense<0> : tensor<{k_n}xi16>
  %y = graph.matmul %a, %b{flags} : (tensor<{a_text}xi16>, tensor<{k_n}xi16>) -> tensor<{out}xi32>
  func.return %y : tensor<{out}xi32>
}}""")
    constant = next(op for op in module.walk() if op.name == "graph.constant")
    constant.properties["value"] = dense_elements(b, constant.result.type.element_type)
    return module


@pytest.mark.parametrize(
    "a_shape, b_shape, transposes",
    [
        ((1, 1), (1, 1), (False, False)),
        ((5, 7), (7, 19), (False, False)),  # odd K, column tail
        ((33, 64), (64, 48), (False, False)),
        ((2, 9, 31), (31, 17), (False, False)),  # batched A
        ((70, 130), (40, 130), (False, True)),  # B stored [N, K]
        ((31, 6), (31, 24), (True, False)),  # A stored [K, M]
        ((3, 4, 12), (3, 12, 5), (False, False)),  # batched B
    ],
)
def test_widening_matmul_is_exact(a_shape, b_shape, transposes):
    rng = np.random.default_rng(0)
    a = rng.integers(-255, 256, a_shape).astype(np.int16)
    b = rng.integers(-255, 256, b_shape).astype(np.int16)
    got = _run(_widening_matmul(a_shape, b, *transposes), a)
    a_ = np.swapaxes(a, -1, -2) if transposes[0] else a
    b_ = np.swapaxes(b, -1, -2) if transposes[1] else b
    want = np.matmul(a_.astype(np.int64), b_.astype(np.int64)).astype(np.int32)
    assert got.dtype == np.int32 and np.array_equal(got, want)


@pytest.mark.parametrize(
    "a_shape, b_shape, transpose_b",
    [((5, 7), (7, 19), False), ((2, 9, 33), (2, 33, 17), False), ((12, 40), (30, 40), True)],
)
def test_widening_matmul_of_two_arguments_is_exact(a_shape, b_shape, transpose_b):
    """B computed at run time: its pairs are packed per call."""
    rng = np.random.default_rng(7)
    a = rng.integers(-255, 256, a_shape).astype(np.int16)
    b = rng.integers(-255, 256, b_shape).astype(np.int16)
    b_ = np.swapaxes(b, -1, -2) if transpose_b else b
    want = np.matmul(a.astype(np.int64), b_.astype(np.int64)).astype(np.int32)
    text_a, text_b = ("x".join(map(str, shape)) for shape in (a_shape, b_shape))
    text_y = "x".join(map(str, want.shape))
    module = graphcompiler.parse(f"""
func.func @main(%a: tensor<{text_a}xi16>, %b: tensor<{text_b}xi16>) -> tensor<{text_y}xi32> {{
  %y = graph.matmul %a, %b {{transpose_b = {str(transpose_b).lower()}}} : (tensor<{text_a}xi16>, tensor<{text_b}xi16>) -> tensor<{text_y}xi32>
  func.return %y : tensor<{text_y}xi32>
}}""")
    assert np.array_equal(_run(module, a, b), want)


def test_widening_matmul_extremes_wrap_like_i32():
    """The largest i16 products: sums past i32 wrap as the reference's."""
    a = np.full((4, 64), -32768, np.int16)
    b = np.full((64, 8), -32768, np.int16)
    module = _widening_matmul(a.shape, b)
    from graphcompiler.interpreters import reference

    got = _run(module, a)
    exact = (np.matmul(a.astype(np.int64), b.astype(np.int64)) & 0xFFFFFFFF).astype(np.uint32)
    assert np.array_equal(got.view(np.uint32), exact)
    assert np.array_equal(got, reference.run(module, a))


# --- converters ---------------------------------------------------------------------------


def _quantize_model(x_shape, scale, zero, axis):
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")]
    return node_model(
        "QuantizeLinear", [("x", TensorProto.FLOAT, x_shape)],
        [("y", helper.np_dtype_to_tensor_dtype(zero.dtype), x_shape)], inits, axis=axis,
    )  # fmt: skip


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quantize_linear_per_channel_rounds_half_to_even_and_saturates(dtype):
    x = np.array([[0.5, 1.5, 2.5, -0.5, 300.0, -300.0, 7.25]] * 3, np.float32).T.copy()
    scale = np.array([1.0, 0.5, 2.0], np.float32)
    zero = np.array([0, 3, 1], dtype)
    got = _run(_quantize_model(list(x.shape), scale, zero, 1), x)
    info = np.iinfo(dtype)
    want = np.clip(np.rint(x / scale) + zero, info.min, info.max)
    assert got.dtype == dtype and np.array_equal(got, want.astype(dtype))


def test_dequantize_linear_per_channel():
    x = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    scale = np.array([0.5, 0.25, 2.0], np.float32)
    zero = np.array([1, 2, 3], np.uint8)
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")]
    model = node_model("DequantizeLinear", [("x", TensorProto.UINT8, [2, 3, 4])],
                       [("y", TensorProto.FLOAT, [2, 3, 4])], inits, axis=1)  # fmt: skip
    want = (x.astype(np.float32) - zero[:, None]) * scale[:, None]
    assert np.array_equal(_run(model, x), want)


@pytest.mark.parametrize(
    "dtype, onnx_type, zero",
    [(np.int16, TensorProto.INT16, -14367), (np.uint16, TensorProto.UINT16, 40001)],
)
def test_dequantize_16_bit_values_to_f16_subtracts_exactly(dtype, onnx_type, zero):
    """x - zero_point of 16-bit values is computed in f32 and only the
    product is rounded to the f16 scale's type: in f16, -14368 - -14367
    would round to 0."""
    x = np.array([zero - 1, zero + 1, zero + 2049, 0], dtype)
    inits = [numpy_helper.from_array(np.array(1.0, np.float16), "s"),
             numpy_helper.from_array(np.array(zero, dtype), "z")]  # fmt: skip
    model = node_model("DequantizeLinear", [("x", onnx_type, [4])],
                       [("y", TensorProto.FLOAT16, [4])], inits, opset=21)  # fmt: skip
    want = (x.astype(np.float64) - zero).astype(np.float16)
    assert np.array_equal(_run(model, x), want)


def test_block_wise_dequantize_of_a_graph_input():
    """Block-wise scales (one per 2 columns) on a run-time x; the
    narrow-type cases are in test_narrow_types.py."""
    x = np.arange(8, dtype=np.int8).reshape(2, 4) - 3
    scale = np.array([[0.5, 2.0], [1.0, 0.25]], np.float32)
    inits = [numpy_helper.from_array(scale, "s")]
    model = node_model("DequantizeLinear", [("x", TensorProto.INT8, [2, 4])],
                       [("y", TensorProto.FLOAT, [2, 4])], inits, opset=21, axis=1, block_size=2)  # fmt: skip
    assert np.array_equal(_run(model, x), x * np.repeat(scale, 2, axis=1))


def _conv_reference(x, w, strides, pads, dilations, groups):
    """Exact integer conv2d (int64) by loops over filter taps."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    out_h = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    out_w = (wd + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, o, out_h, out_w), np.int64)
    for g in range(groups):
        xs, ws = xp[:, g * cg : (g + 1) * cg], w[g * (o // groups) : (g + 1) * (o // groups)]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilations[0] :: strides[0], j * dilations[1] :: strides[1]]
                patch = patch[:, :, :out_h, :out_w]
                y[:, g * (o // groups) : (g + 1) * (o // groups)] += np.einsum(
                    "nchw,oc->nohw", patch, ws[:, :, i, j]
                )
    return y


@pytest.mark.parametrize(
    "x_shape, w_shape, strides, pads, dilations, groups",
    [
        ((1, 4, 9, 9), (8, 4, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # 36 terms: f32, exact
        ((2, 32, 11, 10), (16, 32, 3, 3), (2, 2), (1, 0, 1, 2), (1, 1), 1),  # 288: im2col
        ((1, 40, 9, 9), (8, 40, 3, 3), (1, 1), (0, 0, 0, 0), (2, 2), 1),  # dilated im2col
        ((1, 64, 6, 6), (8, 32, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),  # grouped, 288 terms
        ((1, 8, 7, 7), (8, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 8),  # depthwise
    ],
)
def test_conv_integer_is_exact(x_shape, w_shape, strides, pads, dilations, groups):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, x_shape).astype(np.uint8)
    w = rng.integers(-128, 128, w_shape).astype(np.int8)
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.uint8(131), "x_zero"),
        numpy_helper.from_array(np.int8(-3), "w_zero"),
    ]
    want = _conv_reference(
        x.astype(np.int64) - 131, w.astype(np.int64) + 3, strides, pads, dilations, groups
    )
    model = node_model(
        "ConvInteger", [("x", TensorProto.UINT8, list(x_shape))],
        [("y", TensorProto.INT32, list(want.shape))], inits,
        strides=list(strides), pads=list(pads), dilations=list(dilations), group=groups,
    )  # fmt: skip
    got = _run(model, x)
    assert got.dtype == np.int32 and np.array_equal(got, want.astype(np.int32))


@pytest.mark.parametrize(
    "x_shape, w_shape, strides, pads, groups",
    [
        ((2, 40, 19), (6, 40, 8), (2,), (3, 1), 1),  # 320 terms: im2col over one row
        ((1, 6, 12), (6, 2, 3), (1,), (1, 1), 3),  # grouped, f32
        ((1, 3, 4, 5, 6), (4, 3, 2, 3, 3), (1, 2, 1), (1, 0, 1, 0, 1, 1), 1),  # 54 terms: f32
        ((1, 20, 3, 4, 4), (2, 20, 2, 3, 3), (1, 1, 1), (0, 1, 1, 1, 0, 0), 1),  # 360: i32
    ],
)
def test_conv_integer_and_qlinear_conv_in_1d_and_3d(x_shape, w_shape, strides, pads, groups):
    """The 2-D paths (f32 when exact, im2col, i32) carry over to 1-D and
    3-D inputs: ConvInteger and per-channel QLinearConv against onnxruntime."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, x_shape).astype(np.uint8)
    w = rng.integers(-128, 128, w_shape).astype(np.int8)
    window = {"strides": list(strides), "pads": list(pads), "group": groups}
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.uint8(131), "x_zero"),
             numpy_helper.from_array(np.int8(-3), "w_zero")]  # fmt: skip
    model = node_model("ConvInteger", [("x", TensorProto.UINT8, list(x_shape))],
                       [("y", TensorProto.INT32, None)], inits, **window)  # fmt: skip
    want = session(model).run(None, {"x": x})[0]
    assert np.array_equal(_run(model, x), want)
    o = w_shape[0]
    scales = [
        numpy_helper.from_array(np.float32(0.02), "x_scale"),
        numpy_helper.from_array(np.linspace(0.001, 0.004, o).astype(np.float32), "w_scale"),
        numpy_helper.from_array(np.zeros(o, np.int8), "w_zeros"),
        numpy_helper.from_array(np.float32(9.0), "y_scale"),
        numpy_helper.from_array(np.uint8(128), "y_zero"),
        numpy_helper.from_array(rng.integers(-500, 500, o).astype(np.int32), "bias"),
    ]
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zeros",
                            "y_scale", "y_zero", "bias"], ["y"], **window)  # fmt: skip
    graph = helper.make_graph(
        [node], "qlinear_conv", [helper.make_tensor_value_info("x", TensorProto.UINT8, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits[:2] + scales,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    want = session(model).run(None, {"x": x})[0]
    got = _run(model, x)
    assert np.abs(got.astype(np.int32) - want).max() <= 1  # onnxruntime rounds the f32 rescale


def _contrib_model(op_type, inputs, outputs, initializers, **attributes):
    node = helper.make_node(op_type, [n for n, *_ in inputs] + [i.name for i in initializers],
                            [n for n, *_ in outputs], domain="com.microsoft", **attributes)  # fmt: skip
    graph = helper.make_graph(
        [node], op_type, [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs], list(initializers),
    )  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def test_matmul_integer_to_float_and_dynamic_quantize_matmul():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (6, 40)).astype(np.uint8)
    b = rng.integers(-128, 128, (40, 12)).astype(np.int8)
    b_scale = rng.uniform(0.01, 0.02, 12).astype(np.float32)
    b_zero = rng.integers(-3, 4, 12).astype(np.int8)
    bias = rng.standard_normal(12).astype(np.float32)
    named = lambda array, name: numpy_helper.from_array(array, name)  # noqa: E731
    model = _contrib_model(
        "MatMulIntegerToFloat", [("a", TensorProto.UINT8, [6, 40])], [("y", TensorProto.FLOAT, [6, 12])],
        [named(b, "b"), named(np.float32(0.05), "a_scale"), named(b_scale, "b_scale"),
         named(np.uint8(7), "a_zero"), named(b_zero, "b_zero"), named(bias, "bias")],
    )  # fmt: skip
    exact = (a.astype(np.int64) - 7) @ (b.astype(np.int64) - b_zero)
    want = exact.astype(np.float32) * (np.float32(0.05) * b_scale) + bias
    np.testing.assert_allclose(_run(model, a), want, rtol=1e-6, atol=1e-6)

    x = rng.standard_normal((6, 40)).astype(np.float32)
    model = _contrib_model(
        "DynamicQuantizeMatMul", [("x", TensorProto.FLOAT, [6, 40])], [("y", TensorProto.FLOAT, [6, 12])],
        [named(b, "b"), named(b_scale, "b_scale"), named(b_zero, "b_zero"), named(bias, "bias")],
    )  # fmt: skip
    low, high = min(x.min(), 0), max(x.max(), 0)
    scale = np.float32((high - low) / np.float32(255))
    zero = np.rint(np.clip(-low / scale, 0, 255))
    q = np.clip(np.rint(x / scale) + zero, 0, 255)
    exact = (q.astype(np.int64) - zero.astype(np.int64)) @ (b.astype(np.int64) - b_zero)
    want = exact.astype(np.float32) * (scale * b_scale) + bias
    np.testing.assert_allclose(_run(model, x), want, rtol=1e-5, atol=1e-5)


def test_qlinear_add_requantizes_the_float_sum():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (3, 8)).astype(np.uint8)
    b = rng.integers(0, 256, (3, 8)).astype(np.uint8)
    named = lambda array, name: numpy_helper.from_array(array, name)  # noqa: E731
    model = _contrib_model(
        "QLinearAdd",
        [("a", TensorProto.UINT8, [3, 8]), ("a_scale", TensorProto.FLOAT, []), ("a_zero", TensorProto.UINT8, []),
         ("b", TensorProto.UINT8, [3, 8])],
        [("y", TensorProto.UINT8, [3, 8])],
        [named(np.float32(0.1), "b_scale"), named(np.uint8(120), "b_zero"),
         named(np.float32(0.15), "y_scale"), named(np.uint8(128), "y_zero")],
    )  # fmt: skip
    got = _run(model, a, np.array(0.05, np.float32), np.array(100, np.uint8), b)
    total = (a.astype(np.float32) - 100) * np.float32(0.05) + (
        b.astype(np.float32) - 120
    ) * np.float32(0.1)
    want = np.clip(np.rint(total / np.float32(0.15)) + 128, 0, 255).astype(np.uint8)
    assert np.array_equal(got, want)


def test_an_unknown_contrib_op_is_one_line_naming_its_domain():
    model = _contrib_model("GroupQueryAttention", [("x", TensorProto.FLOAT, [1, 4, 8])],
                           [("y", TensorProto.FLOAT, [1, 4, 8])], [], num_heads=2)  # fmt: skip
    with pytest.raises(
        OnnxImportError,
        match=r"\(GroupQueryAttention\): operator is not supported \(domain 'com.microsoft'\)",
    ):
        graphcompiler.compile(model, cache=False)


# --- the quantized model suite ---------------------------------------------------------------


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"])
def test_quantized_model_matches_exact_integer_reference(entry):
    path = QUANTIZED / entry["file"]
    model = onnx.load(str(path))
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    with np.load(path.with_suffix(".npz")) as data:
        results = graphcompiler.compile(path)(*(data[n] for n in names))
        results = results if isinstance(results, tuple | list) else [results]
        for index, got in enumerate(results):
            want = data[f"output_{index}"]
            error = np.max(np.abs(got - want)) / (np.max(np.abs(want)) or 1.0)
            assert error <= TOLERANCE, f"{entry['file']} output {index}: error {error:.2e}"


def test_quantized_matmuls_run_on_integers():
    """The QDQ and dynamic BERT: every matmul with weights is an integer one."""
    from graphcompiler.frontends.onnx import import_onnx

    for scheme in ("qdq", "dynamic"):
        module = import_onnx(QUANTIZED / f"bert_int8_{scheme}.onnx")
        graphcompiler.apply_pipeline(module, "builtin.module(graph-integer-matmul)")
        matmuls = [op for op in module.walk() if op.name == "graph.matmul"]
        integer = [op for op in matmuls if str(op.result.type.element_type) == "i32"]
        assert len(integer) >= 12, f"{scheme}: {len(integer)} of {len(matmuls)} matmuls on integers"


def _requantized(values, scale, zero, dtype=np.uint8):
    info = np.iinfo(dtype)
    return np.clip(np.rint(values / scale) + zero, info.min, info.max).astype(dtype)


def test_qlinear_conv_per_channel_scales():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (1, 3, 6, 6)).astype(np.uint8)
    w = rng.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    w_scale = np.array([0.01, 0.02, 0.005, 0.04], np.float32)
    bias = rng.integers(-500, 500, 4).astype(np.int32)
    named = numpy_helper.from_array
    inits = [
        named(np.float32(0.05), "x_scale"), named(np.uint8(120), "x_zero"), named(w, "w"),
        named(w_scale, "w_scale"), named(np.int8(0), "w_zero"), named(np.float32(0.3), "y_scale"),
        named(np.uint8(100), "y_zero"), named(bias, "bias"),
    ]  # fmt: skip
    model = node_model(
        "QLinearConv", [("x", TensorProto.UINT8, [1, 3, 6, 6])], [("y", TensorProto.UINT8, [1, 4, 6, 6])],
        inits, pads=[1, 1, 1, 1],
    )  # fmt: skip
    acc = _conv_reference(
        x.astype(np.int64) - 120, w.astype(np.int64), (1, 1), (1, 1, 1, 1), (1, 1), 1
    )
    acc = (acc + bias[:, None, None]).astype(np.float32)
    multiplier = (np.float32(0.05) * w_scale / np.float32(0.3))[:, None, None]
    want = np.clip(np.rint(acc * multiplier) + 100, 0, 255).astype(np.uint8)
    assert np.array_equal(_run(model, x), want)


def test_qgemm_with_and_without_output_quantization():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (5, 20)).astype(np.uint8)
    b = rng.integers(-128, 128, (7, 20)).astype(np.int8)  # transB: [N, K]
    bias = rng.integers(-300, 300, 7).astype(np.int32)
    named = numpy_helper.from_array
    weights = [
        named(np.float32(0.02), "a_scale"), named(np.uint8(3), "a_zero"), named(b, "b"),
        named(np.float32(0.01), "b_scale"), named(np.int8(0), "b_zero"), named(bias, "c"),
    ]  # fmt: skip
    acc = (a.astype(np.int64) - 3) @ b.astype(np.int64).T + bias
    scale = np.float32(0.02) * np.float32(0.01) * np.float32(0.5)
    floats = _contrib_model("QGemm", [("a", TensorProto.UINT8, [5, 20])], [("y", TensorProto.FLOAT, [5, 7])],
                            weights, transB=1, alpha=0.5)  # fmt: skip
    np.testing.assert_allclose(_run(floats, a), acc.astype(np.float32) * scale, rtol=1e-6)
    out = [named(np.float32(0.04), "y_scale"), named(np.uint8(128), "y_zero")]
    quantized = _contrib_model("QGemm", [("a", TensorProto.UINT8, [5, 20])], [("y", TensorProto.UINT8, [5, 7])],
                               weights + out, transB=1, alpha=0.5)  # fmt: skip
    want = np.clip(np.rint(acc.astype(np.float32) * (scale / np.float32(0.04))) + 128, 0, 255)
    assert np.array_equal(_run(quantized, a), want.astype(np.uint8))


def test_qlinear_concat_softmax_and_average_pool_requantize_the_float_result():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 256, (1, 2, 4, 4)).astype(np.uint8)
    y = rng.integers(0, 256, (1, 3, 4, 4)).astype(np.uint8)
    named = numpy_helper.from_array
    dq = lambda v, s, z: (v.astype(np.float32) - z) * np.float32(s)  # noqa: E731
    concat = _contrib_model(
        "QLinearConcat", [("ys", TensorProto.FLOAT, []), ("yz", TensorProto.UINT8, []),
                          ("x", TensorProto.UINT8, [1, 2, 4, 4])],
        [("out", TensorProto.UINT8, [1, 5, 4, 4])],
        [named(np.float32(0.1), "xs"), named(np.uint8(10), "xz"), named(y, "y"),
         named(np.float32(0.2), "ys2"), named(np.uint8(20), "yz2")], axis=1,
    )  # fmt: skip
    got = _run(concat, np.array(0.3, np.float32), np.array(7, np.uint8), x)
    joined = np.concatenate([dq(x, 0.1, 10), dq(y, 0.2, 20)], axis=1)
    assert np.array_equal(got, _requantized(joined, np.float32(0.3), 7))

    scales = [named(np.float32(0.05), "xs"), named(np.uint8(100), "xz"),
              named(np.float32(1 / 256), "ys"), named(np.uint8(0), "yz")]  # fmt: skip
    softmax = _contrib_model("QLinearSoftmax", [("x", TensorProto.UINT8, [1, 2, 4, 4])],
                             [("out", TensorProto.UINT8, [1, 2, 4, 4])], scales, axis=-1, opset=13)  # fmt: skip
    values = dq(x, 0.05, 100)
    probabilities = np.exp(values - values.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    got = _run(softmax, x).astype(np.int64)
    assert (
        np.abs(got - _requantized(probabilities, np.float32(1 / 256), 0)).max() <= 1
    )  # exp's ulps

    pool = _contrib_model("QLinearAveragePool", [("x", TensorProto.UINT8, [1, 2, 4, 4])],
                          [("out", TensorProto.UINT8, [1, 2, 2, 2])], scales[:2] + [
                              named(np.float32(0.05), "ys"), named(np.uint8(100), "yz")],
                          kernel_shape=[2, 2], strides=[2, 2])  # fmt: skip
    means = dq(x, 0.05, 100).reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5))
    assert np.array_equal(_run(pool, x), _requantized(means, np.float32(0.05), 100))


def test_sixteen_lane_integer_matmul_selects_vpmaddwd_on_zmm(monkeypatch):
    """The AVX-512 code of the i16-pair path is built and compiled to
    assembly on every host (one without AVX-512 cannot run it; the tests
    above run the host's): its product is vpmaddwd on 512-bit registers."""
    import llvmlite.binding as llvm

    from graphcompiler.runtime.microkernels import Microkernel, microkernel_module

    monkeypatch.setenv("GC_TARGET", "avx512")
    b = np.arange(40 * 48, dtype=np.int16).reshape(40, 48) % 7
    module = _widening_matmul((33, 40), b)
    graphcompiler.apply_pipeline(module, "builtin.module(gc-cpu-pipeline)", verify_each=True)
    assert "gc_ukernel_i16x2_" in str(module) and "_l16_" in str(module)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    kernel = Microkernel(m=4, n=32, lanes=16, a_row=40, a_k=1, ldb=32, ldc=48, pairs="i16")
    parsed = llvm.parse_assembly(microkernel_module([kernel]))
    parsed.verify()
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu="skylake-avx512", features="+avx512f,+avx512bw", opt=2
    )
    assert "vpmaddwd\t%zmm" in machine.emit_assembly(parsed)


@pytest.mark.parametrize("scale", [0.05, -0.37, 3.0e-7, 2.5e4])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qdq_head_split_moves_bytes_and_gives_them_back(scale, dtype):
    """DequantizeLinear, Reshape, QuantizeLinear, DequantizeLinear,
    Transpose, QuantizeLinear with one scale and zero point (an exporter's
    head split): the moves run on the bytes and the requantizations give
    each byte back, for every byte value and these scales, as numpy's
    formulas do."""
    zero = np.array(3 if dtype == np.uint8 else -5, dtype)
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    inits = [
        numpy_helper.from_array(np.array(scale, np.float32), "s"),
        numpy_helper.from_array(zero, "z"),
        numpy_helper.from_array(np.array([4, 8, 2, 4], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "s", "z"], ["d1"]),
        helper.make_node("Reshape", ["d1", "shape"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s", "z"], ["q1"]),
        helper.make_node("DequantizeLinear", ["q1", "s", "z"], ["d2"]),
        helper.make_node("Transpose", ["d2"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("QuantizeLinear", ["t", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "head_split", [helper.make_tensor_value_info("x", kind, [4, 64])],
        [helper.make_tensor_value_info("y", kind, [4, 2, 8, 4])], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = (np.arange(256) - (128 if dtype == np.int8 else 0)).astype(dtype).reshape(4, 64)
    compiled = graphcompiler.compile(model, cache=False)
    assert "graph.div" not in compiled.graph  # both requantizations dropped
    info = np.iinfo(dtype)

    def qdq(values):
        dequantized = (values.astype(np.float32) - np.float32(zero)) * np.float32(scale)
        quantized = np.rint(dequantized / np.float32(scale)) + np.float32(zero)
        return np.clip(quantized, info.min, info.max).astype(dtype)

    want = qdq(qdq(x).reshape(4, 8, 2, 4).transpose(0, 2, 1, 3))
    assert np.array_equal(want, x.reshape(4, 8, 2, 4).transpose(0, 2, 1, 3))
    assert np.array_equal(compiled(x), want)
