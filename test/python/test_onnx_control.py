"""ONNX If, Scan and Loop (frontends/onnx/ops_control.py): the branch a known condition picks is inlined; a condition that is a graph
input (optimum's merged decoders' `use_cache_branch`) makes
`graphcompiler.compile(path)` specialize on its value, static dims or
symbolic; nested Ifs, a branch's own initializers, and a branch's constant
output feeding a Reshape's shape. Scan is a graph.loop over its body
(any scan axis and direction, an If nested in the body), and so is a Loop
of a known count (its iteration number a sequence); both against numpy.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import graphcompiler
from graphcompiler.frontends.onnx import NeedsConstantInput, OnnxImportError, import_onnx

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def _branch(name, nodes, output, shape, initializers=(), element=F):
    return helper.make_graph(
        nodes, name, [], [helper.make_tensor_value_info(output, element, shape)], list(initializers)
    )


def _if_model(dims, condition_input=True, condition=True):
    """y = If(c): then 2x (+ a branch initializer), else -x."""
    two = onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two")
    then = _branch("then", [helper.make_node("Mul", ["x", "two"], ["t"])], "t", dims, [two])
    other = _branch("else", [helper.make_node("Neg", ["x"], ["e"])], "e", dims)
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    inputs = [helper.make_tensor_value_info("x", F, dims)]
    initializers = []
    if condition_input:
        inputs.append(helper.make_tensor_value_info("c", B, [1]))
    else:
        initializers.append(onnx.numpy_helper.from_array(np.array([condition]), "c"))
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info("y", F, dims)], initializers
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("condition", [True, False])
def test_a_constant_condition_inlines_its_branch(condition):
    module = import_onnx(_if_model([2, 3], condition_input=False, condition=condition))
    text = str(module)
    assert ("graph.mul" in text) == condition and ("graph.neg" in text) != condition
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = graphcompiler.compile(module, cache=False)(x)
    np.testing.assert_array_equal(got, 2 * x if condition else -x)


@pytest.mark.parametrize("dims", [[2, 3], ["n", 3]])
def test_a_condition_input_is_specialized_on_its_value(tmp_path, dims):
    path = tmp_path / "if.onnx"
    onnx.save(_if_model(dims), path)
    compiled = graphcompiler.compile(str(path), cache=False)
    for rows, flag in ((2, True), (2, False), (2, True)):
        x = np.arange(3 * rows, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_array_equal(compiled(x, np.array([flag])), 2 * x if flag else -x)
    assert compiled.bound == ["c"]
    assert len(compiled.specializations) == 2  # one per value; the third call reused the first
    with pytest.raises(NeedsConstantInput, match="If.*graph input 'c'"):
        import_onnx(_if_model(dims), input_shapes={"x": [2, 3]})


def test_a_condition_computed_at_run_time_selects_between_both_branches():
    """c = ReduceSum(x) > 0, computed per call from an x too big to
    specialize on: both branches are computed and each output selected,
    one compile; branches of different shapes are refused."""
    then = _branch("then", [helper.make_node("Relu", ["x"], ["t"])], "t", [3, 4])
    other = _branch("else", [helper.make_node("Neg", ["x"], ["e"])], "e", [3, 4])
    zero = onnx.numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [3, 4])],
        [helper.make_tensor_value_info("y", F, [3, 4])], [zero],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = graphcompiler.compile(model, cache=False)
    x = (np.arange(12, dtype=np.float32) - 3.5).reshape(3, 4)
    np.testing.assert_array_equal(compiled(x), np.maximum(x, 0))
    np.testing.assert_array_equal(compiled(-x), x)
    assert "graph.select" in compiled.graph  # one compile, no specialization on x
    wider = helper.make_node("Concat", ["x", "x"], ["e"], axis=0)
    nodes[2].attribute[1].g.CopyFrom(_branch("else", [wider], "e", [6, 4]))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [3, 4])],
        [helper.make_tensor_value_info("y", F, None)], [zero],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match="If.*output #0.*both must agree"):
        import_onnx(model)


def test_nested_ifs_and_a_shape_from_a_branch():
    """The inner If's condition is the outer branch's constant; the outer
    If's output, a constant shape, feeds a Reshape (folded at import)."""
    shape = onnx.numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    inner_true = helper.make_node("Identity", ["shape"], ["s1"])
    inner = helper.make_node(
        "If",
        ["yes"],
        ["s2"],
        then_branch=_branch("t2", [inner_true], "s1", [2], element=I64),
        else_branch=_branch(
            "e2", [helper.make_node("Identity", ["other"], ["s3"])], "s3", [2], element=I64
        ),
    )
    yes = onnx.numpy_helper.from_array(np.array(True), "yes")
    outer = helper.make_node(
        "If",
        ["c"],
        ["s"],
        then_branch=_branch("t1", [inner], "s2", [2], [yes], element=I64),
        else_branch=_branch(
            "e1", [helper.make_node("Identity", ["other"], ["s4"])], "s4", [2], element=I64
        ),
    )
    reshape = helper.make_node("Reshape", ["x", "s"], ["y"])
    graph = helper.make_graph(
        [outer, reshape],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [3, 2])],
        [
            shape,
            onnx.numpy_helper.from_array(np.array([1, 6], np.int64), "other"),
            onnx.numpy_helper.from_array(np.array(True), "c"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(got, x.reshape(3, 2))


def test_a_condition_of_several_values_is_one_located_error():
    model = _if_model([2, 3], condition_input=False)
    model.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(np.array([True, False]), "c"))
    with pytest.raises(Exception, match="If.*one value"):
        import_onnx(model)


def _scan_model(backward: bool):
    """Running sum and product of x's rows along axis 1 (states), the
    running sums stacked along axis 0 of the output; with an If in the body."""
    rows = helper.make_tensor_value_info
    yes = onnx.numpy_helper.from_array(np.array(True), "yes")
    doubled = helper.make_node(
        "If", ["yes"], ["twice"],
        then_branch=_branch("t", [helper.make_node("Add", ["row", "row"], ["t_out"])], "t_out", [3]),
        else_branch=_branch("e", [helper.make_node("Neg", ["row"], ["e_out"])], "e_out", [3]),
    )  # fmt: skip
    body = helper.make_graph(
        [
            doubled,
            helper.make_node("Add", ["sum_in", "twice"], ["sum_out"]),
            helper.make_node("Mul", ["product_in", "row"], ["product_out"]),
            helper.make_node("Identity", ["sum_out"], ["scanned"]),
        ],
        "body",
        [rows("sum_in", F, [3]), rows("product_in", F, [3]), rows("row", F, [3])],
        [rows("sum_out", F, [3]), rows("product_out", F, [3]), rows("scanned", F, [3])],
        [yes],
    )
    node = helper.make_node(
        "Scan", ["s0", "p0", "x"], ["s", "p", "all"], body=body, num_scan_inputs=1,
        scan_input_axes=[1], scan_input_directions=[int(backward)], scan_output_axes=[-1],
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [rows("s0", F, [3]), rows("p0", F, [3]), rows("x", F, [3, 5])],
        [rows("s", F, [3]), rows("p", F, [3]), rows("all", F, [3, 5])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("backward", [False, True])
def test_scan_runs_its_body_as_a_loop(backward):
    model = _scan_model(backward)
    feeds = {
        "s0": np.zeros(3, np.float32),
        "p0": np.ones(3, np.float32),
        "x": np.random.default_rng(3).uniform(0.5, 1.5, (3, 5)).astype(np.float32),
    }
    columns = list(range(5))[::-1] if backward else list(range(5))
    total, product, stacked = feeds["s0"].copy(), feeds["p0"].copy(), []
    for column in columns:  # onnx's reference scans axis 0 only
        total = total + 2 * feeds["x"][:, column]
        product = product * feeds["x"][:, column]
        stacked.append(total)
    module = import_onnx(model)
    assert str(module).count("graph.loop @") == 1  # the body built once, not per step
    got = graphcompiler.compile(module, cache=False)(*feeds.values())
    for g, e in zip(got, [total, product, np.stack(stacked, axis=-1)], strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def _loop_model(count, condition_from_input=False):
    """y doubled `count` times, each iteration's y stacked; the body's
    condition is a constant, or (condition_from_input) y's first value > 0."""
    rows = helper.make_tensor_value_info
    keep = (
        helper.make_node("ReduceMax", ["y_out"], ["cond_out"], keepdims=0)
        if condition_from_input
        else helper.make_node("Identity", ["cond_in"], ["cond_out"])
    )
    body = helper.make_graph(
        [helper.make_node("Add", ["y_in", "y_in"], ["y_out"]), keep,
         helper.make_node("Identity", ["y_out"], ["stacked"])],
        "body",
        [rows("i", I64, []), rows("cond_in", B, []), rows("y_in", F, [2])],
        [rows("cond_out", F if condition_from_input else B, []), rows("y_out", F, [2]),
         rows("stacked", F, [2])],
    )  # fmt: skip
    count_value = onnx.numpy_helper.from_array(np.array(count, np.int64), "count")
    node = helper.make_node("Loop", ["count", "", "y"], ["y_final", "all"], body=body)
    graph = helper.make_graph(
        [node],
        "g",
        [rows("y", F, [2])],
        [rows("y_final", F, [2]), rows("all", F, [count, 2])],
        [count_value],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_loop_of_a_known_count():
    model = _loop_model(4)
    y = np.array([1.0, -2.0], np.float32)
    module = import_onnx(model)
    assert str(module).count("graph.loop @") == 1  # the body built once
    got = graphcompiler.compile(module, cache=False)(y)
    np.testing.assert_array_equal(got[0], y * 16)
    np.testing.assert_array_equal(got[1], [y * 2, y * 4, y * 8, y * 16])


def test_a_loop_reads_its_iteration_number():
    """y += i at iteration i, each y stacked: the number is a sequence the
    graph.loop walks."""
    rows = helper.make_tensor_value_info
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["i_f"], to=F),
            helper.make_node("Add", ["y_in", "i_f"], ["y_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["y_out"], ["scanned"]),
        ],
        "body",
        [rows("i", I64, []), rows("cond_in", B, []), rows("y_in", F, [2])],
        [rows("cond_out", B, []), rows("y_out", F, [2]), rows("scanned", F, [2])],
    )
    count = onnx.numpy_helper.from_array(np.array(5, np.int64), "count")
    node = helper.make_node("Loop", ["count", "", "y"], ["y_final", "all"], body=body)
    graph = helper.make_graph(
        [node], "g", [rows("y", F, [2])], [rows("y_final", F, [2]), rows("all", F, [5, 2])],
        [count],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    y = np.array([1.0, -2.0], np.float32)
    module = import_onnx(model)
    assert "graph.loop @" in str(module)
    got = graphcompiler.compile(module, cache=False)(y)
    totals = y + np.cumsum(np.arange(5, dtype=np.float32))[:, None]
    np.testing.assert_array_equal(got[0], totals[-1])
    np.testing.assert_array_equal(got[1], totals)


def test_a_loop_of_no_iteration_gives_its_state_and_empty_scan_outputs():
    """Trip count 0: the state passes through and the scan output is
    [0, 2], the body's declared shape, as onnxruntime gives."""
    y = np.array([1.0, -2.0], np.float32)
    got = graphcompiler.compile(import_onnx(_loop_model(0)), cache=False)(y)
    np.testing.assert_array_equal(got[0], y)
    assert got[1].shape == (0, 2) and got[1].dtype == np.float32


def test_a_loop_condition_computed_at_run_time_is_one_located_error():
    with pytest.raises(Exception, match="Loop.*computed at run time"):
        import_onnx(_loop_model(3, condition_from_input=True))


def _computed_ends_model(ends_elements: int):
    """y = x[:2 * n]: Slice's ends computed from graph input n."""
    rows = helper.make_tensor_value_info
    two = onnx.numpy_helper.from_array(np.array([2] * ends_elements, np.int64), "two")
    starts = onnx.numpy_helper.from_array(np.array([0] * ends_elements, np.int64), "starts")
    nodes = [
        helper.make_node("Mul", ["n", "two"], ["ends"]),
        helper.make_node("Slice", ["x", "starts", "ends"], ["y"]),
    ]
    shape = [12] * ends_elements
    graph = helper.make_graph(
        nodes, "g", [rows("x", F, shape), rows("n", I64, [ends_elements])],
        [rows("y", F, None)], [two, starts],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_size_computed_from_a_small_input_is_specialized_on(tmp_path):
    path = tmp_path / "slice.onnx"
    onnx.save(_computed_ends_model(1), path)
    compiled = graphcompiler.compile(str(path), cache=False)
    x = np.arange(12, dtype=np.float32)
    for n in (2, 5, 2):
        np.testing.assert_array_equal(compiled(x, np.array([n])), x[: 2 * n])
    assert compiled.bound == ["n"] and len(compiled.specializations) == 2
    with pytest.raises(NeedsConstantInput, match="'ends' is computed from graph input 'n'"):
        import_onnx(_computed_ends_model(1))


def test_a_size_computed_in_a_branch_from_a_small_input_is_specialized_on(tmp_path):
    """A branch reads the small input from the outer graph (not an input
    of the If node), as onnx's expanded AffineGrid does."""
    rows = helper.make_tensor_value_info
    two = onnx.numpy_helper.from_array(np.array([2], np.int64), "two")
    starts = onnx.numpy_helper.from_array(np.array([0], np.int64), "starts")
    inner = [helper.make_node("Mul", ["n", "two"], ["doubled"])]
    then = _branch("then", inner, "doubled", [1], element=I64)
    other = _branch(
        "else", [helper.make_node("Identity", ["n"], ["same"])], "same", [1], element=I64
    )
    truth = onnx.numpy_helper.from_array(np.array(True), "truth")
    nodes = [
        helper.make_node("If", ["truth"], ["ends"], then_branch=then, else_branch=other),
        helper.make_node("Slice", ["x", "starts", "ends"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [rows("x", F, [12]), rows("n", I64, [1])], [rows("y", F, None)],
        [two, starts, truth],
    )  # fmt: skip
    path = tmp_path / "branch.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    compiled = graphcompiler.compile(str(path), cache=False)
    x = np.arange(12, dtype=np.float32)
    for n in (3, 1):
        np.testing.assert_array_equal(compiled(x, np.array([n])), x[: 2 * n])
    assert compiled.bound == ["n"]


def test_a_size_computed_from_data_stays_an_error():
    """An input of more than SMALL_INPUT_ELEMENTS elements is data: no
    specialization on its values (one compile per call), the plain error."""
    rows = helper.make_tensor_value_info
    constants = [
        onnx.numpy_helper.from_array(np.array(v, np.int64), name)
        for name, v in (("zero", [0]), ("one", [1]), ("two", [2]))
    ]
    nodes = [
        helper.make_node("Slice", ["n", "zero", "one"], ["first"]),
        helper.make_node("Mul", ["first", "two"], ["ends"]),
        helper.make_node("Slice", ["x", "zero", "ends"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [rows("x", F, [12]), rows("n", I64, [16])], [rows("y", F, None)], constants
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match="'ends' is computed at run time") as error:
        import_onnx(model)
    assert not isinstance(error.value, NeedsConstantInput)
