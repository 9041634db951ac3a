"""ONNX window ops and the ops composed from several graph ops: Conv and
ConvTranspose (1-D, 2-D, 3-D), MaxPool / AveragePool / LpPool (ceil_mode,
GlobalLpPool,
dilations, 3-D), Resize, Einsum and GroupNormalization.

Each case is one ONNX node, imported and run through the reference
interpreter and (for a sample) compiled, against onnxruntime where it
implements the case, onnx's reference implementation for Resize (the
spec's executable form, which onnxruntime departs from in places) and
numpy for Einsum and GroupNormalization.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnxruntime_session import session  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx  # noqa: E402
from graphcompiler.interpreters import reference  # noqa: E402

rng = np.random.default_rng(7)


def _model(op_type, inputs, initializers=(), opset=22, **attributes):
    """A one-node model; its output's shape is left for the importer to find."""
    names = [name for name, _ in inputs]
    node = helper.make_node(op_type, [*names, *[n for n, _ in initializers]], ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        "case",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs
        ],
        [
            helper.make_tensor_value_info(
                "y", helper.np_dtype_to_tensor_dtype(inputs[0][1].dtype), None
            )
        ],
        [numpy_helper.from_array(a, n) for n, a in initializers if n],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _onnxruntime(model, inputs):
    return session(model).run(None, dict(inputs))[0]


def _onnx_reference(model, inputs):
    return ReferenceEvaluator(model).run(None, dict(inputs))[0]


def _check(model, inputs, expected, compiled=False, tolerance=1e-4):
    module = import_onnx(model)
    arrays = [a for _, a in inputs]
    results = [reference.run(module, *arrays)]
    if compiled:
        results.append(graphcompiler.compile(module)(*arrays))
    for result in results:
        assert result.shape == expected.shape
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)


def _floats(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# --- convolution ------------------------------------------------------------------


CONVS = [
    ([2, 4, 9], [6, 2, 3], dict(group=2, strides=[2], pads=[1, 2]), True),
    ([1, 4, 7, 8], [4, 1, 3, 3], dict(group=4, dilations=[2, 1], pads=[2, 0, 1, 1]), False),
    (
        [2, 4, 5, 6, 7],
        [6, 2, 3, 2, 3],
        dict(group=2, strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 0]),
        True,
    ),
    ([1, 2, 6, 5, 5], [3, 2, 2, 3, 1], dict(strides=[2, 1, 2], auto_pad="SAME_UPPER"), False),
    ([1, 3, 4, 5, 6], [2, 3, 1, 1, 1], dict(strides=[2, 2, 3]), False),
]


@pytest.mark.parametrize("x_shape, w_shape, attributes, compiled", CONVS)
def test_conv_1d_2d_3d_match_onnxruntime(x_shape, w_shape, attributes, compiled):
    inputs = [("x", _floats(*x_shape)), ("w", _floats(*w_shape)), ("b", _floats(w_shape[0]))]
    model = _model("Conv", inputs, **attributes)
    _check(model, inputs, _onnxruntime(model, inputs), compiled)


