"""graph.sin, cos, sign, round, floor, ceil and mod (element-wise: fused like
the others), graph.argmax, argmin, cumsum, cumprod and top_k_indices (a state carried
along an axis), and the ONNX converters built on them (Sin, Cos, Sign,
Round, Floor, Ceil, Mod, ArgMax, ArgMin, CumSum, CumProd, TopK).

Compiled results are checked against numpy formulas written here and
against the reference interpreter: bit for bit where the op is exact
(rounding, remainders, indices, sums added in order), within 0.5 ulp of
float64 for f32 sin and cos on their whole range; the ONNX converters
against onnxruntime.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx_node_model import node_model
from onnxruntime_session import session

import graphcompiler
from graphcompiler.frontends.onnx import NeedsConstantInput, OnnxImportError, import_onnx
from graphcompiler.interpreters import reference
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i64": np.int64,
          "i32": np.int32, "i8": np.int8, "ui8": np.uint8}  # fmt: skip
rng = np.random.default_rng(17)


def _t(shape, dtype="f32"):
    return "tensor<" + "x".join(str(s) for s in [*shape, dtype]) + ">"


def _unary(op, shape, dtype="f32", attributes="", out=None):
    """func @main applying graph.`op` to one argument."""
    t, o = _t(shape, dtype), out or _t(shape, dtype)
    signature = t if out is None else f"{t} -> {o}"
    return f"""func.func @main(%x: {t}) -> {o} {{
  %0 = graph.{op} %x {attributes} : {signature}
  func.return %0 : {o}
}}"""


def _several(op, shape, dtype, variants):
    """func @main applying graph.`op` to one argument once per (attributes, result
    type) in `variants` (None: the argument's type, written once), returning every
    result (one compile checks them all)."""
    t = _t(shape, dtype)
    lines = [
        f"  %{i} = graph.{op} %x {attributes} : {t}{'' if out is None else ' -> ' + out}"
        for i, (attributes, out) in enumerate(variants)
    ]
    outs = ", ".join(out or t for _, out in variants)
    values = ", ".join(f"%{i}" for i in range(len(variants)))
    body = "\n".join(lines)
    return f"func.func @main(%x: {t}) -> ({outs}) {{\n{body}\n  func.return {values} : {outs}\n}}"


def _same(got, expected):
    """Equal values, NaN where NaN, and the same sign of every zero."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def _wide(x):
    """f16 is computed in f32, then rounded once (as both paths do)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _both(text, *inputs):
    """The reference's and the compiled results."""
    return reference.run(text, *inputs), graphcompiler.compile(text)(*inputs)


# --- sin and cos ---------------------------------------------------------------------------

SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4028235e38, -3.4028235e38,
     np.pi / 2, np.pi, 1e4, 71476.0625, 1e5, 1.6e9, 8.5e37, 2.0**-20],
    np.float32,
)  # fmt: skip


def _hard_inputs() -> np.ndarray:
    """Near 0 and the first turns, every binade of both signs (denormals to the
    largest float), and random bit patterns of finite floats."""
    magnitudes = np.geomspace(1e-45, 3.4e38, 100_001)
    bits = rng.integers(0, 0x7F800000, 100_000, dtype=np.uint32).view(np.float32)
    parts = [np.linspace(-10, 10, 100_001), magnitudes, -magnitudes, bits, -bits, SPECIAL]
    return np.concatenate([np.asarray(p, np.float64) for p in parts]).astype(np.float32)


def _ulps(got: np.ndarray, x: np.ndarray, function) -> np.ndarray:
    """|got - f(x)| in units of the f32 spacing at f(x), f in float64."""
    exact = function(x.astype(np.float64))
    spacing = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


@pytest.mark.parametrize("target", TARGETS)
def test_sin_cos_f32_are_correctly_rounded_on_the_whole_range(monkeypatch, target):
    monkeypatch.setenv("GC_TARGET", target)
    x = _hard_inputs()
    t = _t([x.size])
    text = f"""func.func @main(%x: {t}) -> ({t}, {t}) {{
  %0 = graph.sin %x : {t}
  %1 = graph.cos %x : {t}
  func.return %0, %1 : {t}, {t}
}}"""
    compiled = graphcompiler.compile(text)
    assert "llvm.sin" not in compiled.llvm_ir and "llvm.cos" not in compiled.llvm_ir
    sine, cosine = compiled(x)
    finite = np.isfinite(x)
    with np.errstate(invalid="ignore"):
        for got, function in ((sine, np.sin), (cosine, np.cos)):
            assert _ulps(got[finite], x[finite], function).max() <= 0.501
            assert np.isnan(got[~finite]).all()  # inf and NaN
    np.testing.assert_array_equal(np.signbit(sine[x == 0]), np.signbit(x[x == 0]))


