"""ONNX sequences and optionals (frontends/onnx/containers.py,
ops_containers.py), resolved at import time: each model is compiled and
checked against onnx's reference evaluator. Also the onnx backend's
sequence and optional inputs and outputs (driver/onnx_backend.py), its
symbolic dims, and opset 6's per-channel PRelu slope.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import graphcompiler
from graphcompiler.driver.onnx_backend import CompiledBackend
from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _tensor(name, shape, element=F):
    return helper.make_tensor_value_info(name, element, shape)


def _constant(name, value):
    return onnx.numpy_helper.from_array(np.asarray(value), name)


def _check(model, *inputs):
    """Compiled against onnx's reference evaluator on the same inputs."""
    names = [i.name for i in model.graph.input]
    expected = ReferenceEvaluator(model).run(None, dict(zip(names, inputs, strict=True)))
    got = graphcompiler.compile(import_onnx(model), cache=False)(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    for want, have in zip(expected, got, strict=True):
        np.testing.assert_allclose(have, want, rtol=1e-6)
    return got


def test_split_to_sequence_then_concat_back_with_a_new_axis():
    """torch.unbind, then torch.stack: slices, dims dropped, stacked again."""
    model = _model(
        [
            helper.make_node("SplitToSequence", ["x"], ["parts"], axis=1, keepdims=0),
            helper.make_node("SequenceErase", ["parts", "first"], ["rest"]),
            helper.make_node("ConcatFromSequence", ["rest"], ["y"], axis=-1, new_axis=1),
        ],
        [_tensor("x", [2, 4, 3])],
        [_tensor("y", [2, 3, 3])],
        [_constant("first", np.int64(-4))],
    )
    x = RNG.standard_normal([2, 4, 3]).astype(np.float32)
    (y,) = _check(model, x)
    np.testing.assert_array_equal(y, np.stack([x[:, 1], x[:, 2], x[:, 3]], axis=-1))


@pytest.mark.parametrize(
    ("split", "count", "first_shape"),
    [(None, 4, (2,)), (np.int64(3), 2, (2, 3)), (np.array([1, 3], np.int64), 2, (2, 1))],
)
def test_split_to_sequence_sizes(split, count, first_shape):
    """No split: size 1 each; a scalar: chunks of it, the last smaller; a
    list: those sizes. keepdims=0 drops the axis only without a split (the
    spec, onnx's shape inference and reference; onnxruntime squeezes after
    a scalar split too, and fails where a chunk is longer than 1)."""
    inputs = ["x"] + (["split"] if split is not None else [])
    initializers = [_constant("split", split)] if split is not None else []
    model = _model(
        [
            helper.make_node("SplitToSequence", inputs, ["parts"], axis=1, keepdims=0),
            helper.make_node("SequenceAt", ["parts", "zero"], ["first"]),
            helper.make_node("SequenceLength", ["parts"], ["n"]),
            helper.make_node(
                "ConcatFromSequence", ["parts"], ["y"], axis=1, new_axis=int(split is None)
            ),
            helper.make_node("Cast", ["n"], ["count"], to=F),
            helper.make_node("Add", ["y", "count"], ["z"]),
        ],
        [_tensor("x", [2, 4])],
        [_tensor("z", [2, 4]), _tensor("first", None)],
        [*initializers, _constant("zero", np.int64(0))],
    )
    x = RNG.standard_normal([2, 4]).astype(np.float32)
    z, first = _check(model, x)
    np.testing.assert_allclose(z, x + count, rtol=1e-6)
    assert first.shape == first_shape


def test_insert_and_read_at_known_positions():
    """Position n inserts at the back, as the spec and onnxruntime have it
    (onnx's reference evaluator wraps it to the front)."""
    model = _model(
        [
            helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
            helper.make_node("SequenceInsert", ["empty", "a"], ["s1"]),
            helper.make_node("SequenceInsert", ["s1", "b", "front"], ["s2"]),
            helper.make_node("SequenceInsert", ["s2", "c", "back"], ["s3"]),  # [b, a, c]
            helper.make_node("SequenceAt", ["s3", "second"], ["y"]),
            helper.make_node("SequenceAt", ["s3", "last"], ["z"]),
        ],
        [_tensor("a", [3]), _tensor("b", [2]), _tensor("c", [1])],
        [_tensor("y", [3]), _tensor("z", [1])],
        [
            _constant("front", np.int64(0)),
            _constant("back", np.int64(2)),
            _constant("second", np.int64(1)),
            _constant("last", np.int64(-1)),
        ],
    )
    a, b, c = (RNG.standard_normal([n]).astype(np.float32) for n in (3, 2, 1))
    y, z = graphcompiler.compile(import_onnx(model), cache=False)(a, b, c)
    np.testing.assert_array_equal(y, a)
    np.testing.assert_array_equal(z, c)


@pytest.mark.parametrize("position", [0, 2, -1, -3])
def test_a_position_known_only_at_run_time_is_gathered(position):
    """Tensors of one shape: stacked, the position gathered (negative ones count from the end)."""
    model = _model(
        [
            helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
            helper.make_node("SequenceAt", ["s", "i"], ["y"]),
        ],
        [_tensor("a", [2, 2]), _tensor("b", [2, 2]), _tensor("c", [2, 2]), _tensor("i", [], I64)],
        [_tensor("y", [2, 2])],
    )
    module = import_onnx(model)
    assert "graph.gather" in str(module)
    tensors = [RNG.standard_normal([2, 2]).astype(np.float32) for _ in range(3)]
    got = graphcompiler.compile(module, cache=False)(*tensors, np.array(position, np.int64))
    np.testing.assert_array_equal(got, tensors[position])


def test_known_tensors_stay_known_through_a_sequence():
    """A shape collected in a sequence and concatenated still folds into Reshape."""
    model = _model(
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("SplitToSequence", ["shape"], ["dims"]),
            helper.make_node("SequenceAt", ["dims", "zero"], ["batch"]),
            helper.make_node("SequenceConstruct", ["batch", "minus_one"], ["target_dims"]),
            helper.make_node("ConcatFromSequence", ["target_dims"], ["target"], axis=0),
            helper.make_node("Reshape", ["x", "target"], ["y"]),
        ],
        [_tensor("x", [2, 3, 4])],
        [_tensor("y", [2, 12])],
        [_constant("zero", np.int64(0)), _constant("minus_one", np.array([-1], np.int64))],
    )
    _check(model, RNG.standard_normal([2, 3, 4]).astype(np.float32))


