"""softmax, log_softmax and layer_norm as fusion anchors (graph-fuse, the
`fused` template): the fused group computes what the unfused ops compute
and what the reference interprets, for producers evaluated on each load
(scale, broadcast mask, residual add) and consumers on each store (scale,
activation, cast), at odd row lengths (vector tails), both softmax schedules,
NaN/inf, 1 and 2 threads."""

import subprocess
import sys

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver.registration import GRAPH_PASSES, LLVM_STAGE, TIR_STAGE
from graphcompiler.interpreters import reference
from graphcompiler.ir.diagnostics import DiagnosticError

rng = np.random.default_rng(7)
UNFUSED = ",".join([p for p in GRAPH_PASSES if p != "graph-fuse"] + [TIR_STAGE, LLVM_STAGE])

ATTENTION_SCORES = """
func.func @main(%x: tensor<2x3x{n}x{n}xf32>, %mask: tensor<{n}x{n}xf32>) -> (tensor<2x3x{n}x{n}xf32>, tensor<2x3x{n}x{n}xf32>) {{
  %s = graph.constant dense<0.125> : tensor<1xf32>
  %0 = graph.mul %x, %s : (tensor<2x3x{n}x{n}xf32>, tensor<1xf32>) -> tensor<2x3x{n}x{n}xf32>
  %1 = graph.add %0, %mask : (tensor<2x3x{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<2x3x{n}x{n}xf32>
  %2 = graph.{op} %1 {{axis = -1 : i64}} : tensor<2x3x{n}x{n}xf32>
  %3 = graph.relu %2 : tensor<2x3x{n}x{n}xf32>
  %4 = graph.mul %2, %s : (tensor<2x3x{n}x{n}xf32>, tensor<1xf32>) -> tensor<2x3x{n}x{n}xf32>
  func.return %3, %4 : tensor<2x3x{n}x{n}xf32>, tensor<2x3x{n}x{n}xf32>
}}
"""

RESIDUAL_LAYER_NORM = """
func.func @main(%x: tensor<5x{n}xf32>, %a: tensor<5x{n}xf32>, %g: tensor<{n}xf32>, %b: tensor<{n}xf32>) -> (tensor<5x{n}xf32>, tensor<5x{n}xf16>) {{
  %h = graph.add %x, %a : (tensor<5x{n}xf32>, tensor<5x{n}xf32>) -> tensor<5x{n}xf32>
  %n = graph.layer_norm %h, %g, %b {{axis = 1 : i64}} : (tensor<5x{n}xf32>, tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<5x{n}xf32>
  %y = graph.gelu %n : tensor<5x{n}xf32>
  %c = graph.cast %y : tensor<5x{n}xf32> -> tensor<5x{n}xf16>
  func.return %y, %c : tensor<5x{n}xf32>, tensor<5x{n}xf16>
}}
"""


def _fused_ops(compiled) -> list[str]:
    return [line.strip() for line in str(compiled.graph).splitlines() if "graph.fused" in line]


def _check(text: str, inputs: list[np.ndarray], rtol: float, atol: float) -> None:
    fused = graphcompiler.compile(text)
    assert len(_fused_ops(fused)) == 1, fused.graph
    unfused = graphcompiler.compile(text, pipeline=UNFUSED)
    assert not _fused_ops(unfused)
    want = reference.run(graphcompiler.parse(text), *inputs)
    runs = []
    for threads in (1, 2):
        fused.set_num_threads(threads)
        runs.append(fused(*inputs))
    with np.errstate(invalid="ignore"):
        for got, other, plain, exact in zip(*runs, unfused(*inputs), want, strict=True):
            np.testing.assert_array_equal(got, other, err_msg="1 vs 2 threads differ")
            got, exact = np.asarray(got, np.float64), np.asarray(exact, np.float64)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
            np.testing.assert_allclose(got, exact, rtol=rtol, atol=atol)
            np.testing.assert_allclose(got, np.asarray(plain, np.float64), rtol=rtol, atol=atol)