CONV_TRANSPOSES = [
    ([2, 3, 5], [3, 2, 3], dict(strides=[2], output_padding=[1], pads=[1, 0]), True),
    (
        [1, 4, 4, 5],
        [4, 3, 3, 2],
        dict(group=2, strides=[2, 3], dilations=[2, 1], pads=[1, 0, 2, 1]),
        True,
    ),
    ([1, 2, 3, 4, 3], [2, 2, 2, 3, 2], dict(strides=[2, 1, 2], pads=[0, 1, 0, 1, 0, 1]), True),
    ([1, 2, 4, 4], [2, 2, 3, 3], dict(strides=[2, 2], auto_pad="SAME_UPPER"), False),
    ([1, 2, 4, 4], [2, 2, 3, 3], dict(strides=[2, 2], auto_pad="SAME_LOWER"), False),
    ([1, 2, 3, 3], [2, 1, 3, 3], dict(strides=[2, 2], output_shape=[6, 7]), False),
    ([1, 2, 3, 3], [2, 3, 3, 3], dict(strides=[1, 1], auto_pad="VALID"), False),
    ([1, 2, 3, 3], [2, 2, 1, 1], dict(strides=[2, 2]), True),  # crops the last zeros
    ([1, 2, 6], [2, 1, 3], dict(strides=[2], pads=[3, 2]), True),  # pads beyond the kernel
    # phases: taps 2 apart (dilation 2, stride 4), phases with no tap, many phases
    ([1, 2, 5, 4], [2, 3, 5, 2], dict(strides=[4, 3], dilations=[2, 2], pads=[2, 0, 1, 3]), True),
    ([2, 3, 9], [3, 2, 16], dict(strides=[8], pads=[4, 4]), True),  # HiFi-GAN's upsampling
    ([1, 2, 2, 3, 2], [2, 2, 2, 2, 3], dict(strides=[3, 2, 2], output_padding=[2, 1, 0]), True),
    ([1, 2, 3, 2], [2, 2, 1, 3], dict(strides=[1, 1], output_shape=[3, 1]), True),
]


@pytest.mark.parametrize("x_shape, w_shape, attributes, compiled", CONV_TRANSPOSES)
def test_conv_transpose_matches_onnxruntime(x_shape, w_shape, attributes, compiled):
    inputs = [("x", _floats(*x_shape)), ("w", _floats(*w_shape))]
    initializers = [("b", _floats(w_shape[1] * attributes.get("group", 1)))]
    model = _model("ConvTranspose", inputs, initializers, **attributes)
    _check(model, inputs, _onnxruntime(model, inputs), compiled)


def test_conv_transpose_multiplies_no_inserted_zero():
    """Each output phase reads only the taps that meet an input element: an
    inf weight makes inf where it multiplies an input, never NaN from a
    zero between the inputs (onnxruntime's col2im multiplies no zero either)."""
    x = np.array([[[1.0, 2.0, 3.0]]], np.float32)
    w = np.array([[[np.inf, 1.0]]], np.float32)
    inputs = [("x", x), ("w", w)]
    model = _model("ConvTranspose", inputs, strides=[2])
    got = graphcompiler.compile(model, cache=False)(x, w)
    np.testing.assert_array_equal(got, _onnxruntime(model, inputs))
    np.testing.assert_array_equal(got.reshape(-1), [np.inf, 1.0, np.inf, 2.0, np.inf, 3.0])


def test_conv_transpose_output_shape_beyond_the_natural_one_pads_the_end():
    """ONNX's equations give the pads (here negative at the end) that reach
    output_shape; onnxruntime rejects this, onnx's reference follows the spec."""
    inputs = [("x", _floats(1, 1, 3, 3)), ("w", _floats(1, 2, 3, 3))]
    model = _model("ConvTranspose", inputs, strides=[3, 2], output_shape=[10, 8])
    expected = _onnx_reference(model, inputs)
    assert expected.shape == (1, 2, 10, 8)
    _check(model, inputs, expected)


def test_conv_transpose_output_shape_two_beyond_grows_at_the_end():
    """Two more columns than the full output: both zeros (plus the bias) at
    the end, as onnxruntime and onnx's reference place them."""
    inputs = [("x", _floats(1, 2, 3, 2)), ("w", _floats(2, 2, 2, 3)), ("b", _floats(2))]
    model = _model("ConvTranspose", inputs, strides=[2, 3], output_shape=[7, 8])
    expected = _onnxruntime(model, inputs)
    np.testing.assert_allclose(expected, _onnx_reference(model, inputs), rtol=1e-5, atol=1e-5)
    _check(model, inputs, expected, compiled=True)


# --- pooling ---------------------------------------------------------------------


