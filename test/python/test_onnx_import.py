"""graphcompiler.frontends.onnx.import_onnx: names, locations, constants, shapes and
the one-line errors for what the graph dialect cannot express."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnxruntime_session import session  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.frontends.onnx import NeedsConstantInput, OnnxImportError, import_onnx  # noqa: E402
from graphcompiler.interpreters import reference  # noqa: E402
from graphcompiler.ir.pass_manager import PrintOptions  # noqa: E402

F = TensorProto.FLOAT


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(
        nodes,
        "test",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def onnxruntime_outputs(model, feeds):
    return session(model).run(None, feeds)


def dense_model():
    weight = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    nodes = [
        helper.make_node("Gemm", ["x", "W", "b"], ["h"], name="fc", alpha=2.0),
        helper.make_node("Relu", ["h"], ["y"], name="act"),
    ]
    return make_model(
        nodes,
        [("x", F, [2, 4])],
        [("y", F, [2, 3])],
        [("W", weight), ("b", np.ones(3, np.float32))],
    )


def test_names_locations_and_constants():
    module = import_onnx(dense_model())
    text = PrintOptions(debuginfo=True).text(module)
    assert "func.func @main(%x: tensor<2x4xf32>" in text  # initializers are no arguments
    assert "%W = graph.constant" in text and 'loc("W")' in text
    assert (
        'graph.matmul %x, %W : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("fc")'
        in text
    )
    assert '%y = graph.relu %h : tensor<2x3xf32> loc("act")' in text
    assert "func.return %y" in text


def test_matches_onnxruntime_in_both_paths():
    model = dense_model()
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"x": x})
    module = import_onnx(model)
    np.testing.assert_allclose(reference.run(module, x), expected, rtol=1e-6)
    np.testing.assert_allclose(graphcompiler.compile(module)(x), expected, rtol=1e-5)


@pytest.mark.parametrize(
    "trans_a, trans_b, alpha, beta", [(0, 0, 1.0, 1.0), (1, 1, 0.5, 2.0), (0, 1, 1.0, 0.0)]
)
def test_gemm_attributes(trans_a, trans_b, alpha, beta):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 3) if trans_a else (3, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5) if trans_b else (5, 4)).astype(np.float32)
    c = rng.standard_normal((1, 4)).astype(np.float32)
    node = helper.make_node(
        "Gemm", ["a", "b", "c"], ["y"], transA=trans_a, transB=trans_b, alpha=alpha, beta=beta
    )
    model = make_model(
        [node], [("a", F, a.shape), ("b", F, b.shape), ("c", F, c.shape)], [("y", F, [3, 4])]
    )
    (expected,) = onnxruntime_outputs(model, {"a": a, "b": b, "c": c})
    np.testing.assert_allclose(
        reference.run(import_onnx(model), a, b, c), expected, rtol=1e-5, atol=1e-6
    )


def test_shape_arithmetic_is_folded_at_import():
    """Shape -> Gather -> Concat -> Reshape (exported models) becomes one reshape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Concat", ["n", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    initializers = [("zero", np.array([0], np.int64)), ("minus_one", np.array([-1], np.int64))]
    model = make_model(nodes, [("x", F, [2, 3, 4])], [("y", F, [2, 12])], initializers)
    ops = [op.name for op in import_onnx(model).walk()]
    assert ops.count("graph.reshape") == 1 and "graph.gather" not in ops


def test_constant_subgraphs_fold_even_through_ops_without_a_converter():
    """Mod has no graph counterpart, but on constants onnx's reference evaluates it."""
    nodes = [helper.make_node("Mod", ["a", "b"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])]
    initializers = [
        ("a", np.array([7.0, 8.0], np.float32)),
        ("b", np.array([4.0, 3.0], np.float32)),
    ]
    model = make_model(nodes, [("x", F, [2])], [("y", F, [2])], initializers)
    module = import_onnx(model)
    np.testing.assert_array_equal(reference.run(module, np.zeros(2, np.float32)), [3.0, 2.0])