def test_sin_cos_of_f64_call_the_math_library_and_f16_runs_in_f32():
    x64 = np.concatenate([np.linspace(-20, 20, 1001), [0.0, -0.0, 1e300, np.inf, np.nan]])
    for op, function in (("sin", np.sin), ("cos", np.cos)):
        with np.errstate(invalid="ignore"):
            _same(graphcompiler.compile(_unary(op, [x64.size], "f64"))(x64), function(x64))
            x16 = np.linspace(-8, 8, 301).astype(np.float16)
            expected = function(x16.astype(np.float32)).astype(np.float16)
            for got in _both(_unary(op, [x16.size], "f16"), x16):
                np.testing.assert_allclose(got.astype(np.float32), expected, atol=1e-3)


# --- rounding and sign ---------------------------------------------------------------------

ROUNDING = np.array(
    [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 0.0, 1e-45, -1e-45, 8388607.5,
     8388609.0, 1e30, -1e30, np.inf, -np.inf, np.nan, 3.7, -3.7, 0.1, -0.9],
    np.float32,
)  # fmt: skip


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
def test_round_floor_ceil_sign_match_numpy_bit_for_bit(dtype):
    with np.errstate(over="ignore"):  # 1e30 is inf in f16
        x = np.resize(ROUNDING.astype(DTYPES[dtype]), 37)  # vector body and scalar tail
    for op, function in (("round", np.round), ("floor", np.floor), ("ceil", np.ceil),
                         ("sign", np.sign)):  # fmt: skip
        with np.errstate(invalid="ignore"):
            expected = function(_wide(x)).astype(x.dtype)
        for got in _both(_unary(op, [x.size], dtype), x):
            _same(got, expected)


@pytest.mark.parametrize("dtype", ["i32", "i8", "ui8", "i64"])
def test_sign_of_integers(dtype):
    info = np.iinfo(DTYPES[dtype])
    x = np.resize(np.array([0, 1, 5, info.max, info.min], DTYPES[dtype]), 19)
    for got in _both(_unary("sign", [x.size], dtype), x):
        _same(got, np.sign(x))


def test_rounding_rejects_integers():
    with pytest.raises(Exception, match="graph.round needs a floating-point type"):
        graphcompiler.compile(_unary("round", [4], "i32"))


# --- mod -------------------------------------------------------------------------------------


def _mod_text(shape_x, shape_y, dtype, fmod):
    tx, ty = _t(shape_x, dtype), _t(shape_y, dtype)
    out = _t(np.broadcast_shapes(tuple(shape_x), tuple(shape_y)), dtype)
    flag = " {fmod = true}" if fmod else ""
    return f"""func.func @main(%x: {tx}, %y: {ty}) -> {out} {{
  %0 = graph.mod %x, %y{flag} : ({tx}, {ty}) -> {out}
  func.return %0 : {out}
}}"""


FLOAT_EDGES = [(0.0, -2.0), (-0.0, 2.0), (0.0, 2.0), (-0.0, -2.0), (-3.0, np.inf), (3.0, np.inf),
               (-1.0, -np.inf), (1.0, -np.inf), (np.inf, 2.0), (-np.inf, 2.0), (1.0, 0.0),
               (1.0, -0.0), (np.nan, 1.0), (1.0, np.nan), (5.5, 2.0), (-5.5, 2.0), (5.5, -2.0),
               (-5.5, -2.0), (4.0, 2.0), (-4.0, 2.0), (1e30, 3.0), (-7.25, 0.5), (1e-40, -1.0)]  # fmt: skip


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
@pytest.mark.parametrize("fmod", [False, True])
def test_float_mod_is_numpy_mod_or_fmod(dtype, fmod):
    pairs = np.array(FLOAT_EDGES * 2 + [(v, 1.75) for v in rng.uniform(-30, 30, 11)])
    with np.errstate(over="ignore"):  # 1e30 is inf in f16
        x, y = (pairs[:, i].astype(DTYPES[dtype]) for i in (0, 1))
    function = np.fmod if fmod else np.mod
    with np.errstate(all="ignore"):
        expected = function(_wide(x), _wide(y)).astype(x.dtype)
    for got in _both(_mod_text([x.size], [y.size], dtype, fmod), x, y):
        _same(got, expected)


