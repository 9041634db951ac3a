"""max/avg pool2d (lowering/graph_to_tir/pool.py) against the reference on
every target the host runs: kernel sizes 1..5, strides 1..3, asymmetric
padding (windows reaching past the input, all-padding windows included),
odd widths around the vector width, NaN and inf in max windows, f16 and
integer max; 1 and 2 threads bitwise equal. Interior columns with stride 1
run in vectors, and no tap is bounds-checked.
"""

import itertools
import re

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.lowering.graph_to_tir.pool import interior
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
rng = np.random.default_rng(13)


def _props(kernel, stride, pad):
    return (
        f"{{kernel = array<i64: {kernel[0]}, {kernel[1]}>, strides = array<i64: {stride[0]}, "
        f"{stride[1]}>, padding = array<i64: {', '.join(map(str, pad))}>}}"
    )


def _text(ops, shape, kernel, stride, pad, element="f32"):
    """A graph applying each pooling op of `ops` to the same input."""
    n, c, h, w = shape
    oh = (h + pad[0] + pad[2] - kernel[0]) // stride[0] + 1
    ow = (w + pad[1] + pad[3] - kernel[1]) // stride[1] + 1
    ti, to = (f"tensor<{n}x{c}x{a}x{b}x{element}>" for a, b in ((h, w), (oh, ow)))
    body = "".join(
        f"  %{i} = graph.{op} %x {_props(kernel, stride, pad)} : {ti} -> {to}\n"
        for i, op in enumerate(ops)
    )
    results = ", ".join(f"%{i}" for i in range(len(ops)))
    types = ", ".join([to] * len(ops))
    return f"func.func @main(%x: {ti}) -> ({types}) {{\n{body}  func.return {results} : {types}\n}}"


def _check(text, x):
    """Max results bitwise as the reference (NaN where it has NaN), averages
    within rounding; 1 and 2 threads bitwise equal."""
    compiled = graphcompiler.compile(text)
    expected = reference.run(text, x)
    expected = expected if isinstance(expected, tuple | list) else [expected]
    compiled.set_num_threads(1)
    one = compiled(x)
    one = one if isinstance(one, tuple) else (one,)
    compiled.set_num_threads(2)
    two = compiled(x)
    for a, b in zip(one, two if isinstance(two, tuple) else (two,), strict=True):
        np.testing.assert_array_equal(a, b)
    ops = [line.split("graph.")[1].split()[0] for line in text.splitlines() if "_pool2d" in line]
    for op, got, want in zip(ops, one, expected, strict=True):
        if op == "max_pool2d":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    return compiled


SIZES = [(k, s) for k in range(1, 6) for s in range(1, 4)]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("k, s", SIZES)
def test_kernel_sizes_and_strides(monkeypatch, target, k, s):
    monkeypatch.setenv("GC_TARGET", target)
    pad = (k // 2, k - 1, 0, k // 2)  # top, left, bottom, right: asymmetric
    shape = [2, 3, 11, 37]  # 37: vectors of 4, 8, 16 and a scalar interior tail
    x = rng.standard_normal(shape).astype(np.float32)
    x[0, 1, 4, 17] = np.nan
    x[1, 2, 0, 0] = np.inf
    x[1, 0, 5, 36] = -np.inf
    compiled = _check(_text(["max_pool2d", "avg_pool2d"], shape, (k, k), (s, s), pad), x)
    lo, hi = interior(compiled.output_types[0].get_shape()[3], 37, k, s, k - 1)
    if s == 1 and hi - lo >= 16:  # interior columns ran in vectors of the target's width
        assert f"lanes {targets.get_target(target).f32_lanes}]" in compiled.tir
    assert compiled.tir.count("tir.and") <= 2  # one interior-row test per op, none per tap


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "shape, kernel, stride, pad",
    [
        ([1, 2, 5, 3], (3, 5), (1, 1), (2, 2, 2, 2)),  # wider window than the input
        ([1, 1, 4, 4], (2, 2), (1, 1), (3, 3, 3, 3)),  # all-padding corner windows
        ([1, 4, 9, 70], (3, 3), (2, 1), (1, 0, 1, 2)),  # strides differ per axis
        ([2, 3, 7, 17], (1, 4), (3, 1), (0, 3, 2, 0)),
        ([1, 1, 1, 1], (1, 1), (1, 1), (0, 0, 0, 0)),
    ],
)
def test_edge_windows(monkeypatch, target, shape, kernel, stride, pad):
    monkeypatch.setenv("GC_TARGET", target)
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    with np.errstate(invalid="ignore"):  # the reference's 0 / 0 of all-padding windows
        _check(_text(["max_pool2d", "avg_pool2d"], shape, kernel, stride, pad), x)


@pytest.mark.parametrize("kernel", [(9, 9), (3, 24), (30, 30)])
def test_large_windows_are_loops(kernel):
    """Past MAX_STATIC_TAPS taps (or MAX_STATIC_COLUMNS columns) a window is
    walked by loops: the Tensor IR does not grow with the window."""
    shape = [1, 2, 34, 41]
    x = rng.standard_normal(shape).astype(np.float32)
    text = _text(["max_pool2d", "avg_pool2d"], shape, kernel, (1, 2), (1, 2, 0, 1))
    compiled = _check(text, x)
    small = graphcompiler.compile(
        _text(["max_pool2d", "avg_pool2d"], shape, (9, 9), (1, 2), (1, 2, 0, 1))
    )
    assert len(compiled.tir) < 1.2 * len(small.tir)