def test_large_initializer_is_held_once_as_bytes():
    weight = np.random.default_rng(2).standard_normal((256, 256)).astype(np.float32)
    node = helper.make_node("MatMul", ["x", "W"], ["y"])
    model = make_model([node], [("x", F, [1, 256])], [("y", F, [1, 256])], [("W", weight)])
    module = import_onnx(model)
    constant = next(op for op in module.walk() if op.name == "graph.constant")
    assert constant.value.data.data == weight.tobytes()  # the bytes, not a list of floats
    elided = PrintOptions(elide_elements_above=16).text(module)
    assert "dense_resource<__elided__> : tensor<256x256xf32>" in elided and len(elided) < 2000


def test_symbolic_dim_names_the_input_and_the_fix():
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [("x", F, ["N", 3])], [("y", F, ["N", 3])]
    )
    with pytest.raises(OnnxImportError) as error:
        import_onnx(model)
    assert str(error.value) == (
        "input 'x' has symbolic dimension 'N' (shape Nx3); give a static shape, e.g. "
        "--input-shape x=1x3, or its array (gc-run --input; graphcompiler.compile specializes "
        "on each call's shapes)"
    )
    module = import_onnx(model, input_shapes={"x": [5, 3]})
    assert "tensor<5x3xf32>" in str(module)


@pytest.mark.parametrize(
    "node, message",
    [
        (
            helper.make_node("ImageDecoder", ["x"], ["y"], name="s"),
            "node 's' (ImageDecoder): operator is not supported",
        ),
        (
            helper.make_node("LeakyRelu", ["x"], ["y"], name="l", alpha=0.1, bogus=1),
            "node 'l' (LeakyRelu): attribute 'bogus' = 1 is not supported",
        ),
        (
            helper.make_node("Cast", ["x"], ["y"], name="c", to=TensorProto.FLOAT8E8M0),
            "node 'c' (Cast): element type FLOAT8E8M0 is not supported",
        ),
        (
            helper.make_node("Gelu", ["x"], ["y"], name="p", approximate="fast"),
            "node 'p' (Gelu): attribute 'approximate' = 'fast' is not supported",
        ),
    ],
)
def test_unsupported_constructs_are_one_line_naming_the_node(node, message):
    output_type = TensorProto.FLOAT8E8M0 if node.op_type == "Cast" else F
    x = ("x", TensorProto.UINT8, [16]) if node.op_type == "ImageDecoder" else ("x", F, [1, 1, 4, 4])
    output_type = TensorProto.UINT8 if node.op_type == "ImageDecoder" else output_type
    model = make_model([node], [x], [("y", output_type, None)])
    with pytest.raises(OnnxImportError) as error:
        import_onnx(model)
    assert str(error.value) == message


def test_old_opset_and_unreadable_files(tmp_path):
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2])], [("y", F, [2])], opset=12
    )
    upgraded = import_onnx(model)  # by onnx's version converter
    assert [op.name for op in upgraded.walk()][-2:] == ["graph.relu", "func.return"]
    unknown = make_model(
        [helper.make_node("NoSuchOp", ["x"], ["y"])], [("x", F, [2])], [("y", F, [2])], opset=12
    )
    with pytest.raises(OnnxImportError, match=r"^opset 12 is older than 13, and onnx's version"):
        import_onnx(unknown)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x01\x02 not a model")
    with pytest.raises(OnnxImportError, match="garbage.onnx"):
        import_onnx(garbage)
    with pytest.raises(OnnxImportError, match="cannot read"):
        import_onnx(tmp_path / "missing.onnx")


def test_inputs_needed_as_constants_can_be_bound():
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    model = make_model(
        [node], [("x", F, [2, 3]), ("axes", TensorProto.INT64, [1])], [("y", F, [2])]
    )
    with pytest.raises(NeedsConstantInput, match="graph input 'axes'") as error:
        import_onnx(model)
    assert error.value.input_name == "axes"
    module = import_onnx(model, constants={"axes": np.array([1])})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(reference.run(module, x), x.sum(axis=1))