def test_a_loop_carries_a_sequence():
    """A Loop appending to a sequence each iteration (torch's list.append in a scripted loop)."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["i"], ["step"], to=F),
            helper.make_node("Mul", ["x", "step"], ["scaled"]),
            helper.make_node("SequenceInsert", ["seq_in", "scaled"], ["seq_out"]),
        ],
        "body",
        [_tensor("i", [], I64), _tensor("cond_in", [], TensorProto.BOOL),
         helper.make_tensor_sequence_value_info("seq_in", F, None)],
        [_tensor("cond_out", [], TensorProto.BOOL),
         helper.make_tensor_sequence_value_info("seq_out", F, None)],
    )  # fmt: skip
    model = _model(
        [
            helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
            helper.make_node("Loop", ["trips", "", "empty"], ["seq"], body=body),
            helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0, new_axis=1),
        ],
        [_tensor("x", [3])],
        [_tensor("y", [4, 3])],
        [_constant("trips", np.int64(4))],
    )
    x = RNG.standard_normal([3]).astype(np.float32)
    y = graphcompiler.compile(import_onnx(model), cache=False)(x)  # (onnx's reference gives [])
    np.testing.assert_allclose(y, np.arange(4, dtype=np.float32)[:, None] * x, rtol=1e-6)


def test_sequence_map_inlines_its_body_per_element():
    body = helper.make_graph(
        [helper.make_node("Add", ["item", "bias"], ["out"])],
        "body",
        [_tensor("item", [2]), _tensor("bias", [2])],
        [_tensor("out", [2])],
    )
    model = _model(
        [
            helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
            helper.make_node("SequenceMap", ["s", "bias"], ["mapped"], body=body),
            helper.make_node("ConcatFromSequence", ["mapped"], ["y"], axis=0),
        ],
        [_tensor("a", [2]), _tensor("b", [2]), _tensor("bias", [2])],
        [_tensor("y", [4])],
    )
    _check(model, *(RNG.standard_normal([2]).astype(np.float32) for _ in range(3)))


def test_optionals_hold_a_tensor_or_nothing():
    empty_type = helper.make_tensor_type_proto(F, [2])
    model = _model(
        [
            helper.make_node("Optional", ["x"], ["some"]),
            helper.make_node("Optional", [], ["none"], type=empty_type),
            helper.make_node("OptionalHasElement", ["some"], ["has_some"]),
            helper.make_node("OptionalHasElement", ["none"], ["has_none"]),
            helper.make_node("OptionalGetElement", ["some"], ["y"]),
        ],
        [_tensor("x", [2])],
        [_tensor("y", [2]), _tensor("has_some", [], TensorProto.BOOL),
         _tensor("has_none", [], TensorProto.BOOL)],
    )  # fmt: skip
    x = np.array([1.0, -2.0], np.float32)
    y, has_some, has_none = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_array_equal(y, x)  # (onnx's reference gives [x])
    assert bool(has_some) and not bool(has_none)


def _sequence_model(nodes, inputs, output):
    return _model(nodes, inputs, [helper.make_tensor_sequence_value_info(output, F, None)])


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([helper.make_node("SequenceErase", ["empty"], ["s"])], "nothing to erase"),
        ([helper.make_node("SequenceInsert", ["empty", "x", "far"], ["s"])], "out of range"),
        ([helper.make_node("SequenceAt", ["empty", "far"], ["s"])], "no tensor to read"),
        ([helper.make_node("Relu", ["empty"], ["s"])], "'empty' is a sequence, not a tensor"),
        ([helper.make_node("Identity", ["empty"], ["s"])], "output 's': a sequence, not a tensor"),
    ],
)
def test_bad_sequences_are_one_located_error(nodes, message):
    model = _sequence_model(
        [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F), *nodes],
        [_tensor("x", [2])],
        "s",
    )
    model.graph.initializer.append(_constant("far", np.int64(5)))
    with pytest.raises(OnnxImportError, match=message) as error:
        import_onnx(model)
    assert "\n" not in str(error.value)


def test_the_backend_takes_and_gives_sequences_and_optionals():
    """Sequence and optional graph inputs become tensor inputs of one
    specialization per structure; outputs come back as lists and None."""
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    model = _model(
        [
            helper.make_node("SequenceInsert", ["s", "x"], ["longer"]),
            helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
            helper.make_node("Optional", [], ["nothing"], type=seq_type),
        ],
        [
            helper.make_tensor_sequence_value_info("s", F, None),
            _tensor("x", [2]),
            helper.make_value_info(
                "maybe", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
            ),
        ],
        [
            helper.make_tensor_sequence_value_info("longer", F, None),
            _tensor("has", [], TensorProto.BOOL),
            helper.make_value_info("nothing", helper.make_optional_type_proto(seq_type)),
        ],
    )
    rep = CompiledBackend.prepare(model)
    a, x = np.ones([3], np.float32), np.arange(2, dtype=np.float32)
    longer, has, nothing = rep.run([[a], x, None])
    assert [t.tolist() for t in longer] == [a.tolist(), x.tolist()] and nothing is None
    assert not bool(has)
    longer, has, _ = rep.run([[], x, x])
    assert [t.tolist() for t in longer] == [x.tolist()] and bool(has)
    assert len(rep.by_structure) == 2


def test_the_backend_specializes_on_symbolic_dims():
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])], [_tensor("x", ["n"])], [_tensor("y", ["n"])]
    )
    rep = CompiledBackend.prepare(model)
    for n in (3, 5):
        x = RNG.standard_normal([n]).astype(np.float32)
        np.testing.assert_array_equal(rep.run([x])[0], np.maximum(x, 0))


def test_opset_6_prelu_slope_applies_per_channel():
    """PyTorch's PReLU(C) exported at opset 6: a slope of C values along axis 1."""
    slope = np.array([0.1, 0.2, 0.3], np.float32)
    model = _model(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])],
        [_tensor("x", [2, 3, 4])],
        [_tensor("y", [2, 3, 4])],
        [_constant("slope", slope)],
        opset=6,
    )
    model.ir_version = 3
    model.graph.input.append(_tensor("slope", [3]))  # IR 3: initializers are inputs too
    x = RNG.standard_normal([2, 3, 4]).astype(np.float32)
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    np.testing.assert_allclose(got, np.where(x > 0, x, x * slope[:, None]), rtol=1e-6)
