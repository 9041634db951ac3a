"""graph-constant-fold carries folded values from op to op: only a value
that an op left to run reads becomes a `graph.constant` (a quantized
model's reduce_sum(cast(weight)) made the whole widened weight one)."""

from __future__ import annotations

import numpy as np

import graphcompiler
from graphcompiler.dialects import graph
from graphcompiler.interpreters import reference

WEIGHT = "dense<[[1, -2, 3], [4, 5, -6]]> : tensor<2x3xi8>"


def _module(shared: bool):
    """x (i32) + the column sums of a widened i8 weight; `shared`: x also
    multiplies the widened weight, so an op left to run reads it."""
    scaled = (
        "  %s = graph.mul %x, %wide : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>\n"
        if shared
        else ""
    )
    result = "%s" if shared else "%x"
    return graphcompiler.parse(
        "func.func @main(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {\n"
        f"  %w = graph.constant {WEIGHT}\n"
        "  %wide = graph.cast %w : tensor<2x3xi8> -> tensor<2x3xi32>\n"
        "  %sums = graph.reduce_sum %wide {axes = array<i64: 0>} : tensor<2x3xi32> -> tensor<3xi32>\n"
        f"{scaled}"
        f"  %y = graph.add {result}, %sums : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
        "  func.return %y : tensor<2x3xi32>\n"
        "}"
    )


def _fold_counting_constants(module, monkeypatch) -> int:
    made = []
    build = graph.ConstantOp.build_from

    def counted(*args, **kwargs):
        made.append(build(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(graph.ConstantOp, "build_from", counted)
    graphcompiler.apply_pipeline(module, "builtin.module(graph-constant-fold)")
    monkeypatch.undo()
    return len(made)


def test_a_value_only_folded_ops_read_is_not_made_a_constant(monkeypatch):
    module = _module(shared=False)
    assert _fold_counting_constants(module, monkeypatch) == 1  # the sums, not the widened weight
    text = str(module)
    assert "graph.cast" not in text and "graph.reduce_sum" not in text
    assert "dense<[5, 3, -3]>" in text
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(reference.run(module, x), x + [5, 3, -3])


def test_a_value_an_op_left_to_run_reads_is_a_constant(monkeypatch):
    module = _module(shared=True)
    assert _fold_counting_constants(module, monkeypatch) == 2  # the widened weight and the sums
    assert "graph.mul" in str(module) and "graph.cast" not in str(module)
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    weight = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    expected = x * weight + weight.sum(axis=0)
    np.testing.assert_array_equal(reference.run(module, x), expected)
    np.testing.assert_array_equal(graphcompiler.compile(_module(shared=True))(x), expected)