POOLS = [
    # ceil_mode: the last window partial, its extra pads never counted
    ("AveragePool", [1, 2, 4, 6], dict(kernel_shape=[3, 3], strides=[2, 3], pads=[0, 1, 1, 0], ceil_mode=1), True),
    ("AveragePool", [1, 2, 5, 5], dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1), False),
    ("MaxPool", [2, 3, 7, 5], dict(kernel_shape=[2, 3], strides=[3, 2], ceil_mode=1), True),
    ("LpPool", [1, 2, 4, 6], dict(kernel_shape=[3, 3], strides=[2, 3], pads=[0, 1, 1, 0], ceil_mode=1, p=2), False),
    # dilations: taps of strided slices
    ("MaxPool", [1, 2, 8, 7], dict(kernel_shape=[3, 2], dilations=[2, 3], pads=[1, 1, 2, 0]), True),
    ("AveragePool", [1, 2, 8, 7], dict(kernel_shape=[2, 3], dilations=[1, 2], strides=[2, 1], pads=[1, 1, 0, 1], ceil_mode=1), False),
    ("AveragePool", [1, 2, 9], dict(kernel_shape=[3], dilations=[3], pads=[2, 2], count_include_pad=1), False),
    ("LpPool", [1, 2, 7, 7], dict(kernel_shape=[2, 2], dilations=[2, 2], p=3), False),
    # 3-D: depth folded into the channels of one 2-D pool, then its taps
    ("MaxPool", [1, 2, 5, 6, 7], dict(kernel_shape=[3, 2, 3], strides=[2, 2, 1], pads=[1, 0, 1, 1, 1, 0]), True),
    ("AveragePool", [2, 2, 6, 5, 4], dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1]), True),
    ("AveragePool", [1, 1, 7, 6, 5], dict(kernel_shape=[3, 2, 2], strides=[3, 2, 2], dilations=[2, 1, 2], ceil_mode=1, count_include_pad=1), False),
    ("LpPool", [1, 2, 4, 5, 6], dict(kernel_shape=[2, 2, 3], pads=[1, 0, 0, 0, 1, 1], p=1), False),
    ("MaxPool", [1, 2, 8, 8], dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER"), False),
]  # fmt: skip


@pytest.mark.parametrize("op_type, shape, attributes, compiled", POOLS)
def test_pooling_matches_onnxruntime(op_type, shape, attributes, compiled):
    inputs = [("x", _floats(*shape))]
    model = _model(op_type, inputs, **attributes)
    _check(model, inputs, _onnxruntime(model, inputs), compiled)


@pytest.mark.parametrize(
    "shape, p, compiled",
    [([2, 3, 5, 4], 3, True), ([1, 2, 7], 2, True), ([1, 2, 3, 4, 2], 1, False)],
)
def test_global_lp_pool_takes_every_spatial_dim_as_the_window(shape, p, compiled):
    """Against numpy (onnxruntime has no GlobalLpPool kernel past opset 2)."""
    inputs = [("x", _floats(*shape))]
    spatial = tuple(range(2, len(shape)))
    want = (np.abs(inputs[0][1].astype(np.float64)) ** p).sum(spatial, keepdims=True) ** (1 / p)
    _check(_model("GlobalLpPool", inputs, p=p), inputs, want.astype(np.float32), compiled)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_dilated_max_pool_of_integers_pads_with_the_type_minimum(dtype):
    info = np.iinfo(dtype)
    inputs = [("x", rng.integers(info.min, info.max, [1, 2, 7, 6], endpoint=True).astype(dtype))]
    model = _model("MaxPool", inputs, kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1])
    _check(model, inputs, _onnxruntime(model, inputs), compiled=True)


# --- Resize ------------------------------------------------------------------------


