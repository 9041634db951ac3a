"""DeformConv and RoiAlign (frontends/onnx/ops_deform.py) against
onnxruntime on the same models: offsets that move taps off the image,
groups and offset groups, strides, dilations, pads, a mask and a bias;
regions partly or wholly outside the image, both coordinate modes, avg
and max; the adaptive sampling ratio refused by name."""

import numpy as np
import pytest
from onnx import TensorProto
from onnx_node_model import node_model
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

F, I64 = TensorProto.FLOAT, TensorProto.INT64
rng = np.random.default_rng(31)


def _agrees_with_onnxruntime(model, *arrays):
    runtime = session(model)
    names = [i.name for i in runtime.get_inputs()]
    expected = runtime.run(None, dict(zip(names, arrays, strict=True)))[0]
    got = graphcompiler.compile(import_onnx(model), cache=False)(*arrays)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


DEFORMS = [
    # x shape, weight shape, attributes, with mask, with bias
    ([1, 2, 5, 5], [3, 2, 3, 3], {}, False, False),
    ([2, 4, 7, 6], [4, 2, 3, 3], dict(group=2, offset_group=2, pads=[1, 1, 1, 1]), True, True),
    (
        [1, 3, 9, 8],
        [2, 3, 2, 3],
        dict(strides=[2, 1], dilations=[1, 2], pads=[0, 1, 1, 0]),
        True,
        False,
    ),
]


@pytest.mark.parametrize("x_shape, w_shape, attributes, masked, biased", DEFORMS)
def test_deform_conv_is_onnxruntimes(x_shape, w_shape, attributes, masked, biased):
    n, _, height, width = x_shape
    kernel = w_shape[2:]
    strides = attributes.get("strides", [1, 1])
    dilations = attributes.get("dilations", [1, 1])
    pads = attributes.get("pads", [0, 0, 0, 0])
    out = [
        (size + pads[d] + pads[d + 2] - dilations[d] * (kernel[d] - 1) - 1) // strides[d] + 1
        for d, size in enumerate((height, width))
    ]
    groups = attributes.get("offset_group", 1) * int(np.prod(kernel))
    inputs = [("x", F, x_shape), ("w", F, w_shape), ("offset", F, [n, groups * 2, *out])]
    arrays = [rng.standard_normal(s).astype(np.float32) for _, _, s in inputs]
    arrays[2] *= 2.5  # some taps land between pixels, some off the image
    names = ["x", "w", "offset", "b" if biased else "", "mask" if masked else ""]
    if biased:
        inputs.append(("b", F, [w_shape[0]]))
        arrays.append(rng.standard_normal(w_shape[0]).astype(np.float32))
    if masked:
        inputs.append(("mask", F, [n, groups, *out]))
        arrays.append(rng.uniform(0, 1, [n, groups, *out]).astype(np.float32))
    while names[-1] == "":
        names.pop()
    model = node_model(
        "DeformConv", inputs, [("y", F, None)], opset=19, input_names=names,
        kernel_shape=kernel, **attributes,
    )  # fmt: skip
    _agrees_with_onnxruntime(model, *arrays)


ROI_ALIGNS = [
    dict(mode="avg", coordinate_transformation_mode="half_pixel"),
    dict(mode="max", coordinate_transformation_mode="half_pixel"),
    dict(mode="avg", coordinate_transformation_mode="output_half_pixel", spatial_scale=0.5),
]


@pytest.mark.parametrize("attributes", ROI_ALIGNS)
def test_roi_align_is_onnxruntimes(attributes):
    rois = np.array(
        [[0.0, 0.0, 9.0, 9.0], [2.5, 1.0, 6.0, 7.5], [-3.0, 6.0, 14.0, 13.0], [5.0, 5.0, 5.0, 5.0]],
        np.float32,
    )
    model = node_model(
        "RoiAlign",
        [("x", F, [2, 3, 10, 11]), ("rois", F, [4, 4]), ("batch", I64, [4])],
        [("y", F, None)],
        opset=16, output_height=3, output_width=4, sampling_ratio=2, **attributes,
    )  # fmt: skip
    x = rng.standard_normal([2, 3, 10, 11]).astype(np.float32)
    _agrees_with_onnxruntime(model, x, rois, np.array([0, 1, 1, 0], np.int64))


def test_adaptive_roi_sampling_is_one_located_error():
    model = node_model(
        "RoiAlign",
        [("x", F, [1, 1, 8, 8]), ("rois", F, [2, 4]), ("batch", I64, [2])],
        [("y", F, None)],
        opset=16,
    )
    model.graph.node[0].name = "roi"
    with pytest.raises(
        OnnxImportError, match=r"node 'roi' \(RoiAlign\): attribute 'sampling_ratio'"
    ):
        import_onnx(model)


def test_an_offset_of_the_wrong_shape_is_one_located_error():
    model = node_model(
        "DeformConv",
        [("x", F, [1, 1, 5, 5]), ("w", F, [1, 1, 3, 3]), ("offset", F, [1, 9, 3, 3])],
        [("y", F, None)],
        opset=19,
    )
    with pytest.raises(OnnxImportError, match=r"DeformConv.*offset \[1, 18, 3, 3\] expected"):
        import_onnx(model)