def test_composed_ops_match_onnxruntime():
    """BatchNormalization, Flatten, Split, Mean, HardSwish and Pad composed together."""
    rng = np.random.default_rng(3)
    channel = lambda: rng.uniform(0.5, 1.5, 4).astype(np.float32)  # noqa: E731
    nodes = [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], epsilon=1e-3),
        helper.make_node("HardSwish", ["bn"], ["hs"]),
        helper.make_node("Pad", ["hs", "pads"], ["padded"]),
        helper.make_node("Split", ["padded"], ["p0", "p1"], axis=1, num_outputs=2),
        helper.make_node("Mean", ["p0", "p1"], ["mean"]),
        helper.make_node("Flatten", ["mean"], ["y"], axis=1),
    ]
    initializers = [("s", channel()), ("b", channel()), ("m", channel()), ("v", channel())]
    initializers.append(("pads", np.array([0, 0, 1, 0, 0, 0, 0, 1], np.int64)))
    model = make_model(nodes, [("x", F, [2, 4, 3, 3])], [("y", F, [2, 32])], initializers, opset=18)
    x = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"x": x})
    module = import_onnx(model)
    np.testing.assert_allclose(reference.run(module, x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(graphcompiler.compile(module)(x), expected, rtol=1e-5, atol=1e-6)


def test_compile_and_gc_run_take_onnx_files(tmp_path, capsys):
    from graphcompiler.tools import gc_run

    path = tmp_path / "dense.onnx"
    onnx.save(dense_model(), path)
    x = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    (expected,) = onnxruntime_outputs(dense_model(), {"x": x})
    np.testing.assert_allclose(graphcompiler.compile(str(path))(x), expected, rtol=1e-5)
    np.save(tmp_path / "x.npy", x)
    assert gc_run.main([str(path), "--input", f"x={tmp_path / 'x.npy'}", "--check-reference"]) == 0
    assert "output #0: matches the reference" in capsys.readouterr().out
    with pytest.raises(ValueError, match="node 'dec' \\(ImageDecoder\\): operator is not"):
        model = make_model(
            [helper.make_node("ImageDecoder", ["x"], ["y"], name="dec")],
            [("x", TensorProto.UINT8, [16])],
            [("y", TensorProto.UINT8, None)],
        )
        graphcompiler.compile(model)


def test_compile_errors_point_at_the_onnx_node():
    """A pipeline error on an imported op is located at its node: loc("name")."""
    from graphcompiler.ir.diagnostics import DiagnosticError

    node = helper.make_node("Erf", ["x"], ["y"], name="the_erf")
    model = make_model([node], [("x", TensorProto.DOUBLE, [4])], [("y", TensorProto.DOUBLE, [4])])
    with pytest.raises(DiagnosticError) as error:
        graphcompiler.compile(model)
    assert str(error.value).startswith("loc(\"the_erf\"): error: 'graph.erf' op")


@pytest.mark.parametrize(
    "starts, ends, axes, steps",
    [
        ([-1], [-(2**63)], [1], [-1]),  # torch.flip of one axis
        ([5, 0], [1, 3], [1, 0], [-2, 1]),  # a backward stride beside a forward slice
        ([2**62, 3], [-(2**62), 0], [0, 2], [-1, -2]),  # sentinels, two backward axes
        ([1], [1], [2], [-1]),  # empty
        ([-9], [-8], [1], [-2]),  # start clamped to 0, end to -1 (before it): one element
        ([-4, -3], [-5, 4], [0, 2], [-1, 2]),  # numpy would read end -1 as the last element
    ],
)
def test_slices_with_negative_steps(starts, ends, axes, steps):
    """Negative steps (exporters' flip) read the axis backward by a gather,
    starts and ends clamped as ONNX does, against onnxruntime."""
    x = np.random.default_rng(7).standard_normal((3, 7, 5)).astype(np.float32)
    initializers = [
        (name, np.array(values, np.int64))
        for name, values in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))
    ]

    def model(output_shape):
        return make_model(
            [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
            [("x", F, [3, 7, 5])],
            [("y", F, output_shape)],
            initializers=initializers,
        )

    (expected,) = onnxruntime_outputs(model(None), {"x": x})
    got = graphcompiler.compile(import_onnx(model(list(expected.shape))), cache=False)(x)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes(mode):
    """Opset 28's SpaceToDepth mode: blocks then channels (DCR) or channels
    then blocks (CRD); DepthToSpace of the same mode gives the input back."""
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    model = make_model(
        [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode=mode),
         helper.make_node("DepthToSpace", ["y"], ["z"], blocksize=2, mode=mode)],
        [("x", F, [2, 3, 4, 6])],
        [("y", F, [2, 12, 2, 3]), ("z", F, [2, 3, 4, 6])],
        opset=28,
    )  # fmt: skip
    y, z = graphcompiler.compile(import_onnx(model), cache=False)(x)
    blocks = x.reshape(2, 3, 2, 2, 3, 2)  # n, c, h/b, bh, w/b, bw
    order = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    np.testing.assert_array_equal(y, blocks.transpose(order).reshape(2, 12, 2, 3))
    np.testing.assert_array_equal(z, x)