RESIZES = [
    ("nearest", "asymmetric", dict(nearest_mode="floor"), dict(scales=[1, 1, 2, 3]), True),
    ("nearest", "half_pixel", dict(nearest_mode="round_prefer_ceil"), dict(sizes=[2, 3, 7, 3]), False),
    ("nearest", "align_corners", dict(nearest_mode="ceil"), dict(scales=[1, 1, 0.6, 1.5]), False),
    ("nearest", "tf_crop_and_resize", dict(extrapolation_value=9.0), dict(sizes=[2, 3, 5, 6], roi=[0, 0, -0.2, 0.1, 1, 1, 0.8, 1.3]), False),
    ("linear", "half_pixel", {}, dict(scales=[1, 1, 2.5, 0.5]), True),
    ("linear", "pytorch_half_pixel", {}, dict(sizes=[2, 3, 1, 9]), False),
    ("linear", "half_pixel_symmetric", {}, dict(scales=[1, 1, 1.7, 0.75]), False),
    ("linear", "align_corners", {}, dict(sizes=[2, 3, 9, 2]), False),
    ("linear", "half_pixel", dict(antialias=1), dict(scales=[1, 1, 0.4, 0.6]), True),
    ("linear", "tf_crop_and_resize", dict(extrapolation_value=-1.0), dict(sizes=[2, 3, 4, 4], roi=[0, 0, 0.1, -0.3, 1, 1, 1.2, 0.9]), False),
    ("cubic", "half_pixel", dict(cubic_coeff_a=-0.5, exclude_outside=1), dict(scales=[1, 1, 1.5, 2]), True),
    ("cubic", "asymmetric", {}, dict(sizes=[2, 3, 3, 11]), False),
    ("cubic", "half_pixel", dict(antialias=1), dict(sizes=[2, 3, 2, 3]), False),
    ("linear", "half_pixel", dict(axes=[3, 2]), dict(scales=[2, 0.5]), False),
    ("nearest", "half_pixel", dict(axes=[2, 3], keep_aspect_ratio_policy="not_larger"), dict(sizes=[9, 9]), False),
    ("linear", "align_corners", dict(keep_aspect_ratio_policy="not_smaller"), dict(sizes=[2, 3, 3, 3]), False),
]  # fmt: skip


@pytest.mark.parametrize("mode, transform, attributes, given, compiled", RESIZES)
def test_resize_matches_the_onnx_reference(mode, transform, attributes, given, compiled):
    inputs = [("x", _floats(2, 3, 5, 6))]
    initializers = [("roi", np.array(given.get("roi", []), np.float32))]
    if "scales" in given:
        initializers.append(("scales", np.array(given["scales"], np.float32)))
    else:
        initializers += [("", None), ("sizes", np.array(given["sizes"], np.int64))]
    model = _model(
        "Resize",
        inputs,
        initializers,
        mode=mode,
        coordinate_transformation_mode=transform,
        **attributes,
    )
    _check(model, inputs, _onnx_reference(model, inputs), compiled)


def test_resize_nearest_keeps_integer_elements():
    inputs = [("x", rng.integers(0, 255, [1, 3, 4, 4]).astype(np.uint8))]
    model = _model("Resize", inputs, [("", None), ("scales", np.array([1, 1, 2, 1.5], np.float32))])
    _check(model, inputs, _onnx_reference(model, inputs), compiled=True, tolerance=0)


@pytest.mark.parametrize(
    "initializers, attributes, message",
    [
        ([("", None), ("scales", np.array([1, 1, 2, 2], np.float32))], dict(mode="linear"), "mode 'linear' needs a floating-point input"),
        ([("roi", np.zeros(0, np.float32)), ("", None), ("sizes", np.array([1, 3, 4, 4]))], dict(coordinate_transformation_mode="tf_crop_and_resize"), "roi must hold 8 values"),
    ],
)  # fmt: skip
def test_resize_errors_are_one_line(initializers, attributes, message):
    inputs = [("x", rng.integers(0, 9, [1, 3, 2, 2]).astype(np.int32))]
    with pytest.raises(OnnxImportError, match=f"\\(Resize\\): {message}"):
        import_onnx(_model("Resize", inputs, initializers, **attributes))


# --- Einsum and GroupNormalization --------------------------------------------------------


