"""Element-wise ops and fused element-wise groups walk contiguous operands
as one flat range, split into enough parallel chunks for every thread
(whatever the outer dimension), with whole vectors in the hot loop and the
scalar tail after it; the issue's chain `exp(relu(x*2+1)) - x` is one fused
loop even with its constants written between the ops.
"""

import numpy as np
import pytest

import graphcompiler
from graphcompiler.lowering.graph_to_tir.kernel import PARALLEL_CHUNKS, flat_chunks
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
rng = np.random.default_rng(12)


def _t(shape):
    return "tensor<" + "x".join(str(s) for s in [*shape, "f32"]) + ">" if shape else "tensor<f32>"


def _chain(shape):
    t = _t(shape)
    return f"""func.func @main(%x: {t}) -> {t} {{
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %0 = graph.mul %x, %two : ({t}, tensor<1xf32>) -> {t}
  %one = graph.constant dense<1.0> : tensor<1xf32>
  %1 = graph.add %0, %one : ({t}, tensor<1xf32>) -> {t}
  %2 = graph.relu %1 : {t}
  %3 = graph.exp %2 : {t}
  %4 = graph.sub %3, %x : ({t}, {t}) -> {t}
  func.return %4 : {t}
}}"""


def _run_both(compiled, *inputs):
    compiled.set_num_threads(1)
    one = compiled(*inputs)
    compiled.set_num_threads(2)
    two = compiled(*inputs)
    for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (one, two)), strict=True):
        np.testing.assert_array_equal(a, b)
    return one


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [[1 << 16], [2, 3, 40001], [1, 1, 16411], [5, 7], [33], [1]])
def test_chain_is_one_flat_loop(monkeypatch, target, shape):
    monkeypatch.setenv("GC_TARGET", target)
    compiled = graphcompiler.compile(_chain(shape))
    assert str(compiled.tir).count("tir.func @fused") == 1
    assert "tir.func @mul" not in compiled.tir  # the constants no longer split the group
    count = int(np.prod(shape))
    if count >= 1 << 14:  # a 1-D or short-outer tensor still runs in parallel
        assert "parallel" in compiled.tir
    x = rng.uniform(-3, 3, shape).astype(np.float32)
    expected = np.exp(np.maximum(x * 2 + 1, 0).astype(np.float64)) - x  # f32 argument, as compiled
    np.testing.assert_allclose(_run_both(compiled, x), expected, rtol=3e-7, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_broadcast_operands(monkeypatch, target):
    """A leading-1 operand of the same elements and a single-element one
    flatten; a row vector keeps the nested loops; all agree with numpy."""
    monkeypatch.setenv("GC_TARGET", target)
    big, lead, one, row = [3, 4099], [1, 3, 4099], [1, 1], [4099]
    text = f"""func.func @main(%a: {_t(big)}, %b: {_t(lead)}, %c: {_t(one)}, %d: {_t(row)}) -> ({_t(lead)}, {_t(big)}) {{
  %0 = graph.add %a, %b : ({_t(big)}, {_t(lead)}) -> {_t(lead)}
  %1 = graph.mul %0, %c : ({_t(lead)}, {_t(one)}) -> {_t(lead)}
  %2 = graph.maximum %a, %d : ({_t(big)}, {_t(row)}) -> {_t(big)}
  func.return %1, %2 : {_t(lead)}, {_t(big)}
}}"""
    compiled = graphcompiler.compile(text)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in (big, lead, one, row)]
    inputs[0][0, 5] = np.nan
    got = _run_both(compiled, *inputs)
    a, b, c, d = inputs
    np.testing.assert_allclose(got[0], (a + b) * c, rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.maximum(a, d))


def test_chunks_cover_the_range_in_whole_vectors():
    for count in (1 << 14, (1 << 14) + 17, 1 << 20, 4096 * 4096, 10**7 + 3):
        for lanes in (4, 8, 16):
            chunks, chunk = flat_chunks(count, lanes)
            assert chunk % lanes == 0 and chunks * chunk <= count
            assert 4 <= chunks <= PARALLEL_CHUNKS
            assert count - chunks * chunk < 2 * chunk  # the serial rest is small
    assert flat_chunks(1000, 16) == (1, 1000)


@pytest.mark.parametrize("exponent", [2.0, 3.0])
def test_small_integer_powers_are_products(exponent):
    """canonicalize turns x ** 2 and x ** 3 into multiplies (no pow call is
    left): within 2 ulp of numpy's power, with NaN, infinities, the sign of
    zero, overflow to inf and the denormals kept."""
    text = f"""func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {{
  %e = graph.constant dense<{exponent}> : tensor<1xf32>
  %0 = graph.pow %x, %e : (tensor<64xf32>, tensor<1xf32>) -> tensor<64xf32>
  func.return %0 : tensor<64xf32>
}}"""
    compiled = graphcompiler.compile(text, cache=False)
    assert "graph.pow" not in compiled.graph and "graph.mul" in compiled.graph
    x = np.random.default_rng(3).uniform(-50, 50, 64).astype(np.float32)
    x[:10] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e13, -1e13, 1e-15, -3e-20, 1.0]
    with np.errstate(over="ignore"):  # 1e13 ** 2 is inf, as it should be
        want = np.power(x, np.float32(exponent))
    got = compiled(x)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_max_ulp(got, want, maxulp=2)
