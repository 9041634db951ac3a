"""The graph ops an ONNX frontend needs (issue 14): comparisons, logical
ops, the ONNX activations, gather, pad, rms_norm and instance_norm, and the
f64 / ui8 / i16 element types. Each op is checked against an independent
numpy formula twice: through the reference interpreter and compiled
(vectorized body and scalar tail, NaN and inf included).
"""

import math

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference

rng = np.random.default_rng(14)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.0, -88.0, 1e-30, -1e-30, 120.0, -120.0])


def _t(shape, dtype="f32"):
    return "tensor<" + "x".join(str(s) for s in [*shape, dtype]) + ">"


def _both(text, *inputs):
    """(reference result, compiled result) of the module `text`."""
    return reference.run(text, *inputs), graphcompiler.compile(text)(*inputs)


def _check(text, inputs, expected, rtol=0.0, atol=0.0):
    for result in _both(text, *inputs):
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=atol, equal_nan=True)


def _floats(shape, dtype=np.float32, scale=4.0):
    """Random values with the special ones at the front (the vector body) and
    the end (the scalar tail)."""
    x = rng.uniform(-scale, scale, shape).astype(dtype).reshape(-1)
    x[: len(SPECIAL)] = SPECIAL[: x.size]
    x[-3:] = SPECIAL[:3]
    return x.reshape(shape)


def _binary(op, lhs_shape, rhs_shape, out_shape, dtype="f32", out="i1"):
    return f"""func.func @main(%a: {_t(lhs_shape, dtype)}, %b: {_t(rhs_shape, dtype)}) -> {_t(out_shape, out)} {{
  %0 = graph.{op} %a, %b : ({_t(lhs_shape, dtype)}, {_t(rhs_shape, dtype)}) -> {_t(out_shape, out)}
  func.return %0 : {_t(out_shape, out)}
}}"""


def _unary(op, shape, attributes="", dtype="f32"):
    t = _t(shape, dtype)
    return f"""func.func @main(%x: {t}) -> {t} {{
  %0 = graph.{op} %x {attributes} : {t}
  func.return %0 : {t}
}}"""


# --- comparisons and logical ops ------------------------------------------------------------


@pytest.mark.parametrize(
    "op, function",
    [
        ("greater_equal", np.greater_equal),
        ("less_equal", np.less_equal),
        ("not_equal", np.not_equal),
    ],
)
def test_comparisons_with_nan_and_broadcasting(op, function):
    a = _floats([3, 37])
    b = rng.choice(np.array([np.nan, 0.0, 1.0, -np.inf, np.inf], np.float32), [37])
    a[0, :5] = b[:5]  # equal pairs
    _check(_binary(op, [3, 37], [37], [3, 37]), [a, b], function(a, b))


@pytest.mark.parametrize("dtype, np_type", [("i32", np.int32), ("i1", np.bool_)])
def test_integer_and_boolean_comparisons(dtype, np_type):
    a = rng.integers(-3, 3, [4, 9]).astype(np_type)
    b = rng.integers(-3, 3, [4, 1]).astype(np_type)
    for op, function in [("greater_equal", np.greater_equal), ("less_equal", np.less_equal),
                         ("not_equal", np.not_equal), ("greater", np.greater), ("less", np.less)]:  # fmt: skip
        _check(_binary(op, [4, 9], [4, 1], [4, 9], dtype), [a, b], function(a, b))


@pytest.mark.parametrize(
    "op, function",
    [
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    ],
)
def test_logical_binary(op, function):
    a, b = rng.integers(0, 2, [5, 19]).astype(bool), rng.integers(0, 2, [19]).astype(bool)
    _check(_binary(op, [5, 19], [19], [5, 19], "i1"), [a, b], function(a, b))


def test_logical_not():
    x = rng.integers(0, 2, [3, 21]).astype(bool)
    _check(_unary("logical_not", [3, 21], dtype="i1"), [x], ~x)


# --- activations ---------------------------------------------------------------------------


def _selu(x, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875):
    return gamma * np.where(x > 0, x, alpha * np.expm1(x))


