"""graph.gather_elements, gather_nd, scatter_elements and scatter_nd (ONNX
GatherElements, GatherND, ScatterElements, ScatterND). Each op is checked
against an element-by-element numpy formula twice, through the reference
interpreter and compiled (vector body and scalar tail, negative and
out-of-range indices, duplicates, NaN and inf), and each ONNX op against
onnxruntime through the importer; TensorScatter (a KV-cache update built on
scatter_elements) against the spec's pseudocode.
"""

import operator
import re

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.ir.element_types import round_to_bf16

rng = np.random.default_rng(31)

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i64": np.int64,
          "i32": np.int32, "i8": np.int8, "ui8": np.uint8, "i1": np.bool_}  # fmt: skip


def _t(shape, dtype="f32"):
    return "tensor<" + "x".join(str(s) for s in [*shape, dtype]) + ">"


def _module(op, operands, out, attributes=""):
    """func @main applying graph.`op` to arguments of the given (shape, dtype)s."""
    types = [_t(*o) for o in operands]
    names = [f"%a{i}" for i in range(len(operands))]
    arguments = ", ".join(f"{n}: {t}" for n, t in zip(names, types, strict=True))
    o = _t(*out)
    return f"""func.func @main({arguments}) -> {o} {{
  %0 = graph.{op} {", ".join(names)} {attributes} : ({", ".join(types)}) -> {o}
  func.return %0 : {o}
}}"""


def _check(text, inputs, expected):
    """Both paths give exactly `expected` (data movement, and combinations in
    the order the formula makes them)."""
    compiled = graphcompiler.compile(text)
    for result in (reference.run(text, *inputs), compiled(*inputs)):
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)


def _values(shape, dtype="f32"):
    """Random values of `dtype`; floats hold NaN, inf and -0.0 too."""
    if dtype == "i1":
        return rng.random(shape) > 0.5
    if dtype in ("i64", "i32", "i8", "ui8"):
        low = 0 if dtype == "ui8" else -100
        return rng.integers(low, 100, shape).astype(DTYPES[dtype])
    x = rng.uniform(-4, 4, shape).astype(np.float32).reshape(-1)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0][: x.size]
    rng.shuffle(x)
    return x.reshape(shape).astype(DTYPES[dtype])


def _indices(shape, n, dtype="i64"):
    """Indices mostly in [-n, n), some just outside."""
    return rng.integers(-n - 2, n + 2, shape).astype(DTYPES[dtype])


def _wrap(index, n):
    """The documented rule: [-n, 0) counts from the end, outside [-n, n) is None."""
    index = int(index) + n if index < 0 else int(index)
    return index if 0 <= index < n else None


# --- gathers ----------------------------------------------------------------------------


def _gather_elements(x, indices, axis):
    out = np.zeros(indices.shape, x.dtype)
    for p in np.ndindex(*indices.shape):
        i = _wrap(indices[p], x.shape[axis])
        if i is not None:
            out[p] = x[(*p[:axis], i, *p[axis + 1 :])]
    return out


@pytest.mark.parametrize(
    "data_shape, indices_shape, axis",
    [([7, 37], [4, 37], 0), ([6, 37], [6, 5], -1), ([3, 4, 5], [2, 9, 5], 1), ([9], [20], 0)],
)
@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_gather_elements(data_shape, indices_shape, axis, index_type):
    x = _values(data_shape)
    axis %= len(data_shape)
    indices = _indices(indices_shape, data_shape[axis], index_type)
    text = _module(
        "gather_elements",
        [(data_shape, "f32"), (indices_shape, index_type)],
        (indices_shape, "f32"),
        f"{{axis = {axis} : i64}}",
    )
    _check(text, [x, indices], _gather_elements(x, indices, axis))


@pytest.mark.parametrize("dtype", ["i1", "i8", "ui8", "f16", "f64", "i64"])
def test_gather_elements_element_types(dtype):
    x, indices = _values([5, 6], dtype), _indices([5, 4], 6, "i8")
    text = _module(
        "gather_elements", [([5, 6], dtype), ([5, 4], "i8")], ([5, 4], dtype), "{axis = 1 : i64}"
    )
    _check(text, [x, indices], _gather_elements(x, indices, 1))


def _gather_nd(x, indices, batch):
    depth = indices.shape[-1]
    out = np.zeros([*indices.shape[:-1], *x.shape[batch + depth :]], x.dtype)
    for t in np.ndindex(*indices.shape[:-1]):
        at = [_wrap(i, n) for i, n in zip(indices[t], x.shape[batch:], strict=False)]
        if None not in at:
            out[t] = x[(*t[:batch], *at)]
    return out