EINSUMS = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], True),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)], True),
    ("ij,jk", [(3, 4), (4, 5)], False),
    ("i,i", [(5,), (5,)], False),
    ("i,j->ij", [(3,), (4,)], False),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)], False),
    ("ij,kj->ikj", [(3, 4), (2, 4)], False),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)], True),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)], False),
    ("...ii->...i", [(2, 3, 3)], True),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)], False),
    ("ijij->ij", [(2, 3, 2, 3)], False),
    ("i...,i...->...", [(2, 3), (2, 3)], False),
    ("ij->", [(3, 4)], False),
    ("ijk->kji", [(2, 3, 4)], False),
    ("->", [()], False),
]


@pytest.mark.parametrize("equation, shapes, compiled", EINSUMS)
def test_einsum_matches_numpy(equation, shapes, compiled):
    inputs = [(f"x{i}", _floats(*shape)) for i, shape in enumerate(shapes)]
    model = _model("Einsum", inputs, equation=equation)
    expected = np.einsum(equation, *[a for _, a in inputs])
    _check(model, inputs, np.asarray(expected, np.float32), compiled)


def test_einsum_errors_are_one_line():
    inputs = [("x0", _floats(3, 4))]
    with pytest.raises(OnnxImportError, match=r"\(Einsum\): output subscripts 'ii' repeat"):
        import_onnx(_model("Einsum", inputs, equation="ij->ii"))


def _group_norm(x, groups, scale, bias, epsilon):
    grouped = x.reshape(x.shape[0], groups, -1)
    mean = grouped.mean(axis=-1, keepdims=True)
    variance = grouped.var(axis=-1, keepdims=True)
    normalized = ((grouped - mean) / np.sqrt(variance + epsilon)).reshape(x.shape)
    ones = [1] * (x.ndim - 2)
    return normalized * scale.reshape(-1, *ones) + bias.reshape(-1, *ones)


@pytest.mark.parametrize("opset, compiled", [(21, True), (18, False)])
def test_group_normalization_per_channel_and_per_group(opset, compiled):
    """Opset 21 scales each channel, opset 18 each group."""
    x, groups = _floats(2, 6, 3, 4), 3
    width = 6 if opset == 21 else groups
    scale, bias = _floats(width), _floats(width)
    inputs = [("x", x), ("scale", scale), ("bias", bias)]
    model = _model("GroupNormalization", inputs, opset=opset, num_groups=groups, epsilon=1e-3)
    per_channel = [np.repeat(v, 6 // width) for v in (scale, bias)]
    _check(model, inputs, _group_norm(x, groups, *per_channel, 1e-3), compiled)


def _normalized_in_f64(op_type, x, scale, bias=None, epsilon=1e-5):
    """The normalizations' exact answers (every stage in f64) for f32 inputs."""
    x = x.astype(np.float64)
    if op_type == "GroupNormalization":
        return _group_norm(x, 2, scale, bias, epsilon)
    if op_type == "RMSNormalization":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + epsilon) * scale
    normalized = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + epsilon)
    return normalized * scale + bias


@pytest.mark.parametrize(
    "op_type, opset, parameters",
    [("GroupNormalization", 21, 2), ("LayerNormalization", 17, 2), ("RMSNormalization", 23, 1)],
)
@pytest.mark.parametrize("seed", range(3))
def test_stash_type_double_computes_stage_one_in_f64(op_type, opset, parameters, seed):
    """stash_type = 11 (an f32 model asking for f64 statistics; values far
    from 0, where that matters) against the answer computed wholly in f64.
    Not against onnxruntime: its CPU LayerNormalization keeps f32
    statistics and misses by 3e-5 here. Own generator: the data must not
    depend on which tests ran before on the same worker."""
    generator = np.random.default_rng(seed)
    x = (generator.standard_normal((2, 4, 6)) * 10 + 1000).astype(np.float32)
    width = 4 if op_type == "GroupNormalization" else 6
    parameter_names = ("scale", "bias")[:parameters]
    inputs = [
        ("x", x),
        *[(n, generator.standard_normal(width).astype(np.float32)) for n in parameter_names],
    ]
    groups = {"num_groups": 2} if op_type == "GroupNormalization" else {}
    model = _model(op_type, inputs, opset=opset, stash_type=11, **groups)
    got = graphcompiler.compile(model, cache=False)(*[a for _, a in inputs])
    expected = _normalized_in_f64(op_type, *[a for _, a in inputs])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


