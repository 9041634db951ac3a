"""The Python API a numpy / onnxruntime / PyTorch user reaches for: inputs
by name, read-only inputs, the dtype policy (strict by default,
`cast_inputs=True` converts within a kind), the signature, plugins and a
registry, the graph as DOT, and located error text."""

from pathlib import Path

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver.registration import default_registry
from graphcompiler.ir.diagnostics import DiagnosticError
from graphcompiler.ir.pipeline import PipelineError

TOY_PLUGIN = str(Path(__file__).resolve().parents[1] / "plugins" / "toy_plugin.py")

RELU_ADD = """func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = graph.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = graph.relu %0 : tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}
"""
X = np.linspace(-2.0, 2.0, 32, dtype=np.float32).reshape(4, 8)
B = np.arange(8, dtype=np.float32) - 4.0
EXPECTED = np.maximum(X + B, 0)


@pytest.fixture(scope="module")
def compiled():
    return graphcompiler.compile(RELU_ADD)


def test_inputs_by_name_in_any_order(compiled):
    np.testing.assert_array_equal(compiled(b=B, x=X), EXPECTED)
    np.testing.assert_array_equal(compiled(X, b=B), EXPECTED)


def test_inputs_by_name_go_straight_to_the_machine_code(monkeypatch):
    """Named inputs (onnxruntime's feeds) take the direct call as positional
    ones do, not the general path that converts and explains (260 us of a
    small model's 370 us call)."""
    direct = graphcompiler.compile(RELU_ADD, cache=False)
    monkeypatch.setattr(type(direct), "bind_inputs", lambda *_: pytest.fail("general path"))
    np.testing.assert_array_equal(direct(b=B, x=X), EXPECTED)
    np.testing.assert_array_equal(direct(X, b=B), EXPECTED)


@pytest.mark.parametrize(
    ("positional", "named", "message"),
    [
        ((), {"x": X, "y": B}, "@main has no input 'y' (inputs: x, b)"),
        ((X,), {"x": X}, "input 'x' is given both by position and by name"),
        ((), {"b": B}, "@main is missing inputs: x"),
    ],
)
def test_named_input_errors(compiled, positional, named, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compiled(*positional, **named)


def test_read_only_inputs_are_used_in_place(compiled):
    x, b = X.copy(), B.copy()
    x.setflags(write=False)
    b.setflags(write=False)
    np.testing.assert_array_equal(compiled(x, b), EXPECTED)


def test_default_dtype_policy_is_strict(compiled):
    with pytest.raises(ValueError, match="has dtype float64, expected float32"):
        compiled(X.astype(np.float64), B)


def test_cast_inputs_converts_within_a_kind():
    cast = graphcompiler.compile(RELU_ADD, cast_inputs=True)
    np.testing.assert_array_equal(cast(X.astype(np.float64), B.tolist()), EXPECTED)
    np.testing.assert_array_equal(cast(x=X, b=np.arange(8) - 4), EXPECTED)  # int -> float
    integers = graphcompiler.compile(RELU_ADD.replace("f32", "i32"), cast_inputs=True)
    with pytest.raises(ValueError, match="float64, which does not convert to int32"):
        integers(X.astype(np.float64), np.zeros(8, np.int64))


def test_signature_names_shapes_and_types(compiled):
    assert str(compiled.signature) == (
        "main(x: tensor<4x8xf32>, b: tensor<8xf32>) -> (tensor<4x8xf32>)"
    )
    assert compiled.input_names == ["x", "b"]


def test_graph_dot(compiled):
    dot = compiled.graph_dot()
    assert dot.startswith("digraph G {")
    assert "graph.add" in dot and "graph.relu" in dot and 'label = "tensor<8xf32>\\l"' in dot


def test_plugins_reach_compile():
    pipeline = "builtin.module(toy-scale-constants,gc-cpu-pipeline)"
    with pytest.raises(PipelineError, match="unknown pass or pipeline 'toy-scale-constants'"):
        graphcompiler.compile(RELU_ADD, pipeline=pipeline)
    with_plugin = graphcompiler.compile(RELU_ADD, pipeline=pipeline, plugins=[TOY_PLUGIN])
    np.testing.assert_array_equal(with_plugin(X, B), EXPECTED)


def test_custom_pipeline_must_end_in_llvm():
    with pytest.raises(ValueError, match="must end in the llvm dialect.*end it with tir-to-llvm"):
        graphcompiler.compile(RELU_ADD, pipeline="builtin.module(convert-graph-to-tir)")


def test_verify_each_off_skips_the_verifier_between_passes():
    registry = default_registry()
    registry.load_plugin(TOY_PLUGIN)
    text = "func.func @f() -> i64 {\n  %0 = toy.constant 2\n  func.return %0 : i64\n}\n"
    pipeline = "builtin.module(toy-scale-constants{factor=500})"
    with pytest.raises(DiagnosticError, match="must be below 1000"):
        graphcompiler.apply_pipeline(
            graphcompiler.parse(text, registry=registry), pipeline, registry=registry
        )
    module = graphcompiler.parse(text, registry=registry)
    graphcompiler.apply_pipeline(module, pipeline, registry=registry, verify_each=False)
    assert "toy.constant 1000" in str(module)


def test_diagnostic_error_text_is_located():
    with pytest.raises(DiagnosticError) as error:
        graphcompiler.parse("func.func @f() {\n  %0 = graph.rleu\n}\n", filename="bad.mlir")
    assert str(error.value).startswith(
        "bad.mlir:2:8: error: Operation graph.rleu is not registered; did you mean 'graph.relu'"
    )


@pytest.mark.parametrize("name", ["é", "a b", "模型"])
def test_an_entry_of_any_symbol_name_runs(name, tmp_path):
    """MLIR symbols are any string: the machine code is found by its UTF-8
    name (llvmlite's lookup encoded it as ASCII: a fuzzed `@é` raised
    UnicodeEncodeError), in process, from the cache and from an artifact."""
    text = RELU_ADD.replace("@main", f'@"{name}"')
    for hit in (False, True):  # compiled, then loaded from the cache
        compiled = graphcompiler.compile(text, entry=name, cache=tmp_path)
        assert compiled.cache_hit == hit
        np.testing.assert_array_equal(compiled(X, B), EXPECTED)
    compiled.save(tmp_path / "model.so")
    np.testing.assert_array_equal(graphcompiler.runtime.load(tmp_path / "model.so")(X, B), EXPECTED)
