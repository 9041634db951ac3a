"""graph-lookup-tables: element-wise chains from one byte tensor to a byte
tensor (a quantized model's activations) read a table of 256 entries made
by the reference interpreter; compiled, they give the reference's bytes."""

import json

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.target.description import get_target, supported

FUNCTIONS = {
    "gelu": "%g = graph.gelu %d : {t}",
    "sigmoid": "%g = graph.sigmoid %d : {t}",
    "tanh": "%g = graph.tanh %d : {t}",
    "exp": "%g = graph.exp %d : {t}",
}


def _chain(shape, source: str, result: str, function: str) -> str:
    """dequantize (scale 0.07, zero point 9) -> function -> quantize (scale
    0.02, zero point 5 for u8, -3 for i8)."""
    dims = "x".join(map(str, shape))
    t, x, y = f"tensor<{dims}xf32>", f"tensor<{dims}x{source}>", f"tensor<{dims}x{result}>"
    zero = 5.0 if result == "ui8" else -3.0
    return f"""func.func @main(%x: {x}) -> {y} {{
  %s = graph.constant dense<0.07> : tensor<f32>
  %z = graph.constant dense<9.0> : tensor<f32>
  %q = graph.constant dense<0.02> : tensor<f32>
  %p = graph.constant dense<{zero}> : tensor<f32>
  %c = graph.cast %x : {x} -> {t}
  %u = graph.sub %c, %z : ({t}, tensor<f32>) -> {t}
  %d = graph.mul %u, %s : ({t}, tensor<f32>) -> {t}
  {FUNCTIONS[function].format(t=t)}
  %v = graph.div %g, %q : ({t}, tensor<f32>) -> {t}
  %r = graph.round %v : {t}
  %a = graph.add %r, %p : ({t}, tensor<f32>) -> {t}
  %y = graph.cast %a : {t} -> {y}
  func.return %y : {y}
}}"""


def _every_byte(shape, element: str) -> np.ndarray:
    values = np.arange(256) - (128 if element == "i8" else 0)
    return np.resize(values, shape).astype(np.int8 if element == "i8" else np.uint8)


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
@pytest.mark.parametrize("source, result", [("ui8", "ui8"), ("i8", "i8"), ("i8", "ui8")])
def test_byte_chains_read_the_reference_table(function, source, result):
    """Every byte value, saturation at both ends included (exp overflows
    the result's range), gives the reference interpreter's byte."""
    program = _chain((3, 100), source, result, function)
    compiled = graphcompiler.compile(program, cache=False)
    assert "graph.lookup" in compiled.graph
    x = _every_byte((3, 100), source)
    want = reference.run(graphcompiler.parse(program), x)
    np.testing.assert_array_equal(compiled(x), want)


@pytest.mark.parametrize("target", ["host", "avx512", "avx2"])
@pytest.mark.parametrize("source, result", [("ui8", "ui8"), ("i8", "ui8"), ("ui8", "i8")])
def test_tables_read_64_bytes_at_once_where_the_target_permutes_bytes(
    monkeypatch, target, source, result
):
    """On a host with AVX512-VBMI, 64 bytes a step (`vpermi2b`) and a
    scalar tail (1000 = 15 x 64 + 40); the fixed targets have no VBMI and
    read the table per byte. Each gives the reference's bytes."""
    if not supported(target):
        pytest.skip(f"this host cannot run {target} code")
    monkeypatch.setenv("GC_TARGET", target)
    program = _chain((1000,), source, result, "sigmoid")
    compiled = graphcompiler.compile(program, cache=False)
    permutes = "avx512vbmi" in get_target().extensions
    assert ("vpermi2var" in compiled.llvm_ir) == permutes
    x = np.random.default_rng(7).permutation(_every_byte((1000,), source))
    np.testing.assert_array_equal(compiled(x), reference.run(graphcompiler.parse(program), x))


def test_a_big_table_read_is_cut_into_parallel_chunks():
    """300 x 1001 bytes: the flat walk in parallel chunks of whole vectors,
    then the vectors and bytes after the last chunk, on two threads."""
    program = _chain((300, 1001), "i8", "ui8", "gelu")
    compiled = graphcompiler.compile(program, cache=False)
    assert "parallel" in compiled.tir
    compiled.set_num_threads(2)
    x = np.random.default_rng(11).integers(-128, 128, (300, 1001)).astype(np.int8)
    np.testing.assert_array_equal(compiled(x), reference.run(graphcompiler.parse(program), x))