# --- shapes ------------------------------------------------------------------------


def test_output_shapes_come_from_the_inputs_not_onnx_shape_inference(monkeypatch):
    """The importer propagates shapes itself: with onnx's shape inference
    withheld (the model as given, no value_info), every op still imports."""
    from graphcompiler.frontends.onnx import model as onnx_model

    monkeypatch.setattr(onnx_model.shape_inference, "infer_shapes", lambda model, **_: model)
    x1, x3 = _floats(1, 2, 9), _floats(1, 2, 4, 5, 6)
    sizes = [("", None), ("", None), ("sizes", np.array([1, 2, 9, 4, 3]))]
    cases = [
        ("Conv", [("x", x1), ("w", _floats(3, 2, 2))], {}),
        ("Resize", [("x", x3)], dict(initializers=sizes, mode="linear")),
        (
            "GroupNormalization",
            [("x", x3), ("s", _floats(2)), ("b", _floats(2))],
            dict(num_groups=1),
        ),
        ("ConvTranspose", [("x", x1), ("w", _floats(2, 3, 2))], dict(strides=[2])),
        ("MaxPool", [("x", x1)], dict(kernel_shape=[2], ceil_mode=1, strides=[2])),
        ("AveragePool", [("x", x3)], dict(kernel_shape=[2, 2, 2], dilations=[1, 2, 1])),
        ("LpPool", [("x", x3)], dict(kernel_shape=[3, 1, 2])),
        ("Einsum", [("x", x1)], dict(equation="ncw->wn")),
    ]
    for op_type, inputs, attributes in cases:
        import_onnx(_model(op_type, inputs, **attributes))