@pytest.mark.parametrize(
    "data_shape, indices_shape, batch",
    [
        ([6, 37], [5, 1], 0),  # rows: a vector body and a scalar tail each
        ([4, 5, 19], [3, 2], 0),
        ([4, 5, 6], [7, 3], 0),  # single elements
        ([3, 8, 21], [3, 4, 1], 1),
        ([2, 3, 4, 5], [2, 3, 2], 2),
        ([5, 40], [1], 0),  # one tuple: no loop around it
    ],
)
def test_gather_nd(data_shape, indices_shape, batch):
    x = _values(data_shape)
    indices = rng.integers(-9, 9, indices_shape).astype(np.int64)
    depth = indices_shape[-1]
    out = [*indices_shape[:-1], *data_shape[batch + depth :]]
    attributes = f"{{batch_dims = {batch} : i64}}" if batch else ""
    text = _module(
        "gather_nd", [(data_shape, "f32"), (indices_shape, "i64")], (out, "f32"), attributes
    )
    _check(text, [x, indices], _gather_nd(x, indices, batch))


@pytest.mark.parametrize("dtype", ["i1", "ui8", "f16", "i32"])
def test_gather_nd_element_types(dtype):
    x, indices = _values([4, 3, 11], dtype), _indices([5, 2], 4, "i32")
    text = _module("gather_nd", [([4, 3, 11], dtype), ([5, 2], "i32")], ([5, 11], dtype))
    _check(text, [x, indices], _gather_nd(x, indices, 0))


def test_gathers_of_an_empty_dim_read_zeros():
    x, indices = np.zeros([0, 3], np.float32), np.array([[0, -1, 2]], np.int64)
    text = _module("gather_elements", [([0, 3], "f32"), ([1, 3], "i64")], ([1, 3], "f32"))
    _check(text, [x, indices], np.zeros([1, 3], np.float32))
    indices = np.array([[0], [-1]], np.int64)
    text = _module("gather_nd", [([0, 3], "f32"), ([2, 1], "i64")], ([2, 3], "f32"))
    _check(text, [x, indices], np.zeros([2, 3], np.float32))


# --- scatters ---------------------------------------------------------------------------

COMBINE = {
    "none": lambda old, new: new,
    "add": operator.add,
    "mul": operator.mul,
    "max": np.maximum,
    "min": np.minimum,
}


def _scatter(x, updates, places, reduction, rounding=lambda v: v):
    """A copy of x with each (update position, place) combined in order."""
    out = x.copy()
    with np.errstate(all="ignore"):  # inf - inf, integer overflow: values, not warnings
        for p, place in places:
            if place is not None:
                out[place] = rounding(COMBINE[reduction](out[place], updates[p]))
    return out


def _scatter_elements(x, indices, updates, axis, reduction, rounding=lambda v: v):
    places = []
    for p in np.ndindex(*indices.shape):
        i = _wrap(indices[p], x.shape[axis])
        places.append((p, None if i is None else (*p[:axis], i, *p[axis + 1 :])))
    return _scatter(x, updates, places, reduction, rounding)


def _scatter_nd(x, indices, updates, reduction, rounding=lambda v: v):
    places = []
    for t in np.ndindex(*indices.shape[:-1]):
        at = [_wrap(i, n) for i, n in zip(indices[t], x.shape, strict=False)]
        places.append((t, None if None in at else tuple(at)))
    return _scatter(x, updates, places, reduction, rounding)


def _attributes(reduction, axis=None):
    entries = [] if axis is None else [f"axis = {axis} : i64"]
    entries += [] if reduction == "none" else [f'reduction = "{reduction}"']
    return "{" + ", ".join(entries) + "}" if entries else ""