@pytest.mark.parametrize("ratio", [0.0, 0.5])
def test_training_dropout_runs_only_without_drops(ratio):
    """training_mode with ratio 0 keeps every element (the mask all true);
    a positive ratio would draw random drops: one located error."""
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], name="drop")
    model = make_model(
        [node],
        [("x", F, [2, 3])],
        [("y", F, [2, 3]), ("m", TensorProto.BOOL, [2, 3])],
        [("r", np.array(ratio, np.float32)), ("t", np.array(True))],
        opset=13,
    )
    if ratio:
        with pytest.raises(OnnxImportError, match=r"node 'drop' \(Dropout\): training_mode"):
            import_onnx(model)
        return
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, mask = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.bool_ and mask.all()


def test_training_batch_norm_uses_the_batch_statistics():
    """training_mode 1 (BiT's weight standardization exports so): the
    batch's mean and biased variance per channel, and the running
    statistics moved towards them by momentum."""
    x = np.random.default_rng(3).standard_normal([4, 3, 5, 2]).astype(np.float32) * 3 + 1
    parameters = [
        ("scale", np.array([1.0, 2.0, 0.5], np.float32)),
        ("bias", np.array([0.0, -1.0, 3.0], np.float32)),
        ("mean", np.array([0.5, 0.0, -0.5], np.float32)),
        ("var", np.array([1.0, 2.0, 3.0], np.float32)),
    ]
    node = helper.make_node(
        "BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y", "rm", "rv"],
        training_mode=1, momentum=0.8, epsilon=1e-3,
    )  # fmt: skip
    outputs = [("y", F, [4, 3, 5, 2]), ("rm", F, [3]), ("rv", F, [3])]
    model = make_model([node], [("x", F, [4, 3, 5, 2])], outputs, parameters, opset=15)
    y, running_mean, running_var = graphcompiler.compile(import_onnx(model), cache=False)(x)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    at = (slice(None), None, None)
    scale, bias = parameters[0][1], parameters[1][1]
    expected = (x - mean[at]) / np.sqrt(var[at] + 1e-3) * scale[at] + bias[at]
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(running_mean, parameters[2][1] * 0.8 + mean * 0.2, rtol=1e-6)
    np.testing.assert_allclose(running_var, parameters[3][1] * 0.8 + var * 0.2, rtol=1e-5)


@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm_parameters_broadcast_over_more_dims(with_bias):
    """A scale (and bias) of [17, 5] for a normalization over the last dim
    only: onnxruntime broadcasts them over the input, and so does the import."""
    rng = np.random.default_rng(5)
    parameters = [("s", rng.standard_normal([17, 5]).astype(np.float32))]
    if with_bias:
        parameters.append(("b", rng.standard_normal([17, 5]).astype(np.float32)))
    node = helper.make_node("LayerNormalization", ["x", *[n for n, _ in parameters]], ["y"])
    model = make_model(
        [node], [("x", F, [3, 2, 17, 5])], [("y", F, [3, 2, 17, 5])], parameters, opset=17
    )
    x = rng.standard_normal([3, 2, 17, 5]).astype(np.float32)
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_allclose(got, onnxruntime_outputs(model, {"x": x})[0], rtol=1e-5, atol=1e-5)


