"""The ONNX converters of DFT (one matmul with a constant cos/sin matrix),
STFT (the frames gathered, windowed, through the same matrix),
OneHot (indices compared with an iota, then a select) and the random ops
(RandomUniform, RandomNormal and their *Like forms: constants drawn at
import time).

DFT is checked against numpy.fft (computed in float64) and onnxruntime,
OneHot against onnxruntime, exactly; the random ops by their shape, element
type, range and statistics, and by being the same for the same seed.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_node_model import node_model
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import NeedsConstantInput, OnnxImportError, import_onnx

rng = np.random.default_rng(23)
F, F16, F64, I32, I64 = (
    TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT32, TensorProto.INT64,
)  # fmt: skip


def _model(*args, **kwargs):
    model = node_model(*args, **kwargs)
    onnx.checker.check_model(model)
    return model


def _constant(name, value, dtype=np.int64):
    return numpy_helper.from_array(np.array(value, dtype), name)


def _run(model, *arrays):
    result = graphcompiler.compile(import_onnx(model))(*arrays)
    return result if isinstance(result, tuple) else (result,)


# --- DFT ------------------------------------------------------------------------------------


def _numpy_dft(signal, axis, length, inverse, onesided):
    """numpy.fft's transform of the complex (or real) signal along `axis`, as
    [..., m, 2] float64 (or [..., length, 1] for the inverse one-sided one)."""
    if inverse and onesided:
        return np.fft.irfft(signal, n=length, axis=axis)[..., None]
    if onesided:
        result = np.fft.rfft(signal, n=length, axis=axis)
    else:
        result = (np.fft.ifft if inverse else np.fft.fft)(signal, n=length, axis=axis)
    return np.stack([result.real, result.imag], axis=-1)


def _close(got, expected):
    """Within 1e-4 of the largest magnitude."""
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * np.abs(expected).max())


DFT_CASES = [
    # (opset, signal shape, complex, axis, inverse, onesided, dft_length)
    (20, [2, 16], True, -2, 0, 0, None),  # FNet's: complex, the last signal axis
    (20, [2, 16], False, -2, 0, 0, None),
    (20, [2, 12], True, -2, 1, 0, None),
    (20, [3, 10], False, -2, 0, 1, None),  # rfft
    (20, [3, 9], False, 1, 0, 1, None),  # odd n
    (20, [5, 8], True, 0, 0, 0, None),  # axis not last: transposed there and back
    (20, [2, 5, 7], True, -3, 1, 0, None),
    (20, [2, 16], True, -2, 0, 0, 10),  # dft_length shorter than n: truncated
    (20, [2, 6], True, -2, 1, 0, 11),  # longer: zero-padded
    (20, [2, 6], False, -2, 0, 1, 13),
    (17, [2, 16], True, None, 0, 0, None),  # opset 17's axis attribute, default 1
    (17, [2, 3, 8], False, 2, 1, 0, None),
    (17, [3, 8, 2], True, 1, 0, 0, 5),
    (17, [4, 7], False, -2, 0, 1, 12),
]


@pytest.mark.parametrize("opset, signal, complex_, axis, inverse, onesided, length", DFT_CASES)
def test_dft_matches_numpy_fft_and_onnxruntime(
    opset, signal, complex_, axis, inverse, onesided, length
):
    rank = len(signal) + 1
    real, imaginary = rng.standard_normal(signal), rng.standard_normal(signal)
    x = np.stack([real, imaginary] if complex_ else [real], axis=-1).astype(np.float32)
    values = real + 1j * imaginary if complex_ else real
    default_axis = 1 if opset < 20 else -2
    signal_axis = (default_axis if axis is None else axis) % rank
    expected = _numpy_dft(values, signal_axis, length or signal[signal_axis], inverse, onesided)

    initializers, names, attributes = [], ["x", "", ""], {"inverse": inverse, "onesided": onesided}
    if length is not None:
        initializers.append(_constant("dft_length", length))
        names[1] = "dft_length"
    if axis is not None and opset >= 20:
        initializers.append(_constant("axis", axis))
        names[2] = "axis"
    elif axis is not None:
        attributes["axis"] = axis
    names = names[: max(i + 1 for i, n in enumerate(names) if n)]
    model = _model(
        "DFT",
        [("x", F, list(x.shape))],
        [("y", F, list(expected.shape))],
        initializers,
        opset=opset,
        input_names=names,
        **attributes,
    )
    (got,) = _run(model, x)
    _close(got, expected)
    (runtime,) = session(model).run(None, {"x": x})
    _close(got, runtime)
    assert "graph.matmul" in str(import_onnx(model))


def test_dft_inverse_onesided_is_irfft():
    """onesided=1, inverse=1 (IRFFT): a one-sided spectrum to its real signal,
    by default of length 2 * (n - 1) (onnx's reference: numpy.fft.irfft)."""
    spectrum = rng.standard_normal([3, 9]) + 1j * rng.standard_normal([3, 9])
    x = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)
    for length in (None, 15, 9):
        initializers = [] if length is None else [_constant("dft_length", length)]
        n = length or 16
        model = _model(
            "DFT", [("x", F, [3, 9, 2])], [("y", F, [3, n, 1])], initializers, opset=20,
            inverse=1, onesided=1,
        )  # fmt: skip
        (got,) = _run(model, x)
        _close(got, np.fft.irfft(spectrum, n=n, axis=-1)[..., None])


