"""ONNX Det (frontends/onnx/ops_linalg.py: LU with partial pivoting written
out in graph ops) against numpy's det (LAPACK's getrf): batches, pivoting
(a zero leading entry), singular matrices and a zero column, NaN, empty
batches and 0 x 0 matrices, float64; too large an order is one located error."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

rng = np.random.default_rng(11)


def _model(shape, element=TensorProto.FLOAT):
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"])], "det",
        [helper.make_tensor_value_info("x", element, shape)],
        [helper.make_tensor_value_info("y", element, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("shape", [[1, 1], [3, 3], [2, 3, 5, 5], [12, 12], [0, 2, 2], [2, 0, 0]])
def test_det_matches_numpy(shape):
    x = rng.standard_normal(shape).astype(np.float32)
    got = graphcompiler.compile(_model(shape), cache=False)(x)
    want = np.linalg.det(x.astype(np.float64))
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(
        got, want, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(want).max(initial=0))
    )


def test_pivoting_singular_matrices_and_nan():
    x = np.stack(
        [
            [[0.0, 2.0, 1.0], [3.0, 1.0, 0.0], [1.0, 0.0, 4.0]],  # needs a row swap
            [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]],  # two rows alike
            [[0.0, 2.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 4.0]],  # a zero column
            [[1.0, np.nan, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        ]
    ).astype(np.float32)
    got = graphcompiler.compile(_model([4, 3, 3]), cache=False)(x)
    np.testing.assert_allclose(got[:3], np.linalg.det(x[:3].astype(np.float64)), atol=1e-6)
    assert got[2] == 0.0 and np.isnan(got[3])


def test_float64_keeps_its_precision():
    x = rng.standard_normal((4, 6, 6))
    got = graphcompiler.compile(_model([4, 6, 6], TensorProto.DOUBLE), cache=False)(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.linalg.det(x), rtol=1e-12)


def test_too_large_an_order_and_non_square_matrices_are_located_errors():
    with pytest.raises(OnnxImportError, match="Det.*order 65"):
        import_onnx(_model([65, 65]))
    with pytest.raises(OnnxImportError, match=r"Det.*\[2, 3\] is not \[\.\.\., n, n\]"):
        import_onnx(_model([2, 3]))