@pytest.mark.parametrize("dtype", ["i32", "i64", "i8", "ui8"])
@pytest.mark.parametrize("fmod", [False, True])
def test_integer_mod_never_traps(dtype, fmod):
    """x % 0 and INT_MIN % -1 are 0 (numpy's values, without numpy's warning);
    otherwise numpy.mod (the divisor's sign) or numpy.fmod (the dividend's)."""
    info = np.iinfo(DTYPES[dtype])
    x = rng.integers(info.min, info.max, (5, 24), endpoint=True).astype(DTYPES[dtype])
    x[0, :3] = [info.min, info.max, 0]
    y = np.array([3, 7, 0, 1, 2, 5, 100, 9] * 3, DTYPES[dtype])
    if info.min < 0:
        y[1::3] = -y[1::3]
        y[4] = -1
    function = np.fmod if fmod else np.mod
    safe = np.where((y == 0) | (y.astype(np.int64) == -1), 1, y).astype(y.dtype)
    expected = np.where((y == 0) | (y.astype(np.int64) == -1), 0, function(x, safe)).astype(x.dtype)
    for got in _both(_mod_text([5, 24], [24], dtype, fmod), x, y):
        _same(got, expected)


def test_new_elementwise_ops_fuse_into_one_kernel():
    t = _t([4, 33])
    text = f"""func.func @main(%x: {t}, %y: {t}) -> {t} {{
  %0 = graph.sin %x : {t}
  %1 = graph.mod %0, %y {{fmod = true}} : ({t}, {t}) -> {t}
  %2 = graph.floor %1 : {t}
  %3 = graph.sign %2 : {t}
  %4 = graph.cos %3 : {t}
  %5 = graph.round %4 : {t}
  %6 = graph.ceil %5 : {t}
  func.return %6 : {t}
}}"""
    compiled = graphcompiler.compile(text)
    assert compiled.tir.count("tir.func @fused") == 1 and "tir.func @sin" not in compiled.tir
    x, y = rng.uniform(-9, 9, (2, 4, 33)).astype(np.float32)
    expected, got = _both(text, x, y)
    _same(got, expected)


# --- argmax and argmin --------------------------------------------------------------------------


def _ties_and_nans(shape, dtype="f32"):
    """Few distinct values (many ties); floats also hold NaN, inf and -0."""
    x = rng.integers(-3, 4, shape).astype(DTYPES[dtype])
    if x.dtype.kind == "f":
        flat = x.reshape(-1)
        for value in (np.nan, np.inf, -np.inf, -0.0, np.nan):
            flat[rng.integers(0, flat.size)] = value
    return x


def _arg_expected(x, axis, largest, last, keep):
    """The documented rule, line by line: the first (last) best element, NaN the best of all."""
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape[:-1], np.int64)
    for p in np.ndindex(*moved.shape[:-1]):
        line = moved[p].astype(np.float64)
        nan = np.isnan(line)
        if nan.any():
            candidates = np.flatnonzero(nan)
        else:
            candidates = np.flatnonzero(line == (line.max() if largest else line.min()))
        out[p] = candidates[-1] if last else candidates[0]
    return np.expand_dims(out, axis) if keep else out


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["f32", "i32", "ui8", "f16"])
def test_arg_extremes_follow_numpy(op, axis, dtype):
    shape = [6, 21, 19]  # vectors along an outer axis; a scalar tail; a contiguous axis
    x = _ties_and_nans(shape, dtype)
    variants, expected = [], []
    for keep, last in ((False, False), (True, True), (False, True)):
        reduced = [1 if d == axis % 3 else s for d, s in enumerate(shape) if keep or d != axis % 3]
        flags = f"keep_dims = {str(keep).lower()}, select_last_index = {str(last).lower()}"
        variants.append((f"{{axis = {axis} : i64, {flags}}}", _t(reduced, "i64")))
        expected.append(_arg_expected(x, axis % 3, op == "argmax", last, keep))
    for results in _both(_several(op, shape, dtype, variants), x):
        for got, want in zip(results, expected, strict=True):
            _same(got, want)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["f32", "i8", "f16"])
