"""The seed 004 examples: building, mutating and visiting Graph IR."""

import pytest

import graphcompiler
from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import (
    GraphBuilder,
    OpVisitor,
    print_graph,
    replace_input,
    replace_uses_with_and_remove,
    replace_with,
)


def make_graph():
    """The seed's make_graph: v2 = add(relu(v0), v1) on two 1024x1024 f32 inputs."""
    builder = GraphBuilder()
    in0 = builder.make_input([1024, 1024])
    in1 = builder.make_input([1024, 1024])
    relu = builder.make("relu", [in0])
    add = builder.make("add", [relu.result, in1])
    builder.make_output(add.result)
    return builder, (in0, in1), relu, add


SEED_GRAPH = """\
graph(v0: f32[1024, 1024], v1: f32[1024, 1024]) -> [v2: f32[1024, 1024]] {
  [v3: f32[1024, 1024]] = relu(v0)
  [v2: f32[1024, 1024]] = add(v3, v1)
}
"""


def test_build_relu_add_graph():
    builder, _, _, _ = make_graph()
    function = builder.function()
    assert print_graph(function) == SEED_GRAPH
    function.verify()
    text = str(builder.module())
    assert "%3 = graph.add %2, %1 : (tensor<1024x1024xf32>, tensor<1024x1024xf32>)" in text
    # The built module is ordinary MLIR text that parses back.
    assert str(graphcompiler.parse(text)) == text


def test_replace_input():
    builder, (in0, _), _, add = make_graph()
    replace_input(add, 1, in0)
    assert print_graph(builder.function()) == SEED_GRAPH.replace("add(v3, v1)", "add(v3, v0)")


def test_replace_uses_with_and_remove():
    builder, _, _, add = make_graph()
    function = builder.function()
    sub = builder.make("sub", list(add.operands))
    replace_uses_with_and_remove(add, sub)
    assert print_graph(function) == SEED_GRAPH.replace("add(v3, v1)", "sub(v3, v1)")
    function.verify()


def test_replace_with():
    builder, (in0, in1), _, add = make_graph()
    replace_input(add, 1, in0)
    replace_with(in0, in1)
    expected = SEED_GRAPH.replace("relu(v0)", "relu(v1)")
    assert print_graph(builder.function()) == expected


def test_make_infers_types_and_rejects_bad_inputs():
    builder = GraphBuilder()
    x = builder.make_input([4, 8])
    w = builder.make_input([16, 8])
    matmul = builder.make("matmul", [x, w], transpose_b=True)
    assert matmul.result.type.get_shape() == (4, 16)
    reduced = builder.make("reduce_sum", [matmul.result], axes=[1], keep_dims=True)
    assert reduced.result.type.get_shape() == (4, 1)
    constant = builder.make("constant", [], value=[[1.0, 2.0]])
    assert constant.result.type.get_shape() == (1, 2)
    with pytest.raises(ValueError, match="contracting dimension is 16, expected 8"):
        builder.make("matmul", [x, w])
    with pytest.raises(ValueError, match="unknown graph op 'rellu'; did you mean relu"):
        builder.make("rellu", [x])
    with pytest.raises(ValueError, match="needs its result type"):
        builder.make("reshape", [x])


def diamond():
    """a = relu(x); b = exp(a); c = tanh(a); d = add(b, c)."""
    builder = GraphBuilder()
    x = builder.make_input([8])
    a = builder.make("relu", [x])
    b = builder.make("exp", [a.result])
    c = builder.make("tanh", [a.result])
    d = builder.make("add", [b.result, c.result])
    builder.make_output(d.result)
    return builder.function()


def names(ops):
    return [op.name.removeprefix("graph.") for op in ops]


def test_dfs_order():
    assert names(OpVisitor.dfs().order(diamond())) == ["relu", "tanh", "add", "func.return", "exp"]


def test_bfs_order():
    assert names(OpVisitor.bfs().order(diamond())) == ["relu", "exp", "tanh", "add", "func.return"]


def test_dfs_topology_sort_order():
    order = names(OpVisitor.dfs_topology_sort().order(diamond()))
    assert order == ["relu", "tanh", "exp", "add", "func.return"]


def test_user_selector_chooses_among_ready_ops():
    def prefer_exp(visitor):
        ready = visitor.to_visit
        chosen = next((op for op in ready if isinstance(op, graph.ExpOp)), ready[0])
        ready.remove(chosen)
        return chosen

    order = names(OpVisitor.topology_sort(prefer_exp).order(diamond()))
    assert order == ["relu", "exp", "tanh", "add", "func.return"]
    # Every topological order puts an op after the ops it uses.
    function = diamond()
    seen = set()
    for op in OpVisitor.dfs_topology_sort().order(function):
        assert all(
            operand.owner in seen
            for operand in op.operands
            if operand.owner in function.body.block.ops
        )
        seen.add(op)