def test_a_table_runs_on_blocked_tensors():
    """A u8 convolution's requantized output through a QDQ SiLU: the
    table reads the channel-blocked bytes (no reorder around it)."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (1, 32, 6, 6)).astype(np.uint8)
    w = rng.integers(-128, 128, (32, 32, 1, 1)).astype(np.int8)
    t, b = "tensor<1x32x6x6xf32>", "tensor<1x32x6x6xui8>"
    program = f"""func.func @main(%x: {b}) -> {b} {{
  %w = graph.constant dense<{json.dumps(w.tolist())}> : tensor<32x32x1x1xi8>
  %s = graph.constant dense<0.0004> : tensor<f32>
  %z = graph.constant dense<7.0> : tensor<f32>
  %q = graph.constant dense<0.004> : tensor<f32>
  %i = graph.conv2d %x, %w : ({b}, tensor<32x32x1x1xi8>) -> tensor<1x32x6x6xi32>
  %f = graph.cast %i : tensor<1x32x6x6xi32> -> {t}
  %m = graph.mul %f, %s : ({t}, tensor<f32>) -> {t}
  %r = graph.div %m, %q : ({t}, tensor<f32>) -> {t}
  %o = graph.round %r : {t}
  %a = graph.add %o, %z : ({t}, tensor<f32>) -> {t}
  %u = graph.cast %a : {t} -> {b}
  %c = graph.cast %u : {b} -> {t}
  %e = graph.sub %c, %z : ({t}, tensor<f32>) -> {t}
  %d = graph.mul %e, %q : ({t}, tensor<f32>) -> {t}
  %g = graph.sigmoid %d : {t}
  %h = graph.mul %g, %d : ({t}, {t}) -> {t}
  %v = graph.div %h, %q : ({t}, tensor<f32>) -> {t}
  %n = graph.round %v : {t}
  %k = graph.add %n, %z : ({t}, tensor<f32>) -> {t}
  %y = graph.cast %k : {t} -> {b}
  func.return %y : {b}
}}"""
    compiled = graphcompiler.compile(program, cache=False)
    assert "graph.lookup" in compiled.graph
    lanes = get_target().f32_lanes  # the block: the target's (GC_TARGET's, else the host's)
    blocked = f"x{lanes}xui8> -> tensor<1x{32 // lanes}x6x6x{lanes}xui8>"
    assert blocked in compiled.graph  # the table on blocks
    np.testing.assert_array_equal(compiled(x), reference.run(graphcompiler.parse(program), x))


def test_chained_tables_merge_into_one():
    """GELU as a QDQ BERT quantizes it, stage by stage: erf, times x,
    times 0.5, each requantized. The stages' tables merge into one that
    reads x, and every byte value still gives the reference's byte."""
    t, b = "tensor<256xf32>", "tensor<256xui8>"

    def requantized(value: str, name: str) -> str:
        return f"""  %{name}_d = graph.div %{value}, %s : ({t}, tensor<f32>) -> {t}
  %{name}_r = graph.round %{name}_d : {t}
  %{name} = graph.cast %{name}_r : {t} -> {b}
  %{name}_c = graph.cast %{name} : {b} -> {t}
  %{name}_f = graph.mul %{name}_c, %s : ({t}, tensor<f32>) -> {t}
"""

    program = f"""func.func @main(%x: {b}) -> {b} {{
  %s = graph.constant dense<0.03> : tensor<f32>
  %h = graph.constant dense<0.5> : tensor<f32>
  %c = graph.cast %x : {b} -> {t}
  %d = graph.mul %c, %s : ({t}, tensor<f32>) -> {t}
  %e = graph.erf %d : {t}
{requantized("e", "q1")}  %m = graph.mul %q1_f, %d : ({t}, {t}) -> {t}
{requantized("m", "q2")}  %n = graph.mul %q2_f, %h : ({t}, tensor<f32>) -> {t}
{requantized("n", "q3")}  func.return %q3 : {b}
}}"""
    compiled = graphcompiler.compile(program, cache=False)
    assert compiled.graph.count("graph.lookup") == 1
    x = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(compiled(x), reference.run(graphcompiler.parse(program), x))