def test_large_planes_run_in_parallel_and_match():
    text = _text(["max_pool2d"], [1, 64, 112, 112], (3, 3), (2, 2), (1, 1, 1, 1))
    x = rng.standard_normal([1, 64, 112, 112]).astype(np.float32)
    compiled = _check(text, x)
    assert "parallel" in compiled.tir


@pytest.mark.parametrize(
    "element, dtype", [("f16", np.float16), ("i32", np.int32), ("i8", np.int8)]
)
def test_other_element_types(element, dtype):
    for op in ("max_pool2d", "avg_pool2d") if element == "f16" else ("max_pool2d",):
        text = _text([op], [1, 2, 6, 21], (3, 3), (1, 1), (1, 1, 1, 1), element)
        if dtype == np.float16:
            x = rng.standard_normal([1, 2, 6, 21]).astype(dtype)
        else:
            x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, [1, 2, 6, 21]).astype(dtype)
        compiled = graphcompiler.compile(text)
        expected = reference.run(text, x)
        tolerance = 1e-3 if op == "avg_pool2d" else 0
        np.testing.assert_allclose(
            compiled(x).astype(np.float64), expected.astype(np.float64), rtol=tolerance
        )


def test_interior_columns():
    for outputs, size, window, stride, pad in itertools.product(
        range(1, 12), range(1, 12), range(1, 6), range(1, 4), range(0, 5)
    ):
        lo, hi = interior(outputs, size, window, stride, pad)
        inside = [
            p for p in range(outputs) if p * stride - pad >= 0 and p * stride - pad + window <= size
        ]
        assert list(range(lo, hi)) == inside


@pytest.mark.parametrize("dtype, element", [(np.uint8, "ui8"), (np.int8, "i8"), (np.int16, "i16")])
def test_integer_max_pool_starts_at_the_type_minimum(dtype, element):
    """A window of zeros pools to 0 for unsigned types (the window used to
    start at -128, which ui8 reads as 128) and keeps negatives for signed."""
    text = f"""func.func @main(%x: tensor<1x1x4x4x{element}>) -> tensor<1x1x2x2x{element}> {{
  %0 = graph.max_pool2d %x {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : tensor<1x1x4x4x{element}> -> tensor<1x1x2x2x{element}>
  func.return %0 : tensor<1x1x2x2x{element}>
}}"""
    info = np.iinfo(dtype)
    x = np.zeros((1, 1, 4, 4), dtype)
    x[0, 0, 0, 0], x[0, 0, 3, 3] = info.min, info.max
    x[0, 0, 2:, :2] = info.min  # a window of minima
    got = graphcompiler.compile(text)(x)
    np.testing.assert_array_equal(got, reference.run(text, x))
    np.testing.assert_array_equal(got[0, 0], [[0, 0], [info.min, info.max]])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "shape, kernel, stride, pad",
    [
        ((1, 2, 9, 9), (3, 3), (2, 2), (1, 1, 1, 1)),  # ResNet's pool after its stem
        ((2, 1, 7, 12), (2, 3), (1, 2), (0, 2, 1, 0)),  # asymmetric, all-padding columns
        ((1, 3, 5, 6), (5, 5), (1, 1), (2, 2, 2, 2)),  # windows past both edges
        ((1, 1, 20, 20), (9, 9), (3, 3), (0, 0, 0, 0)),  # more taps than unrolled
    ],
)
@pytest.mark.parametrize("element, dtype", [("f32", np.float32), ("ui8", np.uint8)])
def test_channel_blocked_pools(monkeypatch, target, shape, kernel, stride, pad, element, dtype):
    """A blocked input [N, C / b, H, W, b] pools each lane as its own
    channel (one vector a pixel), NaN and inf as in the plain pools."""
    monkeypatch.setenv("GC_TARGET", target)
    block = targets.get_target(target).f32_lanes
    n, blocks, h, w = shape
    x = rng.integers(0, 256, (n, blocks, h, w, block)).astype(dtype)
    ops = ["max_pool2d"]
    if dtype == np.float32:
        x = rng.uniform(-5, 5, x.shape).astype(dtype)
        x[0, 0, 1, 1, 3], x[0, -1, 2, 0, 1] = np.nan, np.inf
        ops.append("avg_pool2d")
    text = _text(ops, (n, blocks, h, w), kernel, stride, pad, element)
    text = re.sub(r"tensor<(\d+x\d+x\d+x\d+)x", rf"tensor<\1x{block}x", text)
    compiled = _check(text, x)
    assert re.search(rf"graph.max_pool2d .*x{block}x{element}>", compiled.graph)


def test_blocks_of_three_channels():
    """A block that is no power of two (3 lanes): its window's running
    value is a vector of 3 floats, aligned as LLVM allows."""
    text = _text(["max_pool2d", "avg_pool2d"], (1, 2, 7, 7), (3, 3), (2, 2), (1, 1, 1, 1))
    text = re.sub(r"tensor<(\d+x\d+x\d+x\d+)x", r"tensor<\1x3x", text)
    _check(text, rng.uniform(-5, 5, (1, 2, 7, 7, 3)).astype(np.float32))
