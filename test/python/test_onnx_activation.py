"""ONNX Hardmax, Shrink, LRN and ReverseSequence
(frontends/onnx/ops_activation.py: compositions of graph ops) against
onnxruntime on the same one-node model, and Hardmax's ties and NaN against
numpy's argmax."""

import numpy as np
import pytest
from onnx import TensorProto
from onnx_node_model import node_model
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx

F = TensorProto.FLOAT
rng = np.random.default_rng(31)


def _both(model, x, tolerance=1e-6):
    expected = session(model).run(None, {"x": x})[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    return got


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_hardmax_marks_the_first_maximum(axis):
    x = rng.integers(0, 4, (3, 5, 6)).astype(np.float32)  # many ties
    got = _both(node_model("Hardmax", [("x", F, [3, 5, 6])], [("y", F, [3, 5, 6])], axis=axis), x)
    assert (got.sum(axis=axis) == 1).all()


def test_hardmax_takes_a_nan_as_numpy_argmax_does():
    x = np.array([[1.0, np.nan, 3.0, np.nan]], np.float32)
    model = node_model("Hardmax", [("x", F, [1, 4])], [("y", F, [1, 4])])
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(got, [[0, 1, 0, 0]])


@pytest.mark.parametrize("bias, lambd", [(0.0, 0.5), (1.5, 1.0)])
def test_shrink(bias, lambd):
    x = np.concatenate([rng.uniform(-3, 3, 40), [lambd, -lambd, 0.0]]).astype(np.float32)
    model = node_model("Shrink", [("x", F, [43])], [("y", F, [43])], bias=bias, lambd=lambd)
    _both(model, x)


@pytest.mark.parametrize(
    "dtype, onnx_type",
    [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8), (np.int32, TensorProto.INT32)],
)
def test_shrink_of_integers_compares_in_float(dtype, onnx_type):
    """-lambd of an unsigned x is below every value (no wrap to 254), and a
    fractional lambd compares as a float would."""
    x = np.array([0, 1, 2, 3, 6, 200 if dtype == np.uint8 else -6], dtype)
    for bias, lambd in ((-1.0, 2.0), (0.0, 1.5)):
        model = node_model("Shrink", [("x", onnx_type, [6])], [("y", onnx_type, [6])],
                           bias=bias, lambd=lambd)  # fmt: skip
        got = graphcompiler.compile(import_onnx(model), cache=False)(x)
        assert np.array_equal(got, session(model).run(None, {"x": x})[0])


def _lrn_expected(x, size, alpha, beta, bias):
    """ONNX's formula: the window is channels c - floor((size - 1) / 2) to
    c + ceil((size - 1) / 2)."""
    squares = np.zeros_like(x, dtype=np.float64)
    for c in range(x.shape[1]):
        low, high = max(0, c - (size - 1) // 2), min(x.shape[1], c + size // 2 + 1)
        squares[:, c] = (x[:, low:high].astype(np.float64) ** 2).sum(axis=1)
    return x / (bias + alpha / size * squares) ** beta


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_lrn_over_channels(size):
    """Odd sizes against onnxruntime (which refuses even ones), every size
    against the formula."""
    x = rng.standard_normal((2, 7, 4, 5)).astype(np.float32)
    model = node_model(
        "LRN", [("x", F, [2, 7, 4, 5])], [("y", F, [2, 7, 4, 5])],
        size=size, alpha=0.02, beta=0.6, bias=1.5,
    )  # fmt: skip
    got = _both(model, x, 2e-6) if size % 2 else graphcompiler.compile(import_onnx(model))(x)
    np.testing.assert_allclose(got, _lrn_expected(x, size, 0.02, 0.6, 1.5), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence(time_axis):
    shape = [6, 4, 3] if time_axis == 0 else [4, 6, 3]
    model = node_model(
        "ReverseSequence",
        [("x", F, shape), ("lengths", TensorProto.INT64, [4])],
        [("y", F, shape)],
        time_axis=time_axis,
        batch_axis=1 - time_axis,
    )
    x = rng.standard_normal(shape).astype(np.float32)
    lengths = np.array([6, 1, 3, 4], np.int64)
    expected = session(model).run(None, {"x": x, "lengths": lengths})[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(x, lengths)
    np.testing.assert_array_equal(got, expected)