REDUCTIONS = ["none", "add", "mul", "max", "min"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "data_shape, indices_shape, axis",
    [([5, 37], [9, 37], 0), ([6, 9], [6, 14], 1), ([3, 4, 5], [3, 7, 2], -2), ([8], [30], 0)],
)
def test_scatter_elements(reduction, data_shape, indices_shape, axis):
    """Many indices per place: duplicates combine in row-major order, the
    last "none" write wins; indices outside [-n, n) write nothing."""
    x, updates = _values(data_shape), _values(indices_shape)
    indices = _indices(indices_shape, data_shape[axis], "i32")
    text = _module(
        "scatter_elements",
        [(data_shape, "f32"), (indices_shape, "i32"), (indices_shape, "f32")],
        (data_shape, "f32"),
        _attributes(reduction, axis),
    )
    expected = _scatter_elements(x, indices, updates, axis % len(data_shape), reduction)
    _check(text, [x, indices, updates], expected)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "data_shape, indices_shape",
    [
        ([6, 37], [9, 1]),  # rows: a vector body and a scalar tail each
        ([4, 5, 19], [2, 3, 2]),
        ([4, 5], [30, 2]),  # single elements
        ([7, 3], [1]),  # one tuple: no loop around it
    ],
)
def test_scatter_nd(reduction, data_shape, indices_shape):
    depth = indices_shape[-1]
    updates_shape = [*indices_shape[:-1], *data_shape[depth:]]
    x, updates = _values(data_shape), _values(updates_shape)
    indices = rng.integers(-9, 9, indices_shape).astype(np.int64)
    text = _module(
        "scatter_nd",
        [(data_shape, "f32"), (indices_shape, "i64"), (updates_shape, "f32")],
        (data_shape, "f32"),
        _attributes(reduction),
    )
    _check(text, [x, indices, updates], _scatter_nd(x, indices, updates, reduction))


@pytest.mark.parametrize(
    "dtype, reduction",
    [("i8", "add"), ("i8", "mul"), ("ui8", "max"), ("i64", "min"), ("i1", "none")],
)
def test_scatter_integer_and_boolean_types(dtype, reduction):
    """i8 sums and products of many duplicates overflow and wrap; i1 only
    replaces (its reductions are rejected by the verifier)."""
    x, updates = _values([4, 3], dtype), _values([12, 3], dtype)
    indices = rng.integers(0, 4, [12, 3]).astype(np.int64)
    text = _module(
        "scatter_elements",
        [([4, 3], dtype), ([12, 3], "i64"), ([12, 3], dtype)],
        ([4, 3], dtype),
        _attributes(reduction),
    )
    _check(text, [x, indices, updates], _scatter_elements(x, indices, updates, 0, reduction))


def test_half_precision_scatters_round_after_each_combination():
    """f16 and bf16 are combined in f32 and stored after each update, so
    duplicates round at every step, in both paths."""
    x, updates = _values([3, 20]), _values([16, 20])
    indices = rng.integers(0, 3, [16, 1]).astype(np.int64)
    text = _module(
        "scatter_nd",
        [([3, 20], "f16"), ([16, 1], "i64"), ([16, 20], "f16")],
        ([3, 20], "f16"),
        _attributes("add"),
    )
    x16, updates16 = x.astype(np.float16), updates.astype(np.float16)
    _check(text, [x16, indices, updates16], _scatter_nd(x16, indices, updates16, "add"))
    xb, updatesb = round_to_bf16(x), round_to_bf16(updates)
    expected = _scatter_nd(xb, indices, updatesb, "add", round_to_bf16)
    _check(text.replace("f16", "bf16"), [xb, indices, updatesb], expected)


def _kernel(text, name):
    """The Tensor IR of kernel `name` (to its end) compiled from `text`."""
    return graphcompiler.compile(text).tir.split(f"tir.func @{name}__", 1)[1]


def test_scatters_walk_updates_in_order_and_slices_in_vectors():
    """The input is copied first, in parallel. Two tuples of scatter_nd may
    write one place: its walk is serial, each slice (distinct places)
    vectorized; scatter_elements walks its outer dim in parallel only when
    that dim is not the axis."""
    data, tuples = ([512, 256], "f32"), ([512, 1], "i64")
    kernel = _kernel(_module("scatter_nd", [data, tuples, data], data), "scatter_nd")
    assert kernel.count(" parallel {") == 1  # the copy
    assert re.search(r"tir.load %in2\[[^]]* lanes \d+\]", kernel)
    for axis, parallel_loops in [(0, 1), (1, 2)]:
        text = _module(
            "scatter_elements", [data, (data[0], "i64"), data], data, f"{{axis = {axis} : i64}}"
        )
        assert _kernel(text, "scatter_elements").count(" parallel {") == parallel_loops


def test_gather_nd_runs_tuples_in_parallel_and_copies_slices_in_vectors():
    text = _module("gather_nd", [([512, 256], "f32"), ([512, 1], "i64")], ([512, 256], "f32"))
    kernel = _kernel(text, "gather_nd")
    assert "parallel" in kernel and "tir.if" in kernel
    assert re.search(r"tir.load %in0\[[^]]* lanes \d+\]", kernel)


# --- the ONNX ops -----------------------------------------------------------------------


