"""TfIdfVectorizer on integer tokens (frontends/onnx/ops_text.py) against
onnx's reference evaluator: every mode, with and without weights, unigrams
and skip-bigrams, a batch and a single row, n-grams sharing an output column."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

POOL = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]  # unigrams 2, 3, 5, 4; bigrams (5, 6), (7, 8), (6, 7)


def _model(shape, element=TensorProto.INT32, columns=(0, 1, 2, 3, 4, 5, 1), **attributes):
    """The last bigram shares column 1 with a unigram (unless `columns` says otherwise)."""
    node = helper.make_node(
        "TfIdfVectorizer", ["x"], ["y"],
        ngram_counts=[0, 4], ngram_indexes=list(columns), pool_int64s=POOL, **attributes,
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", element, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weights", [None, [0.5, 2.0, 1.5, 3.0, 0.25, 4.0]])
@pytest.mark.parametrize(("grams", "skips"), [((1, 1), 0), ((2, 2), 0), ((1, 2), 3)])
@pytest.mark.parametrize("shape", [[12], [3, 8]])
def test_tfidf_vectorizer_matches_onnx_reference(mode, weights, grams, skips, shape):
    """The counts against onnx's reference (mode TF), weighed as it does:
    IDF gives a column's weight (1 without) where it counts, TFIDF the
    weight times the count (its evaluator fails without weights)."""
    attributes = dict(min_gram_length=grams[0], max_gram_length=grams[1], max_skip_count=skips)
    x = np.random.default_rng(sum(shape) + skips).integers(2, 9, size=shape).astype(np.int32)
    x.reshape(-1)[:8] = [5, 6, 7, 6, 7, 8, 5, 5]  # bigrams and unigrams of the pool, twice
    (counts,) = ReferenceEvaluator(_model(shape, mode="TF", **attributes)).run(None, {"x": x})
    w = np.asarray(weights if weights else np.ones(counts.shape[-1]), np.float32)
    expected = {"TF": counts, "IDF": np.where(counts > 0, w, 0), "TFIDF": counts * w}[mode]
    model = _model(shape, mode=mode, **attributes, **({"weights": weights} if weights else {}))
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(got, expected.astype(np.float32))
    assert counts.any() and counts.max() > 1


def test_one_ngram_per_column_in_any_order():
    """Columns permuted, one left empty: the counts are gathered, not summed."""
    columns = (6, 0, 3, 1, 7, 2, 5)
    model = _model([2, 8], columns=columns, mode="TF", min_gram_length=1, max_gram_length=2,
                   max_skip_count=1)  # fmt: skip
    x = np.array([[5, 6, 7, 6, 7, 8, 2, 3], [2, 2, 5, 4, 6, 7, 8, 8]], np.int32)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(got, expected)
    assert expected.shape == (2, 8) and not expected[:, 4].any()


@pytest.mark.parametrize(
    ("pool", "columns", "message"),
    [
        (dict(pool_strings=["a"]), [0], "pool_strings.*string tokens"),
        (dict(pool_int64s=[7, 7]), [0, 1], r"n-gram \[7\] twice"),  # as onnxruntime refuses it
    ],
)
def test_bad_pools_are_one_error_line(pool, columns, message):
    node = helper.make_node(
        "TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1,
        max_skip_count=0, ngram_counts=[0], ngram_indexes=columns, **pool,
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    with pytest.raises(OnnxImportError, match=message) as error:
        import_onnx(model)
    assert "\n" not in str(error.value)