def _constant_and_runtime(node, arrays, outputs, runtime, opset=17):
    """The node's outputs with every input an initializer (evaluated at
    import) and with `runtime` inputs fed at run time (compiled)."""

    def model(fed):
        inputs = [(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
                  for n, a in arrays.items() if n in fed]  # fmt: skip
        kept = [(n, a) for n, a in arrays.items() if n not in fed]
        return make_model([node], inputs, outputs, kept, opset)

    folded = graphcompiler.compile(model(()), cache=False)()
    ran = graphcompiler.compile(model(runtime), cache=False)(*[arrays[n] for n in runtime])
    return folded, ran


def test_a_node_on_constants_is_evaluated_with_the_compiled_semantics():
    """Folding at import evaluates the converted graph ops, not onnx's
    reference evaluator (whose RNN ignores sequence_lens, and whose
    LogSoftmax underflows): the same values as at run time, and onnxruntime's."""
    rng = np.random.default_rng(0)
    arrays = dict(X=rng.standard_normal((3, 2, 2)).astype(np.float32),
                  W=rng.standard_normal((1, 3, 2)).astype(np.float32),
                  R=rng.standard_normal((1, 3, 3)).astype(np.float32),
                  B=np.zeros((1, 6), np.float32), L=np.array([1, 3], np.int32))  # fmt: skip
    rnn = helper.make_node("RNN", ["X", "W", "R", "B", "L"], ["Y"], hidden_size=3)
    folded, ran = _constant_and_runtime(rnn, arrays, [("Y", F, [3, 1, 2, 3])], ["X"])
    np.testing.assert_allclose(folded, ran, rtol=1e-5, atol=1e-6)  # tanh: an ulp off on 4 lanes
    assert not folded[1:, 0, 0].any()  # batch 0's steps past its length are 0
    x = np.array([[0.0, -200.0, -50.0, 1.0]], np.float32)
    softmax = helper.make_node("LogSoftmax", ["x"], ["y"], axis=1)
    folded, ran = _constant_and_runtime(softmax, {"x": x}, [("y", F, [1, 4])], ["x"])
    want = onnxruntime_outputs(
        make_model([softmax], [("x", F, [1, 4])], [("y", F, [1, 4])]), {"x": x}
    )
    np.testing.assert_allclose(folded, want[0], rtol=1e-6)
    np.testing.assert_allclose(ran, want[0], rtol=1e-6)


def test_unique_of_known_values_with_omitted_outputs_and_first_occurrence_order():
    u = np.array([3, 1, 3, 2, 1, 3, 5, 0], np.int64)
    for sorted_, want_y in ((1, [0, 1, 2, 3, 5]), (0, [3, 1, 2, 5, 0])):
        node = helper.make_node("Unique", ["u"], ["y", "", "inv", "cnt"], sorted=sorted_)
        outputs = [("y", TensorProto.INT64, None), ("inv", TensorProto.INT64, None),
                   ("cnt", TensorProto.INT64, None)]  # fmt: skip
        y, inverse, counts = graphcompiler.compile(make_model([node], [], outputs, [("u", u)]))()
        np.testing.assert_array_equal(y, want_y)
        np.testing.assert_array_equal(y[inverse], u)
        np.testing.assert_array_equal(counts, [np.count_nonzero(u == v) for v in want_y])


@pytest.mark.parametrize("reduction, want", [("add", [1, 0, 1, 1]), ("mul", [1, 0, 0, 1])])
def test_scatter_reductions_of_booleans(reduction, want):
    """add is or, mul is and (as onnxruntime computes them)."""
    data = np.array([True, False, True, True])
    updates = np.array([True, False, False, True])
    node = helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], reduction=reduction)
    model = make_model(
        [node], [("d", TensorProto.BOOL, [4]), ("u", TensorProto.BOOL, [4])],
        [("y", TensorProto.BOOL, [4])], [("i", np.array([0, 1, 2, 0], np.int64))], opset=18,
    )  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(data, updates)
    np.testing.assert_array_equal(got, np.array(want, bool))
    np.testing.assert_array_equal(got, onnxruntime_outputs(model, {"d": data, "u": updates})[0])