# --- where onnx's own shape inference or evaluator disagrees with onnxruntime ---


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_padding_never_negative(auto_pad):
    """A kernel shorter than the stride: input * stride is more than the
    full output, so no padding (onnxruntime's output is one shorter)."""
    inputs = [("x", _floats(2, 3, 5, 7)), ("w", _floats(3, 2, 1, 3))]
    model = _model("ConvTranspose", inputs, strides=[2, 3], auto_pad=auto_pad)
    _check(model, inputs, _onnxruntime(model, inputs), compiled=True)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_padding_with_output_padding(auto_pad):
    """input * stride, as onnxruntime gives, where onnx's shape inference
    adds output_padding: not cross-checked, the Relu after it neither."""
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w"], ["t"], auto_pad=auto_pad, strides=[2],
                         output_padding=[1]),
        helper.make_node("Relu", ["t"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "case",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
            for n, s in (("x", [2, 3, 5]), ("w", [3, 2, 3]))
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    inputs = [("x", _floats(2, 3, 5)), ("w", _floats(3, 2, 3))]
    expected = _onnxruntime(model, inputs)
    assert expected.shape == (2, 2, 10)
    _check(model, inputs, expected, compiled=True)


def test_a_ceil_mode_window_starting_past_the_input_is_dropped_downstream_too():
    """onnx's shape inference keeps a last ceil_mode window that starts
    beyond the input; onnxruntime and torch drop it, and so does the
    importer, for the pool and the ops after it."""
    nodes = [
        helper.make_node("MaxPool", ["x"], ["p"], ceil_mode=1, kernel_shape=[2, 2], strides=[3, 1],
                         pads=[0, 0, 1, 0]),
        helper.make_node("Relu", ["p"], ["r"]),
        helper.make_node("Add", ["r", "p"], ["y"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inputs = [("x", _floats(2, 3, 3, 7))]
    expected = _onnxruntime(model, inputs)
    assert expected.shape == (2, 3, 1, 6)
    _check(model, inputs, expected, compiled=True)


def test_a_constant_node_onnx_evaluates_to_another_shape_is_converted():
    """A ConvTranspose of constants that onnx's reference evaluator would
    fold to a shape its shape inference does not give is converted
    instead, so the Conv after it sees onnxruntime's shape."""
    weights = [
        numpy_helper.from_array(_floats(8, 2, 2), "a"),
        numpy_helper.from_array(_floats(2, 3, 1), "b"),
        numpy_helper.from_array(_floats(3, 1, 3), "c"),
    ]
    nodes = [
        helper.make_node("ConvTranspose", ["a", "b"], ["t"], auto_pad="SAME_UPPER", strides=[2]),
        helper.make_node("Conv", ["t", "c", "x"], ["y"], auto_pad="SAME_LOWER", group=3,
                         kernel_shape=[3]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "case",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inputs = [("x", _floats(3))]
    _check(model, inputs, _onnxruntime(model, inputs), compiled=True)


@pytest.mark.parametrize(
    "op_type, shape, attributes",
    [
        ("AveragePool", [1, 3, 7, 2, 3], dict(kernel_shape=[1, 3, 3], count_include_pad=1)),
        ("MaxPool", [2, 1, 2, 5, 3], dict(kernel_shape=[3, 3, 2])),
        ("LpPool", [1, 2, 1, 7, 7], dict(kernel_shape=[2, 3, 5], strides=[1, 3, 2])),
        ("Resize", [1, 3, 7], dict(keep_aspect_ratio_policy="not_larger")),
    ],
)
def test_no_window_that_fits_is_an_empty_result(op_type, shape, attributes):
    """A window longer than its (padded) dim, or a resize rounding a size
    to 0: an empty result, as onnx's shape inference and onnxruntime give."""
    inputs = [("x", _floats(*shape))]
    sizes = [("", None), ("", None), ("sizes", np.array([1, 3, 2], np.int64))]  # roi, scales
    model = _model(op_type, inputs, sizes if op_type == "Resize" else (), **attributes)
    expected = _onnxruntime(model, inputs)
    assert expected.size == 0
    _check(model, inputs, expected, compiled=True)


@pytest.mark.parametrize(
    "op_type, shape, attributes",
    [
        ("MaxPool", [1, 2, 1, 1], dict(kernel_shape=[2, 2], strides=[2, 2])),
        ("AveragePool", [2, 3, 5, 3], dict(kernel_shape=[4, 4], strides=[3, 2])),
        (
            "AveragePool",
            [1, 2, 3, 4],
            dict(kernel_shape=[4, 3], strides=[2, 2], pads=[0, 1, 0, 0], count_include_pad=1),
        ),  # fmt: skip
    ],
)
def test_a_window_sticking_out_by_less_than_a_stride_counts(op_type, shape, attributes):
    """(input + pads - window) / stride in C's division: -1 / 2 is 0, one
    window, as onnxruntime and onnx's shape inference count; the part past
    the padded input is never counted."""
    inputs = [("x", _floats(*shape))]
    model = _model(op_type, inputs, **attributes)
    expected = _onnxruntime(model, inputs)
    assert expected.size
    _check(model, inputs, expected, compiled=True)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_mean_variance_normalization_in_the_input_type(dtype):
    """The schema's formula, in f16 and f64 too (its function body's f32
    epsilon does not add to them: onnxruntime refuses those)."""
    x = (rng.standard_normal((2, 3, 4, 5)) * 3 + 1).astype(dtype)
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2, 3])
    graph = helper.make_graph(
        [node], "mvn", [helper.make_tensor_value_info("x", onnx_type, x.shape)],
        [helper.make_tensor_value_info("y", onnx_type, x.shape)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    wide = x.astype(np.float64)
    mean = wide.mean((0, 2, 3), keepdims=True)
    spread = np.sqrt((wide * wide).mean((0, 2, 3), keepdims=True) - mean * mean) + 1e-9
    got = graphcompiler.compile(model, cache=False)(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got, (wide - mean) / spread, atol=1e-2 if dtype == np.float16 else 1e-5
    )