def test_dft_of_f64_is_exact_to_f64_rounding():
    x = rng.standard_normal([2, 32, 2])
    model = _model("DFT", [("x", F64, [2, 32, 2])], [("y", F64, [2, 32, 2])], opset=20)
    (got,) = _run(model, x)
    expected = np.fft.fft(x[..., 0] + 1j * x[..., 1], axis=-1)
    np.testing.assert_allclose(got, np.stack([expected.real, expected.imag], -1), atol=1e-12)


def test_dft_errors_are_one_line():
    length_input = _model(
        "DFT", [("x", F, [2, 8, 2]), ("n", I64, [])], [("y", F, [2, 8, 2])], opset=20
    )
    with pytest.raises(NeedsConstantInput, match=r"input #1 \(dft_length\) must be a constant"):
        import_onnx(length_input)
    axis_input = _model(
        "DFT",
        [("x", F, [2, 8, 2]), ("a", I64, [])],
        [("y", F, [2, 8, 2])],
        opset=20,
        input_names=["x", "", "a"],
    )
    with pytest.raises(NeedsConstantInput, match=r"input #2 \(axis\) must be a constant"):
        import_onnx(axis_input)
    wrong_parts = _model("DFT", [("x", F, [2, 8, 3])], [("y", F, [2, 8, 2])], opset=17)
    wrong_parts.graph.output[0].type.tensor_type.ClearField("shape")
    with pytest.raises(
        OnnxImportError, match=r"\(DFT\): the input must be \[\.\.\., n, 1\]"
    ) as error:
        import_onnx(wrong_parts)
    assert "\n" not in str(error.value)


# --- OneHot ----------------------------------------------------------------------------------

# (indices, values, depth) element types onnxruntime has kernels for
ONE_HOT_TYPES = [(I64, I64, I64), (I64, F, F), (F, F, F), (F, I64, I64), (I32, F, I32)]


@pytest.mark.parametrize("types", ONE_HOT_TYPES, ids=lambda t: "-".join(map(str, t)))
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_one_hot_matches_onnxruntime(types, axis):
    index_type, value_type, depth_type = types
    depth = 5
    indices = np.array(
        [[0, 4, -1, -5, 5], [7, -6, 2, -2, 3], [1, 1, -3, 9, 0]],
        helper.tensor_dtype_to_np_dtype(index_type),
    )  # in range, counted from depth, and out of range both ways
    if index_type == F:
        indices[0, :3] = [0.9, 3.7, -1.5]  # truncated toward zero
    rank = indices.ndim + 1
    shape = list(indices.shape)
    shape.insert(axis % rank, depth)
    values = np.array([-2, 3], helper.tensor_dtype_to_np_dtype(value_type))
    model = _model(
        "OneHot",
        [("indices", index_type, list(indices.shape))],
        [("y", value_type, shape)],
        [
            _constant("depth", depth, helper.tensor_dtype_to_np_dtype(depth_type)),
            _constant("values", values, values.dtype),
        ],
        axis=axis,
    )
    (expected,) = session(model).run(None, {"indices": indices})
    (got,) = _run(model, indices)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    hot = np.moveaxis(got, axis, -1) == 3
    assert hot.sum() == 11  # the 4 out-of-range indices (5, 7, -6, 9) give all-off rows


def test_one_hot_default_axis_with_values_computed_at_run_time():
    depth = _constant("depth", [3])
    model = _model(
        "OneHot",
        [("indices", I64, [4]), ("values", F, [2])],
        [("y", F, [4, 3])],
        [depth],
        input_names=["indices", "depth", "values"],
    )
    indices = np.array([2, -1, 3, 0], np.int64)
    values = np.array([0.25, -7.0], np.float32)
    (got,) = _run(model, indices, values)
    expected = np.full([4, 3], 0.25, np.float32)
    expected[[0, 1, 3], [2, 2, 0]] = -7.0
    np.testing.assert_array_equal(got, expected)