@pytest.mark.parametrize("cached", [True, False], ids=["three-pass", "online"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("n", [1, 7, 16, 37, 100])
def test_softmax_of_scaled_masked_scores(op, n, cached, monkeypatch):
    from graphcompiler.lowering.graph_to_tir import normalization

    monkeypatch.setattr(normalization, "fits_in_cache", lambda kernel, element, length: cached)
    x = (rng.standard_normal([2, 3, n, n]) * 8).astype(np.float32)
    mask = np.where(np.tril(np.ones([n, n])) > 0, 0.0, -np.inf).astype(np.float32)
    x[0, 0, 0, 0] = np.nan  # one row all NaN
    x[1, 2, -1, 0] = np.inf  # one row NaN (inf - inf)
    _check(ATTENTION_SCORES.format(n=n, op=op), [x, mask], rtol=2e-5, atol=1e-6)


def test_softmax_runs_its_producers_once_per_element():
    """The three-pass softmax parks the first pass's inputs, so a fused
    group's producers (here a division) appear in one pass only: as many
    times as that pass's exponentials do in the next (the vector copies)."""

    def tir(text: str) -> str:
        return str(graphcompiler.compile(text, cache=False).tir)

    scaled = """
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %s = graph.constant dense<3.0> : tensor<1xf32>
  %a = graph.div %x, %s : (tensor<8x128xf32>, tensor<1xf32>) -> tensor<8x128xf32>
  %y = graph.softmax %a : tensor<8x128xf32>
  func.return %y : tensor<8x128xf32>
}"""
    plain = scaled.replace("graph.softmax %a", "graph.softmax %x")
    fused, alone = tir(scaled), tir(plain)
    assert fused.count("tir.div") - alone.count("tir.div") == fused.count("tir.exp") > 0


def test_layer_norm_parks_a_costly_row_once():
    """A fused layer_norm whose producers divide (quantize/dequantize round
    trips) parks each row in its first pass and reads it back: the division
    appears only where a row is parked. A cheap producer (a multiply) is
    evaluated on each of its three reads instead, with nothing parked."""

    def tir(op: str) -> str:
        text = f"""
func.func @main(%x: tensor<8x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<8x256xf32> {{
  %s = graph.constant dense<3.0> : tensor<1xf32>
  %a = graph.{op} %x, %s : (tensor<8x256xf32>, tensor<1xf32>) -> tensor<8x256xf32>
  %y = graph.layer_norm %a, %g, %b {{axis = 1 : i64}} : (tensor<8x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
  func.return %y : tensor<8x256xf32>
}}"""
        return str(graphcompiler.compile(text, cache=False).tir)

    divided, multiplied = tir("div"), tir("mul")
    parks = divided.count("tir.store") - multiplied.count("tir.store")
    assert parks > 0
    assert divided.count("tir.div") - multiplied.count("tir.div") == parks


@pytest.mark.parametrize("n", [1, 9, 64, 100, 1030])
def test_residual_layer_norm_gelu_cast(n):
    x, a = (rng.standard_normal([5, n]).astype(np.float32) * 3 + 10 for _ in range(2))
    gamma, beta = rng.standard_normal([2, n]).astype(np.float32)
    _check(RESIDUAL_LAYER_NORM.format(n=n), [x, a, gamma, beta], rtol=2e-3, atol=2e-4)


def test_verifier_rejects_a_producer_feeding_beyond_the_anchor():
    text = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = graph.fused %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = graph.exp %a : tensor<4x8xf32>
    %s = graph.softmax %e {axis = 1 : i64} : tensor<4x8xf32>
    %t = graph.add %s, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    graph.yield %t : tensor<4x8xf32>
  }
  func.return %r : tensor<4x8xf32>
}"""
    with pytest.raises(DiagnosticError, match="3:8: error: 'graph.fused' op 'graph.exp' before the anchor may only feed"):
        graphcompiler.parse(text)


def test_transformer_example_matches_the_reference():
    result = subprocess.run(
        [sys.executable, "-m", "graphcompiler.tools.gc_run", "examples/transformer.mlir",
         "--random-inputs", "--check-reference"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches the reference" in result.stdout
