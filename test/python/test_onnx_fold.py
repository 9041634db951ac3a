"""MaxPool's Indices output, MaxUnpool and Col2Im (frontends/onnx/ops_fold.py)
against onnxruntime on the same models: 1-D, 2-D and 3-D windows with
strides, dilations, pads, ceil_mode, ties (the first maximum wins) and
column-major indices; an unpool of the pool's own indices; Col2Im with
padding, strides and dilations (overlapping blocks add up)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx_node_model import node_model
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

F, I64 = TensorProto.FLOAT, TensorProto.INT64
rng = np.random.default_rng(23)


def _agrees_with_onnxruntime(model, *arrays, exact=True):
    runtime = session(model)
    names = [i.name for i in runtime.get_inputs()]
    expected = runtime.run(None, dict(zip(names, arrays, strict=True)))
    got = graphcompiler.compile(import_onnx(model), cache=False)(*arrays)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        if exact:
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


POOLS = [
    ([1, 2, 9, 11], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ([2, 3, 8, 8], dict(kernel_shape=[2, 3], strides=[2, 1], dilations=[2, 2])),
    ([1, 2, 7, 7], dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ([1, 2, 6, 5], dict(kernel_shape=[2, 2], storage_order=1, pads=[0, 1, 1, 0])),
    ([2, 3, 13], dict(kernel_shape=[4], strides=[3], pads=[1, 2])),
    ([1, 2, 4, 5, 6], dict(kernel_shape=[2, 2, 3], strides=[2, 1, 2])),
]


@pytest.mark.parametrize("shape, attributes", POOLS)
def test_max_pool_indices_are_onnxruntimes(shape, attributes):
    model = node_model(
        "MaxPool", [("x", F, shape)], [("y", F, None), ("i", I64, None)], **attributes
    )
    x = rng.integers(-3, 4, shape).astype(np.float32)  # many ties
    _agrees_with_onnxruntime(model, x)


def test_unpool_of_the_pools_indices():
    pool = onnx.helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])
    unpool = onnx.helper.make_node(
        "MaxUnpool", ["y", "i"], ["z"], kernel_shape=[2, 2], strides=[2, 2]
    )
    rows = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(
        [pool, unpool], "g", [rows("x", F, [2, 3, 6, 8])], [rows("z", F, [2, 3, 6, 8])]
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])
    x = rng.standard_normal([2, 3, 6, 8]).astype(np.float32)
    _agrees_with_onnxruntime(model, x)


def test_unpool_into_a_larger_output_shape():
    """The unpooled values sit at the start of output_shape (onnx's reference)."""
    shape = onnx.numpy_helper.from_array(np.array([1, 1, 5, 5], np.int64), "shape")
    model = node_model(
        "MaxUnpool", [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])], [("z", F, None)],
        [shape], kernel_shape=[2, 2], strides=[2, 2],
    )  # fmt: skip
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32)
    i = np.array([[[[5, 3], [8, 15]]]], np.int64)
    got = graphcompiler.compile(import_onnx(model), cache=False)(x, i)
    unpooled = np.zeros(16, np.float32)
    unpooled[[5, 3, 8, 15]] = [1, 2, 3, 4]
    expected = np.zeros([1, 1, 5, 5], np.float32)
    expected[0, 0, :4, :4] = unpooled.reshape(4, 4)
    np.testing.assert_array_equal(got, expected)


COL2IM = [
    ([5, 5], [2, 2], {}),
    ([6, 7], [3, 2], dict(strides=[2, 1], pads=[1, 0, 1, 1], dilations=[1, 2])),
    ([4, 4], [3, 3], dict(pads=[1, 1, 1, 1])),
]


@pytest.mark.parametrize("image, block, attributes", COL2IM)
def test_col2im_is_onnxruntimes(image, block, attributes):
    pads = attributes.get("pads", [0] * 4)
    strides, dilations = attributes.get("strides", [1, 1]), attributes.get("dilations", [1, 1])
    counts = [
        (size + pads[d] + pads[2 + d] - dilations[d] * (k - 1) - 1) // strides[d] + 1
        for d, (size, k) in enumerate(zip(image, block, strict=True))
    ]
    shape = [2, 3 * int(np.prod(block)), int(np.prod(counts))]
    constants = [
        onnx.numpy_helper.from_array(np.array(image, np.int64), "image"),
        onnx.numpy_helper.from_array(np.array(block, np.int64), "block"),
    ]
    model = node_model("Col2Im", [("x", F, shape)], [("y", F, None)], constants, **attributes)
    x = rng.standard_normal(shape).astype(np.float32)
    _agrees_with_onnxruntime(model, x, exact=False)


def test_col2im_of_the_wrong_column_count_is_one_located_error():
    constants = [
        onnx.numpy_helper.from_array(np.array([5, 5], np.int64), "image"),
        onnx.numpy_helper.from_array(np.array([2, 2], np.int64), "block"),
    ]
    model = node_model("Col2Im", [("x", F, [1, 8, 15])], [("y", F, None)], constants)
    with pytest.raises(OnnxImportError, match=r"Col2Im.*give 16 columns"):
        import_onnx(model)


def test_column_major_indices_of_a_1d_pool_are_one_located_error():
    model = node_model(
        "MaxPool", [("x", F, [1, 1, 8])], [("y", F, None), ("i", I64, None)],
        kernel_shape=[2], storage_order=1,
    )  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"\(MaxPool\): attribute 'storage_order'"):
        import_onnx(model)
