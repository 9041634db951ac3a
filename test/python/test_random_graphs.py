"""Property test: random graphs compiled with the default pipeline (every graph
optimization, lowering, JIT) compute what the reference interpreter computes.

Graphs mix element-wise ops (with broadcasting and constants, so constant
folding and fusion have work), matmuls (so epilogue fusion and matmul merging
do), reductions, reshapes, transposes and softmax; several outputs sometimes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.ir import SSAValue

import graphcompiler
from graphcompiler import reference
from graphcompiler.dialects.graph_api import GraphBuilder, tensor_type
from graphcompiler.passes import GRAPH_PASSES, LLVM_STAGE, TIR_STAGE

UNARY = ["relu", "sigmoid", "tanh", "neg", "abs", "square", "gelu", "leaky_relu", "exp"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]
REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]
DIM = st.integers(1, 7)


@dataclass
class RandomGraph:
    """A graph under construction, with the arrays its inputs will be fed."""

    builder: GraphBuilder = field(default_factory=GraphBuilder)
    values: list[SSAValue] = field(default_factory=list)
    arrays: list[np.ndarray] = field(default_factory=list)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    def input(self, shape: list[int]) -> SSAValue:
        self.arrays.append(self.rng.uniform(-1, 1, shape).astype(np.float32))
        return self.builder.make_input(shape)

    def constant(self, shape: list[int]) -> SSAValue:
        value = self.rng.uniform(-1, 1, shape).astype(np.float32)
        return self.builder.make("constant", [], tensor_type(shape), value=value).results[0]

    def make(self, op_name: str, inputs: list[SSAValue], result_type=None, **params) -> SSAValue:
        value = self.builder.make(op_name, inputs, result_type, **params).results[0]
        self.values.append(value)
        return value


def _shape(value: SSAValue) -> list[int]:
    return list(value.type.get_shape())


@st.composite
def operands_like(draw, graph: RandomGraph, shape: list[int]) -> SSAValue:
    """A second operand for a binary op on `shape`: an existing value of that
    shape, a fresh input, a constant, or a row to broadcast."""
    same_shape = [v for v in graph.values if _shape(v) == shape]
    kind = draw(st.sampled_from(["existing", "input", "constant", "row"]))
    if kind == "existing" and same_shape:
        return draw(st.sampled_from(same_shape))
    if kind == "constant":
        return graph.constant(shape)
    if kind == "row":
        return graph.constant(shape[-1:])
    return graph.input(shape)


@st.composite
def add_random_op(draw, graph: RandomGraph) -> None:
    value = draw(st.sampled_from(graph.values))
    shape = _shape(value)
    kind = draw(
        st.sampled_from(
            ["unary", "binary", "binary", "matmul", "reduce", "reshape", "transpose", "softmax"]
        )
    )
    if kind == "unary":
        op_name = draw(st.sampled_from(UNARY))
        if op_name == "exp":  # bounded argument keeps exp finite
            value = graph.make("tanh", [value])
        graph.make(op_name, [value])
    elif kind == "binary":
        graph.make(draw(st.sampled_from(BINARY)), [value, draw(operands_like(graph, shape))])
    elif kind == "matmul" and len(shape) == 2:
        weight_shape = [shape[1], draw(DIM)]
        use_constant = draw(st.booleans())
        weight = graph.constant(weight_shape) if use_constant else graph.input(weight_shape)
        graph.make("matmul", [value, weight])
    elif kind == "reduce" and len(shape) >= 1:
        axis = draw(st.integers(0, len(shape) - 1))
        keep_dims = draw(st.booleans()) or len(shape) == 1
        graph.make(draw(st.sampled_from(REDUCTIONS)), [value], axes=[axis], keep_dims=keep_dims)
    elif kind == "reshape":
        size = int(np.prod(shape))
        divisors = [d for d in range(1, size + 1) if size % d == 0]
        inner = draw(st.sampled_from(divisors))
        graph.make("reshape", [value], tensor_type([size // inner, inner]))
    elif kind == "transpose" and len(shape) == 2:
        graph.make("transpose", [value], perm=[1, 0])
    elif kind == "softmax":
        graph.make("softmax", [value], axis=len(shape) - 1)
    else:
        graph.make("relu", [value])


@st.composite
def random_graphs(draw) -> RandomGraph:
    graph = RandomGraph(rng=np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
    shape = [draw(DIM), draw(DIM)]
    graph.values.append(graph.input(shape))
    for _ in range(draw(st.integers(1, 8))):
        draw(add_random_op(graph))
    graph.builder.make_output(graph.values[-1])
    extra_output = draw(st.sampled_from(graph.values[1:-1] or [None]))
    if extra_output is not None:
        graph.builder.make_output(extra_output)
    return graph


def _assert_close(got: np.ndarray, want: np.ndarray, message: str = "") -> None:
    """float32 agreement up to summation order: the tolerance scales with the
    largest magnitude, as a reordered sum's error does."""
    scale = float(np.abs(want).max(initial=0.0)) + 1.0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=message)


def _as_tuple(results) -> tuple:
    return results if isinstance(results, tuple) else (results,)


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(random_graphs())
def test_default_pipeline_matches_reference(graph: RandomGraph):
    text = str(graph.builder.module())
    expected = _as_tuple(reference.run(text, *graph.arrays))
    compiled = graphcompiler.compile(text)
    actual = _as_tuple(compiled(*graph.arrays))
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        _assert_close(got, want, text)


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The examples with a @main graph small enough to interpret quickly.
GRAPH_EXAMPLES = ["attention.mlir", "cnn.mlir", "mlp.mlir", "transformer.mlir"]


@pytest.mark.parametrize("example", GRAPH_EXAMPLES)
@pytest.mark.parametrize("pass_name", GRAPH_PASSES)
def test_each_graph_pass_keeps_examples_equal_to_reference(pass_name, example):
    """Each graph pass alone, then lowering, keeps an example's results."""
    text = (EXAMPLES / example).read_text()
    function = next(op for op in graphcompiler.parse(text).ops if op.sym_name.data == "main")
    rng = np.random.default_rng(1)
    arrays = [
        rng.uniform(-1, 1, arg.type.get_shape()).astype(np.float32)
        for arg in function.body.block.args
    ]
    expected = _as_tuple(reference.run(text, *arrays))
    pipeline = f"builtin.module({pass_name},{TIR_STAGE},{LLVM_STAGE})"
    actual = _as_tuple(graphcompiler.compile(text, pipeline=pipeline)(*arrays))
    for got, want in zip(actual, expected, strict=True):
        _assert_close(got, want)