def test_one_hot_errors_are_one_line():
    depth_input = _model(
        "OneHot",
        [("indices", I64, [4]), ("depth", I64, []), ("values", F, [2])],
        [("y", F, [4, 3])],
    )
    depth_input.graph.output[0].type.tensor_type.ClearField("shape")
    with pytest.raises(NeedsConstantInput, match=r"input #1 \(depth\) must be a constant"):
        import_onnx(depth_input)
    zero_depth = _model(
        "OneHot",
        [("indices", I64, [4])],
        [("y", F, [4, 0])],
        [_constant("depth", 0), _constant("values", [0, 1], np.float32)],
    )
    with pytest.raises(OnnxImportError, match=r"\(OneHot\): depth 0 is not positive") as error:
        import_onnx(zero_depth)
    assert "\n" not in str(error.value)


# --- random ops ------------------------------------------------------------------------------


def _random(op_type, shape, element=F, like=None, **attributes):
    """A one-node model of a random op; *Like ops take input x of `like` (type, shape)."""
    inputs = [("x", *like)] if like else []
    if not like:
        attributes["shape"] = shape
    return _model(op_type, inputs, [("y", element, shape)], **attributes)


@pytest.mark.parametrize("element, dtype", [(F, np.float32), (F64, np.float64), (F16, np.float16)])
def test_random_uniform_shape_type_and_range(element, dtype):
    model = _random("RandomUniform", [200, 500], element, dtype=element, low=-2.0, high=3.0)
    (got,) = _run(model)
    assert got.shape == (200, 500) and got.dtype == dtype
    assert got.min() >= -2.0 and got.max() < 3.0
    wide = got.astype(np.float64)
    assert abs(wide.mean() - 0.5) < 0.05 and abs(wide.std() - 5 / 12**0.5) < 0.05
    assert len(np.unique(got)) > 1000


def test_random_uniform_stays_below_high_after_rounding():
    """A value that rounds up to `high` in the element type is moved below it."""
    model = _random("RandomUniform", [1000, 1000], F16, dtype=F16, low=0.0, high=1.0)
    (got,) = _run(model)
    assert got.max() < 1.0 and got.max() == np.nextafter(np.float16(1), np.float16(0))


def test_random_normal_mean_and_scale():
    model = _random("RandomNormal", [100, 1000], F64, dtype=F64, mean=3.0, scale=0.5, seed=7.0)
    (got,) = _run(model)
    assert got.shape == (100, 1000) and got.dtype == np.float64
    assert abs(got.mean() - 3.0) < 0.01 and abs(got.std() - 0.5) < 0.01


@pytest.mark.parametrize("op_type", ["RandomUniformLike", "RandomNormalLike"])
def test_random_like_takes_the_input_shape_and_type(op_type):
    same = _random(op_type, [3, 4, 5], F16, like=(F16, [3, 4, 5]))
    (got,) = _run(same, np.zeros([3, 4, 5], np.float16))
    assert got.shape == (3, 4, 5) and got.dtype == np.float16
    other = _random(op_type, [6, 7], F, like=(I64, [6, 7]), dtype=F)
    (got,) = _run(other, np.zeros([6, 7], np.int64))
    assert got.shape == (6, 7) and got.dtype == np.float32 and len(np.unique(got)) == 42


def test_random_values_follow_the_seed():
    def draw(seed=None, output="y"):
        model = _random("RandomNormal", [64], **({} if seed is None else {"seed": seed}))
        model.graph.node[0].output[0] = model.graph.output[0].name = output
        return _run(model)[0]

    np.testing.assert_array_equal(draw(5.0), draw(5.0))
    assert not np.array_equal(draw(5.0), draw(6.0))
    assert not np.array_equal(draw(0.5), draw(0.25))  # not truncated to an integer
    np.testing.assert_array_equal(draw(), draw())  # unseeded: a fixed seed ...
    assert not np.array_equal(draw(output="a"), draw(output="b"))  # ... mixed with the node's


def test_random_values_are_drawn_once_per_compile():
    model = _random("RandomUniform", [8], seed=1.0)
    compiled = graphcompiler.compile(import_onnx(model))
    np.testing.assert_array_equal(compiled(), compiled())