def test_arg_extremes_along_long_contiguous_rows(op, dtype):
    """Several vector accumulators per row, their lanes combined by value then
    index, then a scalar tail: ties and NaNs across accumulators and in the tail."""
    shape = [5, 203]
    x = _ties_and_nans(shape, dtype)
    x[1] = 2  # all equal
    if dtype != "i8":
        x[2, [70, 150, 201]] = np.nan
        x[3, 201] = np.nan  # only in the scalar tail
    variants = [("{axis = 1 : i64}", _t([5], "i64")),
                ("{axis = 1 : i64, select_last_index = true}", _t([5], "i64"))]  # fmt: skip
    expected = [_arg_expected(x, 1, op == "argmax", last, False) for last in (False, True)]
    for results in _both(_several(op, shape, dtype, variants), x):
        for got, want in zip(results, expected, strict=True):
            _same(got, want)


def test_argmax_verifier_rejects_an_empty_axis():
    with pytest.raises(Exception, match="has an empty axis 1"):
        graphcompiler.compile(_unary("argmax", [3, 0], "f32", "{axis = 1 : i64}", _t([3], "i64")))


# --- cumsum -----------------------------------------------------------------------------------


def _running_expected(x, axis, exclusive, reverse, product=False):
    """Running sums (products) in x's type, in order."""
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros_like(moved)
    for p in np.ndindex(*moved.shape[:-1]):
        total = np.full((), int(product), np.float32 if x.dtype == np.float16 else x.dtype)
        order = range(moved.shape[-1] - 1, -1, -1) if reverse else range(moved.shape[-1])
        for i in order:
            if exclusive:
                out[p + (i,)] = total
            with np.errstate(over="ignore"):
                step = total * moved[p + (i,)] if product else total + moved[p + (i,)]
                total = step.astype(total.dtype)
            if not exclusive:
                out[p + (i,)] = total
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["f32", "i32", "i8", "f16"])
def test_running_totals_in_order(op, axis, dtype):
    shape = [3, 18, 11]
    if dtype == "i8":
        x = rng.integers(-128, 128, shape).astype(np.int8)  # sums and products wrap
    elif op == "cumprod":  # products near 1, so that some are neither 0 nor inf
        x = (rng.uniform(0.8, 1.25, shape) * rng.choice([-1, 1], shape)).astype(DTYPES[dtype])
        if dtype == "i32":
            x = rng.integers(-3, 4, shape).astype(np.int32)
    else:
        x = rng.uniform(-100, 100, shape).astype(DTYPES[dtype])
    variants, expected = [], []
    for exclusive, reverse in ((False, False), (True, False), (False, True), (True, True)):
        flags = f"exclusive = {str(exclusive).lower()}, reverse = {str(reverse).lower()}"
        variants.append((f"{{axis = {axis} : i64, {flags}}}", None))
        expected.append(_running_expected(x, axis, exclusive, reverse, op == "cumprod"))
    for results in _both(_several(op, shape, dtype, variants), x):
        for got, want in zip(results, expected, strict=True):
            _same(got, want)


# --- top_k_indices -------------------------------------------------------------------------------


def _top_k_expected(x, k, axis, largest):
    """Sorted by value (NaN above everything), equal values in index order."""
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros([*moved.shape[:-1], k], np.int64)
    for p in np.ndindex(*moved.shape[:-1]):
        line = moved[p].astype(np.float64)

        def key(i, line=line):
            rank = np.inf if np.isnan(line[i]) else line[i]
            return (-rank if largest else rank, i)

        out[p] = sorted(range(line.size), key=key)[:k]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["f32", "i32", "ui8"])
def test_top_k_indices_sort_with_ties_in_index_order(axis, dtype):
    shape = [5, 13, 9]
    x = _ties_and_nans(shape, dtype)
    variants, expected = [], []
    for k, largest in ((0, True), (1, False), (4, True), (4, False), (shape[axis], True)):
        out = [k if d == axis % 3 else s for d, s in enumerate(shape)]
        flags = f"k = {k} : i64, axis = {axis} : i64, largest = {str(largest).lower()}"
        variants.append((f"{{{flags}}}", _t(out, "i64")))
        expected.append(_top_k_expected(x, k, axis % 3, largest))
    for results in _both(_several("top_k_indices", shape, dtype, variants), x):
        for got, want in zip(results, expected, strict=True):
            _same(got, want)


