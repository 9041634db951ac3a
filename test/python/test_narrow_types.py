"""The storage types: float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ), float4
E2M1FN, and 4- and 2-bit integers. Their numpy conversions against
ml_dtypes (what onnx's reference uses), the compiled casts against those,
and their ONNX import (Cast, QuantizeLinear, DequantizeLinear, block-wise
scales)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import graphcompiler
from graphcompiler.frontends.onnx import OnnxImportError
from graphcompiler.ir.narrow_floats import FORMATS

ml_dtypes = pytest.importorskip("ml_dtypes")

ML_DTYPES = {
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
}
ONNX_TYPES = {
    "f8E4M3FN": TensorProto.FLOAT8E4M3FN,
    "f8E4M3FNUZ": TensorProto.FLOAT8E4M3FNUZ,
    "f8E5M2": TensorProto.FLOAT8E5M2,
    "f8E5M2FNUZ": TensorProto.FLOAT8E5M2FNUZ,
    "f4E2M1FN": TensorProto.FLOAT4E2M1,
}


def _probe_values(name: str, count: int = 4000) -> np.ndarray:
    """Every code's value, the midpoints between neighbours (ties) and the
    floats next to them, both signs, random bit patterns, and NaN/inf/0."""
    fmt = FORMATS[name]
    finite = np.unique(fmt.values[np.isfinite(fmt.values)].astype(np.float64))
    mids = ((finite[1:] + finite[:-1]) / 2).astype(np.float32)
    near = [np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))]
    top = np.float32(fmt.max_value)
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0, -0.0, top * 1.0625, top * 1.07, 1e-30])
    pieces = [finite, mids, -mids, *near, bits, special]
    return np.concatenate([piece.astype(np.float32) for piece in pieces])


@pytest.mark.parametrize("name", list(FORMATS))
def test_encode_and_decode_match_ml_dtypes(name):
    fmt, dtype = FORMATS[name], ML_DTYPES[name]
    values = _probe_values(name, 200_000)
    with np.errstate(invalid="ignore", over="ignore"):
        want = values.astype(dtype).view(np.uint8)
    assert np.array_equal(fmt.encode(values), want)
    codes = np.arange(1 << fmt.bits, dtype=np.uint8)
    assert np.array_equal(fmt.decode(codes), codes.view(dtype).astype(np.float32), equal_nan=True)


def _cast_model(source: int, target: int, shape: list[int], saturate: int | None = None):
    attributes = {"to": target} | ({} if saturate is None else {"saturate": saturate})
    node = helper.make_node("Cast", ["x"], ["y"], **attributes)
    graph = helper.make_graph(
        [node], "cast",
        [helper.make_tensor_value_info("x", source, shape)],
        [helper.make_tensor_value_info("y", target, shape)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


@pytest.mark.parametrize("name", list(FORMATS))
def test_compiled_casts_round_like_ml_dtypes(name):
    """f32 -> format -> f32 through the compiled code (vector lanes and a
    scalar tail: 37 elements) equals ml_dtypes' conversion, NaN for NaN;
    saturate=0 leaves overflow to inf/NaN, the default clamps first."""
    fmt, dtype = FORMATS[name], ML_DTYPES[name]
    values = _probe_values(name)
    values = values[: len(values) // 37 * 37].reshape(-1, 37)
    with np.errstate(invalid="ignore", over="ignore"):
        exact = values.astype(dtype).astype(np.float32)
        clamped = np.clip(values, -fmt.max_value, fmt.max_value).astype(dtype).astype(np.float32)
    for saturate, want in ((0, exact), (1, clamped)):
        to_format = graphcompiler.compile(
            _cast_model(TensorProto.FLOAT, ONNX_TYPES[name], list(values.shape), saturate),
            cache=False,
        )
        got = to_format(values)
        assert got.dtype == np.float32  # values cross the boundary as float32
        np.testing.assert_array_equal(got, want, err_msg=f"saturate={saturate}")
    back = graphcompiler.compile(
        _cast_model(ONNX_TYPES[name], TensorProto.FLOAT, list(values.shape)), cache=False
    )
    codes = np.arange(values.size, dtype=np.int64).reshape(values.shape) % (1 << fmt.bits)
    codes = codes.astype(np.uint8)
    np.testing.assert_array_equal(back(codes), fmt.decode(codes))  # uint8 arrays are codes


@pytest.mark.parametrize(
    "onnx_type, dtype",
    [
        (TensorProto.INT4, "int4"),
        (TensorProto.UINT4, "uint4"),
        (TensorProto.INT2, "int2"),
        (TensorProto.UINT2, "uint2"),
    ],
)
def test_casts_to_narrow_integers_keep_the_low_bits(onnx_type, dtype):
    """As ml_dtypes (and onnx's Cast): truncated toward zero, then wrapped."""
    values = np.array(
        [[-9.7, -8, -2.5, -1, 0, 0.9, 1.5, 7, 8, 15.5, 16, 17, 100, -100]], np.float32
    )
    narrow = getattr(ml_dtypes, dtype)
    compiled = graphcompiler.compile(
        _cast_model(TensorProto.FLOAT, onnx_type, [1, 14]), cache=False
    )
    want = values.astype(narrow).astype(np.int64)
    np.testing.assert_array_equal(compiled(values).astype(np.int64), want)
    back = graphcompiler.compile(_cast_model(onnx_type, TensorProto.FLOAT, [1, 14]), cache=False)
    held = want.astype(np.uint8 if dtype.startswith("u") else np.int8)
    np.testing.assert_array_equal(back(held), want.astype(np.float32))


def _node_model(op, inputs, outputs, initializers, opset=23, **attributes):
    node = helper.make_node(op, [i[0] for i in inputs] + [t.name for t in initializers],
                            [o[0] for o in outputs], **attributes)  # fmt: skip
    graph = helper.make_graph(
        [node], op,
        [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs], initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("axis", [0, 1])
def test_block_wise_dequantize_of_int4_weights(axis):
    """4-bit weights with one scale and zero point per 4 elements along
    `axis` (the last block partial), as 4-bit LLM exports store them."""
    rng = np.random.default_rng(3)
    shape, block = [10, 6], 4
    blocks = list(shape)
    blocks[axis] = -(-shape[axis] // block)
    q = rng.integers(-8, 8, shape).astype(ml_dtypes.int4)
    scale = rng.uniform(0.1, 1.0, blocks).astype(np.float32)
    zero = rng.integers(-2, 3, blocks).astype(ml_dtypes.int4)
    initializers = [numpy_helper.from_array(q, "q"), numpy_helper.from_array(scale, "s"),
                    numpy_helper.from_array(zero, "z")]  # fmt: skip
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis, block_size=block)
    graph = helper.make_graph(
        [node], "dq", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        initializers,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    repeat = lambda a: np.repeat(a, block, axis=axis).take(range(shape[axis]), axis=axis)  # noqa: E731
    want = (q.astype(np.float32) - repeat(zero.astype(np.float32))) * repeat(scale)
    np.testing.assert_allclose(graphcompiler.compile(model, cache=False)(), want, rtol=1e-6)


def test_quantize_to_int4_saturates_and_rounds_half_to_even():
    x = np.array([-100.0, -17.0, -2.5, -1.5, 0.5, 2.5, 13.0, 100.0], np.float32)
    inits = [numpy_helper.from_array(np.float32(2.0), "s"),
             numpy_helper.from_array(np.array(1, ml_dtypes.int4), "z")]  # fmt: skip
    model = _node_model("QuantizeLinear", [("x", TensorProto.FLOAT, [8])],
                        [("y", TensorProto.INT4, [8])], inits)  # fmt: skip
    want = np.clip(np.round(x / 2.0) + 1, -8, 7)
    np.testing.assert_array_equal(graphcompiler.compile(model, cache=False)(x), want)


def test_unsupported_quantization_is_refused_naming_the_node():
    inits = [numpy_helper.from_array(np.ones([3, 4], np.float32), "s")]
    model = _node_model("DequantizeLinear", [("x", TensorProto.INT8, [2, 4])],
                        [("y", TensorProto.FLOAT, [2, 4])], inits, axis=0, block_size=2)  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"node 'y' \(DequantizeLinear\).*expected \[1, 4\]"):
        graphcompiler.compile(model, cache=False)
    model = _cast_model(TensorProto.FLOAT, TensorProto.FLOAT8E8M0, [4])
    with pytest.raises(OnnxImportError, match="FLOAT8E8M0 is not supported"):
        graphcompiler.compile(model, cache=False)


def test_graph_ops_other_than_casts_and_moves_refuse_storage_types():
    text = """
    func.func @main(%x: tensor<4xf8E5M2>) -> tensor<4xf8E5M2> {
      %0 = graph.mul %x, %x : (tensor<4xf8E5M2>, tensor<4xf8E5M2>) -> tensor<4xf8E5M2>
      func.return %0 : tensor<4xf8E5M2>
    }"""
    with pytest.raises(Exception, match="graph.mul does not compute on f8E5M2, a storage type"):
        graphcompiler.compile(text, cache=False)


@pytest.mark.parametrize(
    "source, target, values",
    [
        ("f32", "i32", np.array([1.0, -0.0, np.inf, np.nan, 3.5e-45, -2.5], np.float32)),
        ("i32", "f32", np.array([0x3F800000, -1, 0x7F800001, 1, 0, -(2**31)], np.int32)),
        ("f64", "i64", np.array([1.0, -0.0, np.inf, 1e-310, -2.5, 7.0])),
        ("bf16", "i16", np.array([1.0, -2.5, np.inf, -0.0, 3.0e38, 1e-3], np.float32)),
        ("f16", "ui16", np.array([1.0, -2.5, np.inf, -0.0, 6e-8, 65504], np.float16)),
        ("f8E4M3FN", "ui8", np.array([0.5, 448.0, -2.0, -0.0, 0.001953125, 3.0], np.float32)),
        ("ui8", "f8E5M2", np.array([0x3C, 0x7C, 0xFC, 0x7E, 1, 0], np.uint8)),
        ("i8", "ui8", np.array([-1, -128, 127, 0, 5, -7], np.int8)),
        ("i1", "ui8", np.array([True, False, True, True, False, False])),
        ("i4", "ui4", np.array([-1, -8, 7, 0, 3, -3], np.int8)),
        ("f4E2M1FN", "i4", np.array([6.0, -0.5, -6.0, 1.5, 0.0, -1.0], np.float32)),
    ],
)
def test_bitcast_reads_the_stored_bits(source, target, values):
    """graph.bitcast, compiled (vector lanes and a tail: 6 x 7 elements),
    equals the reference, which views the stored bits with numpy."""
    from graphcompiler.interpreters import reference

    data = np.tile(values, 7).reshape(6, 7)
    text = (
        f"func.func @main(%x: tensor<6x7x{source}>) -> tensor<6x7x{target}> {{\n"
        f"  %0 = graph.bitcast %x : tensor<6x7x{source}> -> tensor<6x7x{target}>\n"
        f"  func.return %0 : tensor<6x7x{target}>\n}}"
    )
    got, want = graphcompiler.compile(text, cache=False)(data), reference.run(text, data)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    if source == "f32":  # and the reference is numpy's view
        np.testing.assert_array_equal(want, data.view(np.int32))
