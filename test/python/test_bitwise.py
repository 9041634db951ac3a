"""graph.bitwise_and, bitwise_or, bitwise_xor, bitwise_not, shift_left and
shift_right (dialects/graph/bitwise.py) on every integer type the compiler
takes, bit for bit against numpy: broadcasting, vector bodies and scalar
tails, shift amounts negative and at or past the width (the fill, where
LLVM's shift would be undefined), fused with other element-wise ops; and
the ONNX Bitwise* and BitShift converters."""

import numpy as np
import pytest
from onnx import TensorProto
from onnx_node_model import node_model

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx
from graphcompiler.interpreters import reference
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8}
rng = np.random.default_rng(53)


def _expected_shift(x, amount, right):
    width = np.iinfo(x.dtype).bits
    in_range = (amount.astype(np.int64) >= 0) & (amount.astype(np.int64) < width)
    safe = np.where(in_range, amount, 0).astype(x.dtype)
    shifted = np.right_shift(x, safe) if right else np.left_shift(x, safe)
    fill = np.where(x < 0, -1, 0) if right else 0
    return np.where(in_range, shifted, fill).astype(x.dtype)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", TYPES)
def test_bitwise_ops_bit_for_bit(monkeypatch, target, dtype):
    monkeypatch.setenv("GC_TARGET", target)
    info = np.iinfo(TYPES[dtype])
    x = rng.integers(info.min, info.max, (3, 37), endpoint=True).astype(TYPES[dtype])
    y = rng.integers(info.min, info.max, (37,), endpoint=True).astype(TYPES[dtype])
    width = info.bits
    low = -3 if info.min < 0 else 0
    amounts = rng.integers(low, width + 3, (3, 37)).astype(TYPES[dtype])  # in, below, past
    t, r = f"tensor<3x37x{dtype}>", f"tensor<37x{dtype}>"
    text = f"""func.func @main(%x: {t}, %y: {r}, %s: {t}) -> ({t}, {t}, {t}, {t}, {t}, {t}) {{
  %a = graph.bitwise_and %x, %y : ({t}, {r}) -> {t}
  %o = graph.bitwise_or %x, %y : ({t}, {r}) -> {t}
  %e = graph.bitwise_xor %x, %y : ({t}, {r}) -> {t}
  %n = graph.bitwise_not %x : {t}
  %l = graph.shift_left %x, %s : ({t}, {t}) -> {t}
  %h = graph.shift_right %x, %s : ({t}, {t}) -> {t}
  func.return %a, %o, %e, %n, %l, %h : {t}, {t}, {t}, {t}, {t}, {t}
}}"""
    expected = [x & y, x | y, x ^ y, ~x, _expected_shift(x, amounts, False),
                _expected_shift(x, amounts, True)]  # fmt: skip
    compiled = graphcompiler.compile(text, cache=False)
    assert compiled.graph.count("graph.fused") == 1  # one kernel for all six
    for results in (compiled(x, y, amounts), reference.run(text, x, y, amounts)):
        for got, want in zip(results, expected, strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_floats_are_refused():
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.bitwise_and %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}"""
    with pytest.raises(Exception, match="needs an integer type"):
        graphcompiler.compile(text, cache=False)


@pytest.mark.parametrize(
    "op_type, attributes",
    [("BitwiseAnd", {}), ("BitwiseOr", {}), ("BitwiseXor", {}), ("BitShift", {"direction": "LEFT"}),
     ("BitShift", {"direction": "RIGHT"})],
)  # fmt: skip
def test_onnx_converters(op_type, attributes):
    u8 = TensorProto.UINT8
    model = node_model(op_type, [("a", u8, [2, 9]), ("b", u8, [9])], [("c", u8, [2, 9])],
                       opset=18, **attributes)  # fmt: skip
    a = rng.integers(0, 256, (2, 9)).astype(np.uint8)
    b = rng.integers(0, 10, 9).astype(np.uint8)
    got = graphcompiler.compile(import_onnx(model), cache=False)(a, b)
    expected = {
        "BitwiseAnd": a & b, "BitwiseOr": a | b, "BitwiseXor": a ^ b,
    }.get(op_type)  # fmt: skip
    if expected is None:
        expected = _expected_shift(
            a, np.broadcast_to(b, a.shape), attributes["direction"] == "RIGHT"
        )
    np.testing.assert_array_equal(got, expected)