def test_top_k_verifier_checks_k():
    with pytest.raises(Exception, match=r"k = 9 is not in \[0, 8\]"):
        graphcompiler.compile(
            _unary("top_k_indices", [2, 8], "f32", "{k = 9 : i64}", _t([2, 9], "i64"))
        )


# --- ONNX -------------------------------------------------------------------------------------


def _agrees_with_onnxruntime(model, *arrays):
    runtime = session(model)
    names = [i.name for i in runtime.get_inputs()]
    expected = runtime.run(None, dict(zip(names, arrays, strict=True)))
    got = graphcompiler.compile(import_onnx(model))(*arrays)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


@pytest.mark.parametrize("op_type", ["Sin", "Cos", "Sign", "Round", "Floor", "Ceil"])
def test_onnx_unary_ops(op_type):
    x = rng.uniform(-6, 6, (3, 17)).astype(np.float32)
    x[0, :4] = [0.5, 1.5, -2.5, -0.0]
    _agrees_with_onnxruntime(node_model(op_type, [("x", F, [3, 17])], [("y", F, [3, 17])]), x)


@pytest.mark.parametrize("fmod", [0, 1])
def test_onnx_mod_broadcasts(fmod):
    model = node_model(
        "Mod", [("a", I32, [4, 9]), ("b", I32, [9])], [("c", I32, [4, 9])], fmod=fmod
    )
    a = rng.integers(-50, 50, (4, 9)).astype(np.int32)
    b = np.array([3, -3, 7, -7, 1, 2, -5, 11, 4], np.int32)
    _agrees_with_onnxruntime(model, a, b)


@pytest.mark.parametrize("base_type", [I32, I64])
@pytest.mark.parametrize("exponent_type", [I32, I64, F])
def test_onnx_integer_pow_is_onnxruntimes(base_type, exponent_type):
    """An integer base: raised in f64 and converted back, an integer
    exponent's result rounded (exact below 2**53), a float exponent's
    truncated, as onnxruntime does."""
    dtypes = {I32: np.int32, I64: np.int64, F: np.float32}
    model = node_model(
        "Pow", [("x", base_type, [4, 6]), ("y", exponent_type, [6])], [("z", base_type, [4, 6])]
    )
    x = rng.integers(-9, 10, (4, 6)).astype(dtypes[base_type])
    y = np.array([0, 1, 2, 3, 5, 7] if exponent_type != F else [0, 0.5, 1.5, 2, 3, 1.7])
    y = y.astype(dtypes[exponent_type])
    x[:, [1, 2, 5]] = np.abs(x[:, [1, 2, 5]])  # real powers (a NaN to int is undefined in C)
    _agrees_with_onnxruntime(model, x, y)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
