"""Unsigned integers of every width (ui8 ... ui64) compute as numpy's
uint8 ... uint64: arithmetic wraps, division, remainder, comparisons,
maximum/minimum, reductions and argmax read the values as unsigned (a
signed instruction would take 2**63 for a negative number), and casts to
and from floats keep values above the signed range. On every target (the
16-, 8- and 4-lane paths), 1 and 2 threads bitwise equal.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import graphcompiler
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
WIDTHS = [8, 16, 32, 64]
SHAPE = [3, 37]


def _values(dtype: np.dtype, seed: int) -> np.ndarray:
    """Values over the whole range, the top bit set in about half of them,
    and the extremes."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    values = rng.integers(0, info.max, SHAPE, dtype=dtype, endpoint=True)
    values.flat[:4] = [0, 1, info.max, info.max // 2 + 1]
    return values


def _graph(width: int) -> str:
    t = f"tensor<3x37xui{width}>"
    b = "tensor<3x37xi1>"
    return f"""func.func @main(%x: {t}, %y: {t}) -> ({t}, {t}, {t}, {t}, {t}, {t}, {t}, {b}, {b}, tensor<3x37xf64>, tensor<3x1xui{width}>, tensor<37xui{width}>, tensor<3x1xi64>, {t}) {{
  %add = graph.add %x, %y : ({t}, {t}) -> {t}
  %sub = graph.sub %x, %y : ({t}, {t}) -> {t}
  %mul = graph.mul %x, %y : ({t}, {t}) -> {t}
  %div = graph.div %x, %y : ({t}, {t}) -> {t}
  %mod = graph.mod %x, %y : ({t}, {t}) -> {t}
  %max = graph.maximum %x, %y : ({t}, {t}) -> {t}
  %min = graph.minimum %x, %y : ({t}, {t}) -> {t}
  %less = graph.less %x, %y : ({t}, {t}) -> {b}
  %ge = graph.greater_equal %x, %y : ({t}, {t}) -> {b}
  %wide = graph.cast %x : {t} -> tensor<3x37xf64>
  %rmax = graph.reduce_max %x {{axes = array<i64: 1>, keep_dims = true}} : {t} -> tensor<3x1xui{width}>
  %rmin = graph.reduce_min %x {{axes = array<i64: 0>, keep_dims = false}} : {t} -> tensor<37xui{width}>
  %arg = graph.argmax %x {{axis = 1 : i64, keep_dims = true}} : {t} -> tensor<3x1xi64>
  %shift = graph.shift_right %x, %y : ({t}, {t}) -> {t}
  func.return %add, %sub, %mul, %div, %mod, %max, %min, %less, %ge, %wide, %rmax, %rmin, %arg, %shift : {t}, {t}, {t}, {t}, {t}, {t}, {t}, {b}, {b}, tensor<3x37xf64>, tensor<3x1xui{width}>, tensor<37xui{width}>, tensor<3x1xi64>, {t}
}}"""


def _expected(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    bits = x.dtype.itemsize * 8
    shifted = np.where(y < bits, x >> np.minimum(y, bits - 1), 0).astype(x.dtype)
    return [
        x + y,
        x - y,
        x * y,
        x // y,
        x % y,
        np.maximum(x, y),
        np.minimum(x, y),
        x < y,
        x >= y,
        x.astype(np.float64),
        x.max(axis=1, keepdims=True),
        x.min(axis=0),
        x.argmax(axis=1, keepdims=True),
        shifted,
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("width", WIDTHS)
def test_unsigned_ops_match_numpy(monkeypatch, target, width):
    monkeypatch.setenv("GC_TARGET", target)
    dtype = np.dtype(f"uint{width}")
    x, y = _values(dtype, width), _values(dtype, width + 1)
    y[y == 0] = 3  # numpy's integer division by zero warns and gives 0
    y.flat[5:9] = [1, 2, width - 1, width]  # shift amounts inside and at the width
    compiled = graphcompiler.compile(_graph(width))
    compiled.set_num_threads(1)
    one = compiled(x, y)
    compiled.set_num_threads(2)
    two = compiled(x, y)
    with np.errstate(over="ignore"):
        expected = _expected(x, y)
    for index, (got, again, want) in enumerate(zip(one, two, expected, strict=True)):
        assert got.dtype == want.dtype, index
        np.testing.assert_array_equal(got, want, err_msg=f"output {index}")
        np.testing.assert_array_equal(again, got, err_msg=f"output {index}, 2 threads")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("width", [32, 64])
def test_float_to_unsigned_and_back(monkeypatch, target, width):
    """f32 -> ui32/ui64 truncates and saturates (NaN -> 0, negatives -> 0,
    too large -> the maximum); ui64 above 2**63 -> f32 rounds as numpy."""
    monkeypatch.setenv("GC_TARGET", target)
    u = f"tensor<17xui{width}>"
    compiled = graphcompiler.compile(
        f"""func.func @main(%x: tensor<17xf32>, %u: {u}) -> ({u}, tensor<17xf32>) {{
  %narrow = graph.cast %x : tensor<17xf32> -> {u}
  %back = graph.cast %u : {u} -> tensor<17xf32>
  func.return %narrow, %back : {u}, tensor<17xf32>
}}"""
    )
    top = float(np.iinfo(f"uint{width}").max)
    x = np.array(
        [0.0, 0.7, 1.5, 2.0**31, 2.0**31 + 256, 4e9, top * 2, -3.0, np.nan, np.inf, -np.inf]
        + [12345.9] * 6,
        np.float32,
    )
    info = np.iinfo(f"uint{width}")
    u = np.arange(17, dtype=info.dtype) * info.dtype.type(info.max // 17)
    narrow, back = compiled(x, u)
    truncated = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=2.0**70)
    want = [min(max(int(v), 0), info.max) for v in truncated]  # in Python ints: exact
    np.testing.assert_array_equal(narrow, np.array(want, dtype=info.dtype))
    np.testing.assert_array_equal(back, u.astype(np.float32))


@pytest.mark.parametrize("onnx_type", [TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64])
def test_onnx_unsigned_inputs(onnx_type):
    """An ONNX model over uint16/32/64 imports with those types (it was
    refused) and computes as onnxruntime's reference would: numpy's."""
    dtype = helper.tensor_dtype_to_np_dtype(onnx_type)
    nodes = [
        helper.make_node("Div", ["x", "y"], ["q"]),
        helper.make_node("Max", ["q", "y"], ["m"]),
        helper.make_node("Cast", ["m"], ["f"], to=TensorProto.DOUBLE),
    ]
    graph = helper.make_graph(
        nodes,
        "unsigned",
        [helper.make_tensor_value_info(n, onnx_type, [4, 5]) for n in "xy"],
        [helper.make_tensor_value_info("f", TensorProto.DOUBLE, [4, 5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    x, y = _values(dtype, 1)[:, :5][:3], _values(dtype, 2)[:, :5][:3]
    x, y = np.vstack([x, x[:1]]), np.vstack([y, y[:1]])
    y[y == 0] = 7
    got = graphcompiler.compile(model)(x=x, y=y)
    np.testing.assert_array_equal(got, np.maximum(x // y, y).astype(np.float64))