# --- found by the third fuzz campaign ----------------------------------------------------


def test_tile_by_zero_repeats_is_empty():
    x = np.array([[1.5, -2.0, 3.0]], np.float32)
    model = make_model(
        [helper.make_node("Tile", ["x", "repeats"], ["y"])], [("x", F, [1, 3])],
        [("y", F, None)], [("repeats", np.array([2, 0], np.int64))],
    )  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(x)
    assert got.shape == (2, 0) == onnxruntime_outputs(model, {"x": x})[0].shape


@pytest.mark.parametrize(
    "dtype, value", [(np.int64, 2**63 - 1), (np.int64, 2**53 + 1), (np.uint64, 2**64 - 1),
                     (np.int32, 2**31 - 1), (np.float64, 0.1)],
)  # fmt: skip
def test_pad_with_a_constant_f32_cannot_hold_is_exact(dtype, value):
    x = np.array([[1, 2], [3, 4]], dtype)
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = make_model(
        [helper.make_node("Pad", ["x", "pads", "value"], ["y"])], [("x", element, [2, 2])],
        [("y", element, None)],
        [("pads", np.array([1, 0, 0, 2], np.int64)), ("value", np.array(value, dtype))],
    )  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(x)
    np.testing.assert_array_equal(got, np.pad(x, [[1, 0], [0, 2]], constant_values=value))


@pytest.mark.parametrize("stash, element", [(1, np.float32), (11, np.float64)])
def test_layer_norm_statistics_of_f64_take_the_stash_type(stash, element):
    """Mean and InvStdDev are f32 unless stash_type is 11, as onnx infers
    and onnxruntime gives, whatever X's type."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    stats = helper.np_dtype_to_tensor_dtype(np.dtype(element))
    node = helper.make_node(
        "LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], stash_type=stash
    )
    model = make_model(
        [node], [("x", TensorProto.DOUBLE, [2, 3, 4])],
        [("y", TensorProto.DOUBLE, None), ("mean", stats, None), ("inv", stats, None)],
        [("s", np.ones(4)), ("b", np.zeros(4))],
    )  # fmt: skip
    y, mean, inv = graphcompiler.compile(model, cache=False)(x)
    assert y.dtype == np.float64 and mean.dtype == inv.dtype == element
    np.testing.assert_allclose(mean[..., 0], x.mean(-1), rtol=1e-6)


def test_gather_nd_of_one_element_folds_to_a_scalar():
    nodes = [helper.make_node("GatherND", ["x", "index"], ["g"]),
             helper.make_node("Add", ["g", "a"], ["y"])]  # fmt: skip
    model = make_model(
        nodes, [("a", F, [])], [("y", F, None)],
        [("x", np.arange(6, dtype=np.float32).reshape(2, 3)), ("index", np.array([1, 2], np.int64))],
    )  # fmt: skip
    assert graphcompiler.compile(model, cache=False)(np.array(0.5, np.float32)) == 5.5


def test_a_sequence_of_constants_folds():
    """SplitToSequence of a constant holds its slices as arrays: the
    concatenation is a constant again (test_onnx_containers.py has the rest)."""
    nodes = [helper.make_node("SplitToSequence", ["x", "split"], ["seq"]),
             helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)]  # fmt: skip
    model = make_model(
        nodes, [], [("y", F, None)],
        [("x", np.arange(5, dtype=np.float32)), ("split", np.array([2, 3], np.int64))],
    )  # fmt: skip
    text = str(import_onnx(model))
    assert "graph.concat" not in text and "graph.slice" not in text
    np.testing.assert_array_equal(graphcompiler.compile(model, cache=False)(), np.arange(5))


@pytest.mark.parametrize("value, count", [(3.0, 1), (0.0, 0)])
def test_nonzero_of_a_scalar_is_one_row(value, count):
    """onnxruntime's [1, count] (onnx's shape inference says [0, ?])."""
    model = make_model([helper.make_node("NonZero", ["x"], ["y"])], [("x", F, [])],
                       [("y", TensorProto.INT64, None)])  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(np.array(value, np.float32))
    assert got.shape == (1, count)


@pytest.mark.parametrize("op", ["ReduceL2", "ReduceSumSquare", "ReduceLogSum"])
def test_f16_reductions_square_and_sum_in_f32(op):
    """300^2 overflows f16; the L2 norm of eight of them (848.5) does not,
    nor the log of a sum past 65504: onnxruntime computes them in f32."""
    x = np.full(8, 300.0 if op != "ReduceLogSum" else 30000.0, np.float16)
    model = make_model([helper.make_node(op, ["x"], ["y"], keepdims=0)],
                       [("x", TensorProto.FLOAT16, [8])], [("y", TensorProto.FLOAT16, None)])  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(x)
    want = onnxruntime_outputs(model, {"x": x})[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3)


def test_neg_of_zero_is_negative_zero():
    """-(+0) = -0, so 1 / Neg(0) is -inf, as numpy and onnxruntime."""
    nodes = [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Reciprocal", ["n"], ["y"])]
    model = make_model(nodes, [("x", F, [3])], [("y", F, None)])
    x = np.array([0.0, -0.0, 2.0], np.float32)
    np.testing.assert_array_equal(
        graphcompiler.compile(model, cache=False)(x), [-np.inf, np.inf, -0.5]
    )


def test_a_slice_step_of_2_to_the_62_imports():
    """onnx 1.23's data propagation never returns on such a step: the
    import's shape inference runs without it then."""
    model = make_model(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
        [("x", F, [3, 2])], [("y", F, None)],
        [("starts", np.array([-1], np.int64)), ("ends", np.array([-3], np.int64)),
         ("axes", np.array([1], np.int64)), ("steps", np.array([-(2**62)], np.int64))],
    )  # fmt: skip
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(graphcompiler.compile(model, cache=False)(x), x[:, -1:])