def test_onnx_boolean_max_and_min_are_any_and_all(op_type):
    axes = onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")
    model = node_model(
        op_type, [("x", TensorProto.BOOL, [3, 5])], [("y", TensorProto.BOOL, [3, 1])], [axes],
        opset=20,
    )  # fmt: skip
    x = np.array([[1, 0, 1, 1, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], np.bool_)
    got = graphcompiler.compile(import_onnx(model))(x)
    expected = x.any(1, keepdims=True) if op_type == "ReduceMax" else x.all(1, keepdims=True)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "op_type", ["ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]
)
def test_onnx_reductions_over_no_axes_keep_their_element_wise_parts(op_type):
    """noop_with_empty_axes and no axes: nothing is summed, but |x|, x^2,
    exp and log still apply (ReduceL2 is |x|), as onnxruntime computes."""
    model = node_model(
        op_type, [("x", F, [3, 4])], [("y", F, [3, 4])], opset=18, noop_with_empty_axes=1
    )
    x = rng.uniform(-3, 3, (3, 4)).astype(np.float32)
    if op_type == "ReduceLogSum":
        x = np.abs(x) + 0.5
    _agrees_with_onnxruntime(model, x)


def test_onnx_log_sum_exp_of_large_values_does_not_overflow():
    """The maximum is taken out before exp (1e8 gave inf); a row of -inf
    stays -inf and a NaN stays NaN, as numpy's log(sum(exp(x)))."""
    axes = onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")
    model = node_model("ReduceLogSumExp", [("x", F, [4, 3])], [("y", F, [4])], [axes], keepdims=0)
    x = np.array([[1e8, 1e8 - 2, 3.0], [-np.inf] * 3, [np.nan, 0.0, 1.0], [-5.0, 0.5, 2.0]],
                 np.float32)  # fmt: skip
    got = graphcompiler.compile(import_onnx(model), cache=False)(x)
    peak = np.max(np.where(np.isfinite(x), x, 0.0), axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.log(np.exp(x.astype(np.float64) - peak).sum(1)) + peak[:, 0]
    np.testing.assert_allclose(got, expected.astype(np.float32), rtol=1e-6)
    assert got[1] == -np.inf and np.isnan(got[2])


def test_onnx_arg_extremes_and_cumsum():
    x = _ties_and_nans([4, 10], "f32")
    x[np.isnan(x)] = 1.0  # onnxruntime does not promise numpy's NaN rule
    model = node_model("ArgMin", [("x", F, [4, 10])], [("i", I64, [4])], axis=1, keepdims=0)
    _agrees_with_onnxruntime(model, x)
    model = node_model("ArgMax", [("x", F, [4, 10])], [("i", I64, [1, 10])], select_last_index=1)
    _agrees_with_onnxruntime(model, x)
    axis = onnx.numpy_helper.from_array(np.array(-1, np.int64), "axis")
    model = node_model(
        "CumSum", [("x", F, [4, 10])], [("y", F, [4, 10])], [axis], exclusive=1, reverse=1
    )
    _agrees_with_onnxruntime(model, rng.uniform(-1, 1, (4, 10)).astype(np.float32))
    model = node_model("CumProd", [("x", F, [4, 10])], [("y", F, [4, 10])], [axis], exclusive=1)
    x = rng.uniform(-1, 1, (4, 10)).astype(np.float32)
    try:
        _agrees_with_onnxruntime(model, x)
    except Exception as error:  # an onnxruntime without CumProd (opset 26): numpy's
        if "CumProd" not in str(error):
            raise
        expected = np.concatenate([np.ones((4, 1), np.float32), np.cumprod(x, 1)[:, :-1]], 1)
        got = graphcompiler.compile(import_onnx(model))(x)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("largest", [0, 1])
def test_onnx_top_k_gives_values_and_indices(largest):
    k = onnx.numpy_helper.from_array(np.array([3], np.int64), "k")
    outputs = [("values", F, [5, 3, 2]), ("indices", I64, [5, 3, 2])]
    model = node_model(
        "TopK", [("x", F, [5, 7, 2])], outputs, [k], axis=1, largest=largest, sorted=1
    )
    x = rng.integers(-2, 3, (5, 7, 2)).astype(np.float32)  # ties
    _agrees_with_onnxruntime(model, x)
    module = str(import_onnx(model))
    assert "graph.top_k_indices" in module and "graph.gather_elements" in module


def test_onnx_errors_are_one_line():
    k_input = node_model(
        "TopK", [("x", F, [2, 5]), ("k", I64, [1])], [("v", F, [2, 3]), ("i", I64, [2, 3])]
    )
    with pytest.raises(NeedsConstantInput, match=r"input #1 \(k\) must be a constant"):
        import_onnx(k_input)
    two_axes = onnx.numpy_helper.from_array(np.array([0, 1], np.int64), "axis")
    cumsum = node_model("CumSum", [("x", F, [2, 5])], [("y", F, [2, 5])], [two_axes])
    with pytest.raises(OnnxImportError, match="axis must be one integer, got shape"):
        import_onnx(cumsum)
    rounding = node_model("Round", [("x", I32, [4])], [("y", I32, [4])])
    with pytest.raises(
        OnnxImportError, match=r"\(Round\): .* needs a floating-point type"
    ) as error:
        import_onnx(rounding)
    assert "\n" not in str(error.value)
    mod = node_model("Mod", [("a", F, [4]), ("b", F, [4])], [("c", F, [4])], fmod=2)
    with pytest.raises(OnnxImportError, match="attribute 'fmod' = 2 is not supported"):
        import_onnx(mod)
