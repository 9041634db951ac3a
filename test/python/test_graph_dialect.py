"""Graph dialect pieces not covered by the lit tests: format arithmetic and
result-type inference called directly, as the builder and lowering do."""

import pytest
from xdsl.dialects.builtin import StringAttr, TensorType, f32, i1
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects import graph


def test_blocked_format_shapes():
    weight_format = graph.FormatAttr(StringAttr("KN"), StringAttr("NK16k16n"))
    assert weight_format.blocks() == {0: [16], 1: [16]}
    assert weight_format.physical_shape([64, 32]) == [2, 4, 16, 16]
    nchw16c = graph.FormatAttr(StringAttr("ABCD"), StringAttr("ABCD16b"))
    assert nchw16c.physical_shape([1, 32, 7, 7]) == [1, 2, 7, 7, 16]
    nested = graph.FormatAttr(StringAttr("AB"), StringAttr("AB16a4a"))
    assert nested.blocks() == {0: [16, 4], 1: []}
    assert nested.physical_shape([128, 3]) == [2, 3, 16, 4]


@pytest.mark.parametrize(
    "plain, layout, message",
    [
        ("AB", "A16a", "must name each of the dimensions 'AB' once"),
        ("AB", "AB16c", "blocks unknown dimension 'c'"),
        ("AA", "AA", "must be distinct uppercase letters"),
        ("AB", "AB16", "ends with a block size"),
        ("AB", "ABa", "expected an outer dimension"),
    ],
)
def test_bad_formats(plain, layout, message):
    with pytest.raises(VerifyException, match=message):
        graph.FormatAttr(StringAttr(plain), StringAttr(layout))


def test_infer_type_is_usable_without_an_op():
    a, b = TensorType(f32, [4, 1, 8]), TensorType(f32, [3, 1])
    assert graph.AddOp.infer_type([a, b], {}) == TensorType(f32, [4, 3, 8])
    assert graph.LessOp.infer_type([a, b], {}) == TensorType(i1, [4, 3, 8])
    properties = graph.ReduceSumOp.with_defaults({"axes": graph.i64_array([0, 2])})
    assert graph.ReduceSumOp.infer_type([a], properties) == TensorType(f32, [1])


def test_every_op_is_registered_by_name():
    assert len(graph.GRAPH_OPS) == 91
    assert set(graph.OPS_BY_NAME) >= {
        "relu",
        "matmul",
        "conv2d",
        "blocked_conv2d",
        "to_blocked",
        "layer_norm",
        "slice",
        "attention",
    }
    assert all(op.name == f"graph.{name}" for name, op in graph.OPS_BY_NAME.items())