ACTIVATIONS = [
    ("elu", "", lambda x: np.where(x > 0, x, np.expm1(x))),
    ("elu", "{alpha = 0.5 : f32}", lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("selu", "", _selu),
    ("selu", "{alpha = 2.0 : f32, gamma = 3.0 : f32}", lambda x: _selu(x, 2.0, 3.0)),
    ("softplus", "", lambda x: np.logaddexp(0.0, x)),
    ("hard_sigmoid", "", lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
    (
        "hard_sigmoid",
        "{alpha = 0.5 : f32, beta = 0.25 : f32}",
        lambda x: np.clip(0.5 * x + 0.25, 0, 1),
    ),
    ("hard_swish", "", lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    ("gelu", "", lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (
        "gelu",
        '{approximate = "tanh"}',
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
]


@pytest.mark.parametrize("op, attributes, formula", ACTIVATIONS)
def test_activations(op, attributes, formula):
    x = _floats([2, 45])
    with np.errstate(all="ignore"):
        expected = formula(x.astype(np.float64)).astype(np.float32)
    # 1 + erf (or 1 + tanh) cancels for negative x: a GELU's error is
    # relative to |x| (<= 4 here), 2e-7 of it (erf within 3.3e-7, tanh 1.5 ulp)
    atol = 8e-7 if op == "gelu" else 1e-7
    _check(_unary(op, [2, 45], attributes), [x], expected, rtol=2e-6, atol=atol)


def test_softplus_keeps_relative_precision_far_out():
    """exp(x) for very negative x (not 0), x for large x (not inf)."""
    x = np.array([-100.0, -30.0, -17.0, -1e-3, 1e-3, 17.0, 30.0, 100.0, 1e30, -1e30], np.float32)
    expected = np.logaddexp(0.0, x.astype(np.float64)).astype(np.float32)
    _check(_unary("softplus", [10]), [x], expected, rtol=2e-6)


def test_prelu_broadcasts_its_slope():
    x = _floats([2, 3, 17])
    slope = rng.uniform(0, 1, [3, 1]).astype(np.float32)
    t = _t([2, 3, 17])
    text = f"""func.func @main(%x: {t}, %s: tensor<3x1xf32>) -> {t} {{
  %0 = graph.prelu %x, %s : ({t}, tensor<3x1xf32>) -> {t}
  func.return %0 : {t}
}}"""
    with np.errstate(all="ignore"):
        expected = np.where(x < 0, slope * x, x)
    _check(text, [x, slope], expected)


def test_new_element_wise_ops_fuse_into_one_loop():
    t, b = _t([4, 33]), _t([4, 33], "i1")
    text = f"""func.func @main(%x: {t}, %y: {t}) -> {b} {{
  %0 = graph.softplus %x : {t}
  %1 = graph.hard_swish %0 : {t}
  %2 = graph.elu %1 {{alpha = 0.5 : f32}} : {t}
  %3 = graph.greater_equal %2, %y : ({t}, {t}) -> {b}
  %4 = graph.not_equal %1, %y : ({t}, {t}) -> {b}
  %5 = graph.logical_xor %3, %4 : ({b}, {b}) -> {b}
  %6 = graph.logical_not %5 : {b}
  func.return %6 : {b}
}}"""
    compiled = graphcompiler.compile(text)
    assert compiled.tir.count("tir.func @fused") == 1
    x, y = _floats([4, 33], scale=2), rng.uniform(-1, 1, [4, 33]).astype(np.float32)
    with np.errstate(all="ignore"):
        h = np.logaddexp(0, x)
        h = h * np.clip(h / 6 + 0.5, 0, 1)
        swish = h
        h = np.where(h > 0, h, 0.5 * np.expm1(h))
    expected = ~((h >= y) ^ (swish != y))
    np.testing.assert_array_equal(compiled(x, y), expected)
    np.testing.assert_array_equal(reference.run(text, x, y), expected)


# --- gather and pad ------------------------------------------------------------------------


def _gather_text(data_shape, indices_shape, axis, dtype="f32", index_type="i64"):
    axis %= len(data_shape)
    out = [*data_shape[:axis], *indices_shape, *data_shape[axis + 1 :]]
    d, i, o = _t(data_shape, dtype), _t(indices_shape, index_type), _t(out, dtype)
    return f"""func.func @main(%x: {d}, %i: {i}) -> {o} {{
  %0 = graph.gather %x, %i {{axis = {axis - len(data_shape)} : i64}} : ({d}, {i}) -> {o}
  func.return %0 : {o}
}}"""


def _take(x, indices, axis):
    """The documented semantics, element by element: wrap once, else 0."""
    axis %= x.ndim
    n = x.shape[axis]
    out = np.zeros([*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :]], x.dtype)
    for position in np.ndindex(*indices.shape):
        i = int(indices[position])
        i = i + n if i < 0 else i
        if 0 <= i < n:
            out[(slice(None),) * axis + position] = np.take(x, i, axis=axis)
    return out


@pytest.mark.parametrize(
    "data_shape, indices_shape, axis",
    [([50, 37], [3, 5], 0), ([4, 9, 35], [6], 1), ([4, 9, 35], [2, 3], -1), ([7, 3], [], 0)],
)
def test_gather_embeddings_with_negative_and_out_of_range_indices(data_shape, indices_shape, axis):
    x = _floats(data_shape)
    n = data_shape[axis]
    indices = rng.integers(-n - 3, n + 3, indices_shape).astype(np.int64)
    _check(_gather_text(data_shape, indices_shape, axis), [x, indices], _take(x, indices, axis))


DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i64": np.int64,
          "i32": np.int32, "i16": np.int16, "i8": np.int8, "ui8": np.uint8, "i1": np.bool_}  # fmt: skip


@pytest.mark.parametrize("dtype, index_type", [("i32", "i32"), ("i1", "i64"), ("f16", "i8")])
def test_gather_element_and_index_types(dtype, index_type):
    x = rng.integers(-9, 9, [5, 6]).astype(DTYPES[dtype])
    indices = np.array([-1, 5, 6, -7]).astype(DTYPES[index_type])
    text = _gather_text([5, 6], [4], 1, dtype, index_type)
    _check(text, [x, indices], _take(x, indices, 1))


def test_gather_from_an_empty_axis_is_zeros():
    x = np.zeros([0, 4], np.float32)
    indices = np.array([0, -1, 3], np.int64)
    _check(_gather_text([0, 4], [3], 0), [x, indices], np.zeros([3, 4], np.float32))


def _pad_text(shape, pads, mode="constant", value=None, dtype="f32"):
    out = [n + pads[d] + pads[len(shape) + d] for d, n in enumerate(shape)]
    attributes = f'pads = array<i64: {", ".join(map(str, pads))}>, mode = "{mode}"'
    if value is not None:
        attributes += f", value = {value}"
    t, o = _t(shape, dtype), _t(out, dtype)
    return f"""func.func @main(%x: {t}) -> {o} {{
  %0 = graph.pad %x {{{attributes}}} : {t} -> {o}
  func.return %0 : {o}
}}"""


def _numpy_pad(x, pads, mode, value=0.0):
    """The negative amounts slice first, numpy.pad pads what is left
    (onnxruntime's order: wrap repeats the sliced tensor)."""
    rank = x.ndim
    amounts = list(zip(pads[:rank], pads[rank:], strict=True))
    left = x[tuple(slice(-min(b, 0), x.shape[d] + min(a, 0)) for d, (b, a) in enumerate(amounts))]
    grown = [(max(b, 0), max(a, 0)) for b, a in amounts]
    kwargs = {"constant_values": value} if mode == "constant" else {}
    return np.pad(left, grown, mode=mode, **kwargs)


@pytest.mark.parametrize(
    "shape, pads",
    [
        ([3, 37], [1, 0, 2, 0]),
        ([2, 5, 7], [0, 2, 3, 1, 0, 4]),
        ([4, 6], [-1, 2, 1, -3]),
        ([5, 7], [2, -2, -1, 3]),
        ([5], [3, 4]),
        ([1, 9], [2, 1, 3, 1]),
    ],
)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes(shape, pads, mode):
    x = _floats(shape)
    value = "-2.5 : f32" if mode == "constant" else None
    expected = _numpy_pad(x, pads, mode, -2.5)
    _check(_pad_text(shape, pads, mode, value), [x], expected)


def test_pad_integers_and_booleans():
    x = rng.integers(-100, 100, [3, 4]).astype(np.int32)
    _check(
        _pad_text([3, 4], [1, 2, 0, 1], value="7.0 : f32", dtype="i32"),
        [x],
        _numpy_pad(x, [1, 2, 0, 1], "constant", 7),
    )
    flags = rng.integers(0, 2, [2, 3]).astype(bool)
    _check(
        _pad_text([2, 3], [1, 1, 1, 1], value="1.0 : f32", dtype="i1"),
        [flags],
        _numpy_pad(flags, [1, 1, 1, 1], "constant", True),
    )


def test_pad_of_an_empty_tensor_is_the_fill_value():
    x = np.zeros([0, 3], np.float32)
    _check(_pad_text([0, 3], [2, 0, 0, 1]), [x], np.zeros([2, 4], np.float32))


# --- normalizations ---------------------------------------------------------------------------


def _rms_text(shape, axis, dtype="f32"):
    t, s = _t(shape, dtype), _t(shape[axis:], dtype)
    return f"""func.func @main(%x: {t}, %s: {s}) -> {t} {{
  %0 = graph.rms_norm %x, %s {{axis = {axis} : i64, epsilon = 1.0e-03 : f32}} : ({t}, {s}) -> {t}
  func.return %0 : {t}
}}"""


@pytest.mark.parametrize("shape, axis", [([3, 5, 37], 2), ([2, 7, 300], 1), ([4, 1], 1)])
def test_rms_norm(shape, axis):
    x = rng.normal(2.0, 3.0, shape).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, shape[axis:]).astype(np.float32)
    wide = x.astype(np.float64)
    axes = tuple(range(axis, len(shape)))
    expected = wide / np.sqrt(np.mean(wide**2, axis=axes, keepdims=True) + 1e-3) * scale
    _check(_rms_text(shape, axis), [x, scale], expected.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_rms_norm_special_values_follow_numpy():
    """A NaN makes its row NaN; an inf gives 0 for the finite elements and NaN for itself."""
    x = rng.normal(0, 1, [3, 20]).astype(np.float32)
    x[0, 3], x[1, 17] = np.nan, np.inf
    scale = np.ones([20], np.float32)
    with np.errstate(all="ignore"):
        expected = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + 1e-3)
    _check(_rms_text([3, 20], 1), [x, scale], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [[2, 3, 5, 7], [1, 4, 257], [2, 2, 1, 1]])
def test_instance_norm(shape):
    x = rng.normal(1.0, 2.0, shape).astype(np.float32)
    x.reshape(-1)[3] = np.nan  # one (n, c) slice turns NaN
    scale, bias = (rng.uniform(-1, 1, [shape[1]]).astype(np.float32) for _ in range(2))
    t, c = _t(shape), _t([shape[1]])
    text = f"""func.func @main(%x: {t}, %s: {c}, %b: {c}) -> {t} {{
  %0 = graph.instance_norm %x, %s, %b : ({t}, {c}, {c}) -> {t}
  func.return %0 : {t}
}}"""
    wide = x.astype(np.float64)
    axes = tuple(range(2, len(shape)))
    mean = wide.mean(axis=axes, keepdims=True)
    variance = ((wide - mean) ** 2).mean(axis=axes, keepdims=True)
    channel = [1, -1] + [1] * (len(shape) - 2)
    expected = (wide - mean) / np.sqrt(variance + 1e-5) * scale.reshape(channel) + bias.reshape(
        channel
    )
    _check(text, [x, scale, bias], expected.astype(np.float32), rtol=1e-5, atol=1e-5)


# --- f64, ui8, i16 ---------------------------------------------------------------------------


def _full_range(dtype, shape):
    if dtype.startswith("f"):
        return _floats(shape, DTYPES[dtype])
    info = np.iinfo(DTYPES[dtype])
    return rng.integers(int(info.min), int(info.max) + 1, shape).astype(DTYPES[dtype])


@pytest.mark.parametrize("dtype", ["f64", "ui8", "i16"])
def test_new_element_types_through_element_wise_ops_and_data_movement(dtype):
    """A fused element-wise chain (unsigned abs and max are not the signed
    ones), a reduction, a transpose, a gather and a cast: bit-exact integers,
    f64 to f64 precision."""
    t, row = _t([5, 19], dtype), _t([19], dtype)
    text = f"""func.func @main(%x: {t}, %y: {row}, %i: tensor<3xi64>) -> ({t}, {_t([5], dtype)}, {_t([19, 5], dtype)}, {_t([3, 19], dtype)}, {_t([5, 19], "f32")}) {{
  %0 = graph.abs %x : {t}
  %1 = graph.maximum %0, %y : ({t}, {row}) -> {t}
  %2 = graph.mul %1, %x : ({t}, {t}) -> {t}
  %3 = graph.reduce_max %x {{axes = array<i64: 1>}} : {t} -> {_t([5], dtype)}
  %4 = graph.transpose %2 {{perm = array<i64: 1, 0>}} : {t} -> {_t([19, 5], dtype)}
  %5 = graph.gather %x, %i : ({t}, tensor<3xi64>) -> {_t([3, 19], dtype)}
  %6 = graph.cast %x : {t} -> {_t([5, 19], "f32")}
  func.return %2, %3, %4, %5, %6 : {t}, {_t([5], dtype)}, {_t([19, 5], dtype)}, {_t([3, 19], dtype)}, {_t([5, 19], "f32")}
}}"""
    x, y = _full_range(dtype, [5, 19]), _full_range(dtype, [19])
    indices = np.array([4, -5, 0])
    with np.errstate(all="ignore"):
        product = np.maximum(np.abs(x), y) * x
        reduced = np.max(x, axis=1, initial=np.iinfo(x.dtype).min if dtype != "f64" else -np.inf)
        expected = [product, reduced, product.T, x[[4, 0, 0]], x.astype(np.float32)]
    for results in _both(text, x, y, indices):
        for result, wanted in zip(results, expected, strict=True):
            assert result.dtype == wanted.dtype
            np.testing.assert_array_equal(result, wanted)


def test_f64_transcendentals_keep_double_precision():
    t = _t([2, 37], "f64")
    text = f"""func.func @main(%x: {t}) -> ({t}, {t}) {{
  %0 = graph.tanh %x : {t}
  %1 = graph.softplus %x : {t}
  func.return %0, %1 : {t}, {t}
}}"""
    x = _floats([2, 37], np.float64)
    with np.errstate(invalid="ignore"):
        wanted = np.logaddexp(0.0, x)
    for tanh, softplus in _both(text, x):
        np.testing.assert_allclose(tanh, np.tanh(x), rtol=1e-14, equal_nan=True)
        np.testing.assert_allclose(softplus, wanted, rtol=1e-14, equal_nan=True)


@pytest.mark.parametrize("dtype", ["ui8", "i16"])
def test_new_integer_types_in_matmul_wrap_like_numpy(dtype):
    a, b = _full_range(dtype, [6, 40]), _full_range(dtype, [40, 7])
    text = _binary("matmul", [6, 40], [40, 7], [6, 7], dtype, dtype)
    expected = (a.astype(np.int64) @ b.astype(np.int64)).astype(DTYPES[dtype])
    _check(text, [a, b], expected)


def test_f64_erf_is_a_located_error_not_a_less_precise_result():
    t = _t([4], "f64")
    text = f"""func.func @main(%x: {t}) -> {t} {{
  %0 = graph.exp %x : {t}
  %1 = graph.gelu %0 : {t}
  func.return %1 : {t}
}}"""
    from graphcompiler.ir.diagnostics import DiagnosticError

    with pytest.raises(
        DiagnosticError, match=r"3:8: error: 'graph.gelu' op is not compiled for f64"
    ):
        graphcompiler.compile(text)
    x = np.array([0.5, -1.0, 2.0, np.nan])
    wanted = 0.5 * np.exp(x) * (1 + np.vectorize(math.erf)(np.exp(x) / math.sqrt(2)))
    np.testing.assert_allclose(reference.run(text, x), wanted, rtol=1e-15)


# --- where-style select, and the Python builder -----------------------------------------------


def test_select_broadcasts_all_three_operands_like_onnx_where():
    c, a, b = _t([4, 1], "i1"), _t([1, 19]), _t([19])
    o = _t([4, 19])
    text = f"""func.func @main(%c: {c}, %a: {a}, %b: {b}) -> {o} {{
  %0 = graph.select %c, %a, %b : ({c}, {a}, {b}) -> {o}
  func.return %0 : {o}
}}"""
    cond = np.array([[True], [False], [True], [False]])
    x, y = _floats([1, 19]), _floats([19])[::-1].copy()
    _check(text, [cond, x, y], np.where(cond, x, y))


def test_builder_makes_the_new_ops_with_python_properties():
    from graphcompiler.dialects.graph.builders import GraphBuilder, tensor_type

    g = GraphBuilder()
    table, ids = g.make_input([10, 4], "f64"), g.make_input([2, 3], "ui8")
    embedded = g.make("gather", [table, ids], axis=0).results[0]
    padded = g.make("pad", [embedded], pads=[0, 0, 1, 0, 0, 2], mode="edge").results[0]
    scale = g.make("constant", [], value=np.ones([7])).results[0]
    wide = g.make("cast", [scale], result_type=tensor_type([7], "f64")).results[0]
    normed = g.make("rms_norm", [padded, wide], epsilon=1e-3).results[0]
    g.make_output(g.make("selu", [normed], alpha=1.5).results[0])
    assert list(normed.type.get_shape()) == [2, 3, 7]
    x = rng.normal(0, 1, [10, 4])
    indices = np.array([[0, 9, 3], [250, 1, 2]], np.uint8)  # 250: out of range, zeros
    rows = _take(x, indices, 0)
    rows = np.pad(rows, [(0, 0), (0, 0), (1, 2)], mode="edge")
    rows = rows / np.sqrt(np.mean(rows**2, axis=-1, keepdims=True) + np.float32(1e-3))
    expected = 1.05070102214813232421875 * np.where(rows > 0, rows, 1.5 * np.expm1(rows))
    for result in _both(g.module(), x, indices):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-300)