@pytest.mark.parametrize(
    "equation, shapes", [("ij->", [(2, 0)]), ("ij->i", [(2, 0)]), ("ij,jk->ik", [(2, 0), (0, 3)])]
)
def test_einsum_over_an_empty_dim_is_zeros(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    model = make_model(
        [helper.make_node("Einsum", names, ["y"], equation=equation)],
        [(n, F, list(s)) for n, s in zip(names, shapes, strict=True)], [("y", F, None)],
    )  # fmt: skip
    arrays = [np.ones(s, np.float32) for s in shapes]
    got = graphcompiler.compile(model, cache=False)(*arrays)
    np.testing.assert_array_equal(got, np.einsum(equation, *arrays))


@pytest.mark.parametrize("op, want", [("ReduceMean", [0, 1]), ("ReduceL2", [7, 5])])
def test_integer_mean_and_l2_truncate_as_onnxruntime(op, want):
    x = np.array([[-7, 2, 3], [5, -1, 0]], np.int32)
    model = make_model([helper.make_node(op, ["x"], ["y"], axes=[1], keepdims=0)],
                       [("x", TensorProto.INT32, [2, 3])], [("y", TensorProto.INT32, None)],
                       opset=17)  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(x)
    assert got.dtype == np.int32 and got.tolist() == want


@pytest.mark.parametrize(
    "op, attributes",
    [("LpNormalization", {"axis": -1, "p": 2}), ("MeanVarianceNormalization", {}),
     ("LRN", {"size": 3}), ("LpPool", {"kernel_shape": [2, 2], "p": 2}), ("GlobalLpPool", {"p": 2})],
)  # fmt: skip
def test_f16_norms_and_lp_pools_square_in_f32(op, attributes):
    """Values near 300 square past f16's 65504: computed in f32 and rounded
    once, as onnxruntime."""
    x = (np.random.default_rng(0).standard_normal((1, 2, 4, 4)) * 50 + 300).astype(np.float16)
    model = make_model([helper.make_node(op, ["x"], ["y"], **attributes)],
                       [("x", TensorProto.FLOAT16, [1, 2, 4, 4])],
                       [("y", TensorProto.FLOAT16, None)])  # fmt: skip
    got = graphcompiler.compile(model, cache=False)(x).astype(np.float32)
    want = onnxruntime_outputs(model, {"x": x})[0].astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