def test_random_uniform_like_noise_model_runs():
    """ViT-MAE's masking noise: noise = RandomUniformLike(x), used by the graph
    (here added to x and ranked by TopK, the argsort torch exports)."""
    nodes = [
        helper.make_node("RandomUniformLike", ["x"], ["noise"], dtype=F, low=0.0, high=1.0),
        helper.make_node("Add", ["x", "noise"], ["y"]),
        helper.make_node("TopK", ["noise", "k"], ["values", "order"], axis=-1, largest=0),
    ]
    graph = helper.make_graph(
        nodes,
        "noise",
        [helper.make_tensor_value_info("x", F, [2, 49])],
        [
            helper.make_tensor_value_info("noise", F, [2, 49]),
            helper.make_tensor_value_info("y", F, [2, 49]),
            helper.make_tensor_value_info("order", I64, [2, 49]),
        ],
        [_constant("k", [49])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal([2, 49]).astype(np.float32)
    noise, y, order = graphcompiler.compile(model)(x)
    assert noise.shape == (2, 49) and noise.min() >= 0.0 and noise.max() < 1.0
    assert noise.std() > 0.1
    np.testing.assert_array_equal(y, x + noise)
    np.testing.assert_array_equal(order, np.argsort(noise, axis=-1, kind="stable"))


def test_random_errors_are_one_line():
    model = _random("RandomUniform", [4], low=1.0, high=1.0)
    with pytest.raises(OnnxImportError, match=r"\(RandomUniform\): low 1.0 is not below high"):
        import_onnx(model)


@pytest.mark.parametrize("windowed", [False, True])
@pytest.mark.parametrize("frame, step", [(16, 8), (10, 3)])
def test_stft_is_numpys_rfft_of_each_windowed_frame(windowed, frame, step):
    signal = rng.standard_normal([2, 64, 1]).astype(np.float32)
    window = np.hanning(frame).astype(np.float32)
    constants = [_constant("step", step)] + (
        [_constant("window", window, np.float32)] if windowed else []
    )
    constants.append(_constant("length", frame))
    names = ["signal", "step", "window" if windowed else "", "length"]
    frames = (64 - frame) // step + 1
    output = [("y", F, [2, frames, frame // 2 + 1, 2])]
    model = _model(
        "STFT", [("signal", F, [2, 64, 1])], output, constants, opset=17, input_names=names
    )
    (got,) = _run(model, signal)
    pieces = np.stack([signal[:, f * step : f * step + frame, 0] for f in range(frames)], 1)
    spectrum = np.fft.rfft(pieces.astype(np.float64) * (window if windowed else 1.0), axis=-1)
    expected = np.stack([spectrum.real, spectrum.imag], -1)
    assert got.shape == (2, frames, frame // 2 + 1, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_stft_frame_length_input_is_specialized_on(tmp_path):
    """frame_step and frame_length given as graph inputs (onnx's own test
    models): compile(path) binds their values."""
    inputs = [("signal", F, [1, 40, 1]), ("step", I64, []), ("length", I64, [])]
    model = node_model(
        "STFT",
        inputs,
        [("y", F, [1, 9, 5, 2])],
        opset=17,
        input_names=["signal", "step", "", "length"],
    )
    path = tmp_path / "stft.onnx"
    onnx.save(model, path)
    signal = rng.standard_normal([1, 40, 1]).astype(np.float32)
    got = graphcompiler.compile(str(path), cache=False)(signal, np.array(4), np.array(8))
    spectrum = np.fft.rfft(np.stack([signal[0, f * 4 : f * 4 + 8, 0] for f in range(9)]), axis=-1)
    np.testing.assert_allclose(got[0], np.stack([spectrum.real, spectrum.imag], -1), atol=1e-4)


def test_mel_weight_matrix_is_a_constant_of_its_inputs(tmp_path):
    """Given as graph inputs (onnx's test model), compile(path) binds them
    and the filter bank folds to onnx's reference values."""
    from onnx.reference import ReferenceEvaluator

    sizes = [("bins", I64, []), ("length", I64, []), ("rate", I64, [])]
    edges = [("low", F, []), ("high", F, [])]
    model = node_model("MelWeightMatrix", sizes + edges, [("w", F, [9, 5])], opset=17)
    path = tmp_path / "mel.onnx"
    onnx.save(model, path)
    values = [np.array(5), np.array(16), np.array(8000), np.array(100.0, np.float32),
              np.array(3000.0, np.float32)]  # fmt: skip
    got = graphcompiler.compile(str(path), cache=False)(*values)
    (expected,) = ReferenceEvaluator(model).run(
        None, dict(zip("bins length rate low high".split(), values, strict=True))
    )
    np.testing.assert_array_equal(got, expected)
    assert got.any(axis=0).all()  # every filter has weight
