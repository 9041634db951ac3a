"""ONNX GridSample (frontends/onnx/ops_grid_sample.py) against onnxruntime
on the same model: every mode, padding mode and align_corners, with grid
points far outside the image (reflected several times), on pixels and on
their edges; bicubic with border padding and a volumetric (3-D) input
against onnx's reference (onnxruntime's bicubic border taps differ from it
by up to 0.07 here; the conformance cases follow onnx)."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx

F = TensorProto.FLOAT
rng = np.random.default_rng(59)


def _model(x_shape, grid_shape, opset=20, **attributes):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attributes)
    out = [x_shape[0], x_shape[1], *grid_shape[1:-1]]
    graph = helper.make_graph(
        [node],
        "grid_sample",
        [
            helper.make_tensor_value_info("x", F, x_shape),
            helper.make_tensor_value_info("grid", F, grid_shape),
        ],
        [helper.make_tensor_value_info("y", F, out)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _grid(shape):
    grid = rng.uniform(-2.5, 2.5, shape).astype(np.float32)
    grid.reshape(-1)[:6] = [-1.0, 1.0, 0.0, -1.0 - 1e-3, 3.0, -3.0]  # corners, edges, far out
    return grid


@pytest.mark.parametrize(
    "mode, padding, align",
    list(
        itertools.product(["linear", "nearest", "cubic"], ["zeros", "border", "reflection"], [0, 1])
    ),
)
def test_against_onnxruntime(mode, padding, align):
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid = _grid((2, 4, 7, 2))
    model = _model(
        list(x.shape), list(grid.shape), mode=mode, padding_mode=padding, align_corners=align
    )
    if (mode, padding) == ("cubic", "border"):  # onnxruntime's taps differ from onnx's spec here
        expected = ReferenceEvaluator(model).run(None, {"x": x, "grid": grid})[0]
    else:
        expected = session(model).run(None, {"x": x, "grid": grid})[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(x, grid)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_opset_16_names_and_a_volume():
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    grid = _grid((1, 3, 3, 2))
    model = _model(list(x.shape), list(grid.shape), opset=16, mode="bicubic")
    expected = session(model).run(None, {"x": x, "grid": grid})[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(x, grid)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    volume = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = _grid((1, 2, 3, 4, 3))
    model = _model(list(volume.shape), list(grid.shape), padding_mode="reflection")
    expected = ReferenceEvaluator(model).run(None, {"x": volume, "grid": grid})[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(volume, grid)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_zeros_padding_keeps_an_inf_pixel_out(mode):
    """A tap outside the image is 0 even where the pixel it is clamped to
    is inf (a 0 weight would make it NaN); inside, inf stays inf."""
    x = np.array([[[[np.inf, 1.0], [2.0, 3.0]]]], np.float32)
    grid = np.array([[[[-3.0, -3.0], [0.0, 0.0], [3.0, 3.0]]]], np.float32)
    model = _model(list(x.shape), list(grid.shape), mode=mode)
    got = graphcompiler.compile(import_onnx(model), cache=False)(x, grid)
    np.testing.assert_array_equal(got, session(model).run(None, {"x": x, "grid": grid})[0])


def test_a_grid_that_does_not_fit_is_one_located_error():
    model = _model([1, 2, 5, 6], [1, 3, 3, 3])
    with pytest.raises(Exception, match="GridSample"):
        import_onnx(model)


@pytest.mark.parametrize(
    "size, align_corners",
    [([2, 3, 4, 5], 0), ([1, 1, 4, 1], 1), ([3, 2, 4, 5, 6], 1), ([2, 1, 1, 3, 2], 0),
     ([1, 1, 2, 1, 4], 1)],
)  # fmt: skip
def test_affine_grid_matches_onnxruntime(size, align_corners):
    """Batch 1 and a size-1 dim included (onnx's function body squeezes the
    batch dim away there: AffineGrid has a converter of its own). With
    align_corners, a size-1 dim's coordinate is onnxruntime's 1, not the
    reference's -1."""
    from onnx import numpy_helper

    rank = len(size) - 2
    theta = np.random.default_rng(5).standard_normal((size[0], rank, rank + 1)).astype(np.float32)
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align_corners)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("theta", TensorProto.FLOAT, theta.shape)],
        [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(size, np.int64), "size")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    (expected,) = session(model).run(None, {"theta": theta})
    got = graphcompiler.compile(model, cache=False)(theta)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