def _onnx_model(node, inputs, output_type):
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    graph = helper.make_graph(
        [node],
        "indexing",
        [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in inputs.items()
        ],
        [helper.make_tensor_value_info("y", output_type, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _unique(count, n, shape):
    """`count` distinct positions in [-n, n) (ONNX leaves duplicates of
    reduction "none" unordered), negative half the time."""
    positions = rng.permutation(n)[:count]
    return np.where(rng.random(count) < 0.5, positions - n, positions).reshape(shape)


GRAPH_OP_OF = {
    "GatherElements": "gather_elements",
    "GatherND": "gather_nd",
    "ScatterElements": "scatter_elements",
    "ScatterND": "scatter_nd",
}

ONNX_CASES = [
    ("GatherElements", {"axis": 1}, [5, 37], {"i": rng.integers(-37, 37, [5, 9])}, None),
    ("GatherElements", {}, [6, 4], {"i": rng.integers(-6, 6, [3, 4]).astype(np.int32)}, None),
    ("GatherND", {}, [6, 37], {"i": rng.integers(-6, 6, [4, 1])}, None),
    ("GatherND", {"batch_dims": 1}, [3, 5, 2], {"i": rng.integers(0, 5, [3, 4, 1])}, None),
    ("ScatterElements", {"axis": 1}, [4, 9], {"i": _unique(9, 9, [1, 9])}, [1, 9]),
    ("ScatterElements", {"reduction": "add"}, [4, 9], {"i": rng.integers(-4, 4, [8, 9])}, [8, 9]),
    ("ScatterElements", {"reduction": "max"}, [4, 9], {"i": rng.integers(0, 4, [8, 9])}, [8, 9]),
    ("ScatterND", {}, [6, 37], {"i": _unique(4, 6, [4, 1])}, [4, 37]),
    ("ScatterND", {"reduction": "mul"}, [4, 5], {"i": rng.integers(0, 4, [7, 2])}, [7]),
    ("ScatterND", {"reduction": "min"}, [4, 5, 3], {"i": rng.integers(0, 4, [3, 1])}, [3, 5, 3]),
]


@pytest.mark.parametrize("op_type, attributes, data_shape, indices, updates_shape", ONNX_CASES)
def test_onnx_ops_match_onnxruntime(op_type, attributes, data_shape, indices, updates_shape):
    pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    from onnxruntime_session import session

    from graphcompiler.frontends.onnx import import_onnx

    inputs = {"x": rng.uniform(-4, 4, data_shape).astype(np.float32), **indices}
    if updates_shape is not None:
        inputs["u"] = rng.uniform(-4, 4, updates_shape).astype(np.float32)
    node = onnx.helper.make_node(op_type, list(inputs), ["y"], name="n", **attributes)
    model = _onnx_model(node, inputs, onnx.TensorProto.FLOAT)
    (expected,) = session(model).run(None, inputs)
    module = import_onnx(model)
    assert f"graph.{GRAPH_OP_OF[op_type]} %x, %i" in str(module)  # one op, no composition
    arrays = list(inputs.values())
    for result in (reference.run(module, *arrays), graphcompiler.compile(module)(*arrays)):
        np.testing.assert_allclose(result, expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize(
    "op_type, attributes, shapes, message",
    [
        (
            "NonZero",
            {},
            [[4, 3]],
            "node 'n' (NonZero): input #0 (the values the output shape depends on) must be a "
            "constant, but it is graph input 'x'",
        ),
        ("Unique", {}, [[4, 3]], "node 'n' (Unique): input #0 (the values the output shape"),
        ("GatherElements", {"axis": 2}, [[4, 3], [4, 3]], "axis 2 is out of range for rank 2"),
        (
            "ScatterND",
            {"reduction": "sum"},
            [[4, 3], [2, 1], [2, 3]],
            "attribute 'reduction' = 'sum' is not supported",
        ),
        (
            "ScatterND",
            {},
            [[4, 3], [2, 1], [2, 2]],
            "operand #2 ('updates') has shape [2, 2], expected [2, 3]",
        ),
    ],
)
def test_onnx_errors_are_one_line(op_type, attributes, shapes, message):
    onnx = pytest.importorskip("onnx")
    from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

    names = ["x", "i", "u"][: len(shapes)]
    inputs = {
        name: np.zeros(shape, np.float32 if name != "i" else np.int64)
        for name, shape in zip(names, shapes, strict=True)
    }
    node = onnx.helper.make_node(op_type, names, ["y"], name="n", **attributes)
    output_type = onnx.TensorProto.INT64 if op_type == "NonZero" else onnx.TensorProto.FLOAT
    with pytest.raises(OnnxImportError) as error:
        import_onnx(_onnx_model(node, inputs, output_type))
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("axis", [-2, 1])
def test_onnx_tensor_scatter_writes_each_batch_at_its_index(mode, axis):
    """TensorScatter (a KV-cache update), against the spec's pseudocode."""
    from onnx import TensorProto
    from onnx_node_model import node_model

    from graphcompiler.frontends.onnx import import_onnx

    cache_shape = [3, 7, 4, 2] if axis == 1 else [3, 2, 7, 4]
    update_shape = list(cache_shape)
    update_shape[axis] = 3
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    model = node_model(
        "TensorScatter",
        [("cache", F, cache_shape), ("update", F, update_shape), ("at", I64, [3])],
        [("present", F, cache_shape)],
        opset=24, mode=mode, axis=axis,
    )  # fmt: skip
    cache = np.arange(np.prod(cache_shape), dtype=np.float32).reshape(cache_shape)
    update = -np.arange(1, 1 + np.prod(update_shape), dtype=np.float32).reshape(update_shape)
    at = np.array([0, 4 if mode == "linear" else 6, 2], np.int64)
    got = graphcompiler.compile(import_onnx(model), cache=False)(cache, update, at)
    expected = cache.copy()
    moved, moved_update = np.moveaxis(expected, axis, -1), np.moveaxis(update, axis, -1)
    for b in range(3):
        for step in range(3):
            moved[b, ..., (at[b] + step) % cache_shape[axis]] = moved_update[b, ..., step]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_onnx_compress_of_a_known_condition_and_nonzero_of_a_bound_input(tmp_path, axis):
    """Compress keeps the positions its condition (bound when a graph input)
    holds true; NonZero of a small graph input is bound and folded."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    attributes = {} if axis is None else {"axis": axis}
    rows = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Compress", ["x", "c"], ["y"], **attributes),
        helper.make_node("NonZero", ["c"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [rows("x", TensorProto.FLOAT, [3, 4]), rows("c", TensorProto.BOOL, [3])],
        [rows("y", TensorProto.FLOAT, None), rows("z", TensorProto.INT64, None)],
    )  # fmt: skip
    path = tmp_path / "compress.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    compiled = graphcompiler.compile(str(path), cache=False)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for condition in ([True, False, True], [False, True, False]):
        c = np.array(condition)
        y, z = compiled(x, c)
        np.testing.assert_array_equal(y, np.compress(c, x, axis=axis))
        np.testing.assert_array_equal(z, np.array(np.nonzero(c)))


@pytest.mark.parametrize("center_point_box", [0, 1])
@pytest.mark.parametrize("thresholds", [(3, 0.3, None), (2, 0.0, 0.4), (10, 0.6, 0.1)])
def test_onnx_non_max_suppression_of_known_boxes(center_point_box, thresholds):
    """Random boxes (corners in any order), tied scores, every threshold,
    against onnx's reference; boxes computed at run time are one error line."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    from graphcompiler.frontends.onnx import OnnxImportError, import_onnx

    generator = np.random.default_rng(center_point_box * 7 + thresholds[0])
    boxes = generator.uniform(0, 4, size=(2, 12, 4)).astype(np.float32)
    scores = generator.choice([0.2, 0.5, 0.5, 0.9], size=(2, 3, 12)).astype(np.float32)
    limit, iou, score = thresholds
    known = {"boxes": boxes, "scores": scores, "limit": np.array([limit], np.int64),
             "iou": np.array([iou], np.float32)}  # fmt: skip
    if score is not None:
        known["score"] = np.array([score], np.float32)
    node = helper.make_node(
        "NonMaxSuppression", list(known), ["selected"], center_point_box=center_point_box
    )
    output = [helper.make_tensor_value_info("selected", TensorProto.INT64, None)]
    initializers = [numpy_helper.from_array(v, k) for k, v in known.items()]
    model = helper.make_model(
        helper.make_graph([node], "g", [], output, initializers),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    (expected,) = ReferenceEvaluator(model).run(None, {})
    got = graphcompiler.compile(import_onnx(model), cache=False)()
    np.testing.assert_array_equal(got, expected)
    assert 0 < len(expected) < 2 * 3 * 12
    computed = helper.make_node("Relu", ["x"], ["boxes"])
    rows = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 12, 4])]
    model = helper.make_model(
        helper.make_graph([computed, node], "g", rows, output, initializers[1:]),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    with pytest.raises(OnnxImportError, match="the boxes.*computed at run time") as error:
        import_onnx(model)
    assert "\n" not in str(error.value)
