"""ai.onnx.ml ops (frontends/onnx/ops_ml.py) in a model of that domain
only: TreeEnsemble against onnxruntime on random forests (every
comparison mode, set membership, missing values, every aggregate, trees
that are one leaf, the post transforms), Binarizer and ArrayFeatureExtractor."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

ML = "ai.onnx.ml"


def _model(node, x_shape, element=TensorProto.FLOAT, extra_inputs=()):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", element, x_shape), *extra_inputs],
        [helper.make_tensor_value_info("y", element, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 5)])


def _forest(rng, trees, features, targets, modes):
    """Random trees in DFS order (true branch first): nodes_* and leaf_* attributes."""
    a = {k: [] for k in ("featureids", "splits", "modes", "truenodeids", "trueleafs",
                         "falsenodeids", "falseleafs", "missing")}  # fmt: skip
    leaf_weights, leaf_targets, roots, members = [], [], [], []

    def grow(depth):
        if depth == 0 or rng.random() < 0.2:
            leaf_weights.append(float(rng.normal()))
            leaf_targets.append(int(rng.integers(targets)))
            return len(leaf_weights) - 1, 1
        index = len(a["modes"])
        mode = int(rng.choice(modes))
        for key, value in (("featureids", int(rng.integers(features))),
                           ("splits", float(rng.integers(-2, 3))), ("modes", mode),
                           ("missing", int(rng.integers(2)))):  # fmt: skip
            a[key].append(value)
        for key in ("truenodeids", "trueleafs", "falsenodeids", "falseleafs"):
            a[key].append(0)
        if mode == 6:
            members.extend([*rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], 2, replace=False), np.nan])
        a["truenodeids"][index], a["trueleafs"][index] = grow(depth - 1)
        a["falsenodeids"][index], a["falseleafs"][index] = grow(depth - 1)
        return index, 0

    for _ in range(trees):
        root, is_leaf = grow(4)
        if is_leaf:  # a tree that is one leaf: a node whose branches both lead to it
            grow_leaf = root
            a["featureids"].append(0), a["splits"].append(0.0), a["modes"].append(0)
            a["missing"].append(0)
            a["truenodeids"].append(grow_leaf), a["trueleafs"].append(1)
            a["falsenodeids"].append(grow_leaf), a["falseleafs"].append(1)
            root = len(a["modes"]) - 1
        roots.append(root)
    tensor = numpy_helper.from_array
    attributes = dict(
        nodes_featureids=a["featureids"], nodes_truenodeids=a["truenodeids"],
        nodes_trueleafs=a["trueleafs"], nodes_falsenodeids=a["falsenodeids"],
        nodes_falseleafs=a["falseleafs"], nodes_missing_value_tracks_true=a["missing"],
        nodes_splits=tensor(np.asarray(a["splits"], np.float32)),
        nodes_modes=tensor(np.asarray(a["modes"], np.uint8)),
        leaf_weights=tensor(np.asarray(leaf_weights, np.float32)), leaf_targetids=leaf_targets,
        tree_roots=roots, n_targets=targets,
    )  # fmt: skip
    if members:
        attributes["membership_values"] = tensor(np.asarray(members, np.float32))
    return attributes


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("modes", [[0], [1, 3], [0, 1, 2, 3, 4, 5], [0, 6]])
def test_tree_ensemble_matches_onnx_reference(aggregate, modes):
    rng = np.random.default_rng(aggregate * 10 + len(modes))
    attributes = _forest(rng, trees=5, features=4, targets=3, modes=modes)
    node = helper.make_node(
        "TreeEnsemble", ["x"], ["y"], domain=ML, aggregate_function=aggregate, **attributes
    )
    x = rng.integers(-2, 3, size=(16, 4)).astype(np.float32)  # on the splits too
    x[rng.random(x.shape) < 0.1] = np.nan  # missing values
    model = _model(node, [16, 4])
    (expected,) = session(model).run(None, {"x": x})
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("transform", "apply"), [
    (1, lambda y: np.exp(y) / np.exp(y).sum(-1, keepdims=True)),
    (2, lambda y: 1 / (1 + np.exp(-y))),
])  # fmt: skip
def test_tree_ensemble_post_transforms(transform, apply):
    """The raw sums (onnxruntime's), transformed here."""
    rng = np.random.default_rng(3)
    attributes = _forest(rng, trees=3, features=2, targets=4, modes=[0])
    raw = helper.make_node("TreeEnsemble", ["x"], ["y"], domain=ML, **attributes)
    node = helper.make_node(
        "TreeEnsemble", ["x"], ["y"], domain=ML, post_transform=transform, **attributes
    )
    x = rng.normal(size=(8, 2)).astype(np.float32)
    (summed,) = session(_model(raw, [8, 2])).run(None, {"x": x})
    got = graphcompiler.compile(import_onnx(_model(node, [8, 2])), cache=False)(x)
    np.testing.assert_allclose(got, apply(summed.astype(np.float64)), rtol=1e-5)


def test_a_tree_ensemble_reading_a_missing_feature_is_one_error_line():
    attributes = _forest(np.random.default_rng(0), trees=1, features=9, targets=1, modes=[0])
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain=ML, **attributes)
    with pytest.raises(OnnxImportError, match="feature the input does not have") as error:
        import_onnx(_model(node, [2, 1]))
    assert "\n" not in str(error.value)


def test_binarizer_and_array_feature_extractor():
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, 1.5]], np.float32)
    node = helper.make_node("Binarizer", ["x"], ["y"], domain=ML, threshold=1.0)
    got = graphcompiler.compile(import_onnx(_model(node, [2, 3])), cache=False)(x)
    np.testing.assert_array_equal(got, (x > 1.0).astype(np.float32))
    index = helper.make_tensor_value_info("i", TensorProto.INT64, [2])
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ML)
    compiled = graphcompiler.compile(
        import_onnx(_model(node, [2, 3], extra_inputs=[index])), cache=False
    )
    np.testing.assert_array_equal(compiled(x, np.array([2, 0], np.int64)), x[:, [2, 0]])
