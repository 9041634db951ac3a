"""Channel-blocked convolutions: graph.blocked_conv2d through brgemm tiles
(padding, stride, dilation, tiles of several output blocks, reductions cut
into chunks, depthwise, weights given at run time, channels that do not
fill the last block, whose padding lanes hold NaN and must not be read) on every target the
host runs, and graph-block-layout in the default pipeline (convolution
chains with epilogues, residual adds, reorders before pooling), against the
reference interpreter; 1 and 2 threads bitwise equal.
"""

import re

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2") if targets.supported(name)]
rng = np.random.default_rng(5)


def _t(shape) -> str:
    return "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"


def _window(h, k, stride, before, after, dilation) -> int:
    return (h + before + after - dilation * (k - 1) - 1) // stride + 1


def _check(text: str, inputs: list, atol: float, constants: list = (), channels=None):
    """Compiled 1 and 2 threads give the same bits, within `atol` of the
    reference; `constants` bind the last arguments at compile time;
    `channels`: those of a blocked result compared (its padding lanes are
    unspecified)."""
    names = ["w"] if constants else []
    compiled = graphcompiler.compile(
        text, cache=False, constants=dict(zip(names, constants, strict=True))
    )
    expected = reference.run(text, *inputs, *constants)
    compiled.set_num_threads(1)
    one = compiled(*inputs)
    compiled.set_num_threads(2)
    np.testing.assert_array_equal(one, compiled(*inputs))
    if channels is not None:
        one, expected = (reference.from_blocked_array(r, channels) for r in (one, expected))
    np.testing.assert_allclose(one, expected, rtol=0, atol=atol)
    return compiled


BLOCKED_CASES = [
    # channels, out channels, input h x w, kernel, stride, padding (t, l, b, r), dilation, groups
    (32, 32, (8, 8), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    (32, 64, (9, 11), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # stride 2, odd sizes
    (64, 32, (12, 13), (3, 2), (1, 1), (2, 1, 0, 3), (2, 1), 1),  # asymmetric, dilated
    (128, 128, (7, 7), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # chunks, tiles of 2 rows
    (32, 48, (9, 9), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # 5 rows: tiles of rows, a rest
    (16, 96, (5, 37), (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1, tail tiles
    (32, 16, (10, 10), (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),  # strided 1x1, gathered
    (48, 64, (11, 14), (1, 1), (3, 2), (0, 0, 0, 0), (1, 1), 1),  # gathered, odd, 4 groups
    (64, 128, (7, 7), (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1: tiles across rows
    (32, 64, (13, 14), (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),  # gathered, across rows
    (16, 16, (9, 21), (7, 7), (1, 1), (3, 3, 3, 3), (1, 1), 1),  # taps beyond the input
    (32, 32, (12, 13), (3, 3), (1, 1), (2, 1, 0, 3), (2, 1), 32),  # depthwise
    (48, 48, (17, 40), (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), 48),  # depthwise, strided
    (16, 16, (3, 5), (7, 7), (1, 1), (3, 3, 3, 3), (1, 1), 16),  # depthwise, window past both edges
    (32, 32, (9, 23), (3, 3), (2, 2), (0, 0, 1, 1), (1, 2), 32),  # depthwise, bottom-right pads
    (16, 16, (6, 30), (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 16),  # depthwise, unpadded
    # channels that neither 16 nor 8 divides: a padded last block in and out
    (20, 36, (9, 11), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # whole blocks, then the rest
    (12, 20, (7, 7), (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # (16 lanes) only a padded block
    (140, 28, (7, 7), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # chunks, then the rest
    (36, 20, (10, 10), (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),  # gathered, padded
    (20, 20, (10, 13), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 20),  # depthwise, padded
    # groups of whole blocks (16 and 8 lanes): each reduces over its own input blocks
    (64, 64, (9, 10), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    (96, 64, (8, 8), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 2),  # 3 blocks in, 2 out a group
    (64, 128, (7, 9), (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 4),  # gathered
    (256, 256, (5, 6), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),  # chunks within a group
    (32, 32, (10, 11), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 2),  # dilated
]


def _blocked_text(c, o, size, kernel, stride, pad, dilation, groups, block, weights_argument):
    oh = _window(size[0], kernel[0], stride[0], pad[0], pad[2], dilation[0])
    ow = _window(size[1], kernel[1], stride[1], pad[1], pad[3], dilation[1])
    x, w, y = (
        [1, -(-c // block), *size, block],
        [o, c // groups, *kernel],
        [1, -(-o // block), oh, ow, block],
    )
    props = (
        f"{{strides = array<i64: {stride[0]}, {stride[1]}>, padding = array<i64: {', '.join(map(str, pad))}>, "
        f"dilations = array<i64: {dilation[0]}, {dilation[1]}>, groups = {groups} : i64}}"
    )
    text = (
        f"func.func @main(%x: {_t(x)}, %w: {_t(w)}) -> {_t(y)} {{\n"
        f"  %0 = graph.blocked_conv2d %x, %w {props} : ({_t(x)}, {_t(w)}) -> {_t(y)}\n"
        f"  func.return %0 : {_t(y)}\n}}"
    )
    return text, x, w


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("c, o, size, kernel, stride, pad, dilation, groups", BLOCKED_CASES)
def test_blocked_conv2d_matches_the_reference(
    monkeypatch, target, c, o, size, kernel, stride, pad, dilation, groups
):
    monkeypatch.setenv("GC_TARGET", target)
    block = targets.get_target(target).f32_lanes
    text, x_shape, w_shape = _blocked_text(
        c, o, size, kernel, stride, pad, dilation, groups, block, True
    )
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    x[0, 0, 1, 2, 3] = np.nan  # propagates to the outputs whose window holds it
    x[:, -1, ..., c - (x_shape[1] - 1) * block :] = np.nan  # padding lanes: never read
    atol = 1e-5 * w_shape[1] * kernel[0] * kernel[1]
    compiled = _check(text, [x], atol, constants=[w], channels=o)  # weights packed now
    depthwise = groups == c == o
    assert ("tir.brgemm_tile" in compiled.tir) == (not depthwise)
    if depthwise:  # the taps read the input where it is: no padded copy
        assert "tir.define_tensor" not in compiled.tir
    _check(text, [x, w], atol, channels=o)  # weights packed at run time


@pytest.mark.skipif("avx512" not in TARGETS, reason="the tile shapes of 32 vector registers")
def test_a_1x1_convolution_on_a_narrow_map_tiles_across_rows(monkeypatch):
    """A 1x1 convolution reads its input plane as one run of pixels, so its
    register tiles are those of a long row: 6 pixels x 4 output blocks on a
    7x7 map, the tiles crossing rows (tiles within a row took 7 x 2: more
    loads per FMA), then a 1-pixel rest of the task's 49."""
    monkeypatch.setenv("GC_TARGET", "avx512")
    text, _, _ = _blocked_text(64, 128, (7, 7), (1, 1), (1, 1), (0,) * 4, (1, 1), 1, 16, True)
    tiles = re.findall(
        r"tir\.brgemm_tile .*\{m = (\d+) : i64, n = (\d+)", graphcompiler.compile(text).tir
    )
    assert sorted(set(tiles)) == [("1", "64"), ("6", "64")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "c, o, size, kernel, stride, pad, dilation",
    [
        (3, 64, (30, 34), (7, 7), (2, 2), (3, 3, 3, 3), (1, 1)),  # ResNet's stem, smaller
        (3, 40, (17, 15), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),  # MobileNet's, padded lanes
        (1, 16, (12, 9), (5, 3), (1, 1), (2, 0, 1, 2), (1, 2)),  # grey, asymmetric, dilated
        (5, 24, (8, 40), (1, 1), (2, 3), (0, 0, 0, 0), (1, 1)),  # strided 1x1, gathered
        (2, 32, (6, 7), (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),  # unpadded: read in place
    ],
)
def test_plain_input_into_blocks(monkeypatch, target, c, o, size, kernel, stride, pad, dilation):
    """A narrow plain input (blocks of one channel) into a blocked result:
    K runs along the filter rows, the input copied only where padded
    (a row at a time) or strided 1x1."""
    monkeypatch.setenv("GC_TARGET", target)
    block = targets.get_target(target).f32_lanes
    text, _, w_shape = _blocked_text(c, o, size, kernel, stride, pad, dilation, 1, block, True)
    x_shape = [1, c, *size]
    text = text.replace(_t([1, 1, *size, block]), _t(x_shape))
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    x[0, 0, 1, 2] = np.nan
    atol = 1e-5 * c * kernel[0] * kernel[1]
    compiled = _check(text, [x], atol, constants=[w], channels=o)
    assert f"k = {kernel[1]} : i64" in compiled.tir  # K: the filter columns
    _check(text, [x, w], atol, channels=o)


@pytest.mark.parametrize("channels, groups", [(128, 1), (100, 1), (256, 2)])
def test_blocks_wider_than_a_vector_take_the_direct_loop(channels, groups):
    """(256, 2): each group of whole 128-lane blocks reads its own channels."""
    text, x_shape, w_shape = _blocked_text(
        channels, channels, (3, 3), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), groups, 128, True
    )
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    x[:, :, :, :, channels:] = np.nan  # padding lanes
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    compiled = _check(text, [x, w], 1e-5 * 128 * 9, channels=channels)
    assert "tir.brgemm_tile" not in compiled.tir


def _network(c: int, groups: int) -> str:
    """conv -> bias -> relu -> grouped (depthwise) -> relu6 -> / scale -> conv -> +
    residual -> max pool, and a global average: the blocked form must flow
    through the epilogues and the pooling, and the average must reduce
    the blocked tensor (a pixel per channel reordered). With
    padded blocks, the division makes the padding lanes 0 / 0 (NaN), which
    the last convolution must not read."""
    x, y, dw = _t([1, c, 12, 12]), _t([1, c, 6, 6]), _t([c, c // groups, 3, 3])
    return f"""func.func @main(%x: {x}, %w1: {_t([c, c, 3, 3])}, %b1: {_t([c, 1, 1])}, %dw: {dw}, %s: {_t([c, 1, 1])}, %w2: {_t([c, c, 1, 1])}) -> ({y}, {_t([1, c])}) {{
  %0 = graph.conv2d %x, %w1 {{padding = array<i64: 1, 1, 1, 1>}} : ({x}, {_t([c, c, 3, 3])}) -> {x}
  %1 = graph.add %0, %b1 : ({x}, {_t([c, 1, 1])}) -> {x}
  %2 = graph.relu %1 : {x}
  %3 = graph.conv2d %2, %dw {{padding = array<i64: 1, 1, 1, 1>, groups = {groups} : i64}} : ({x}, {dw}) -> {x}
  %r = graph.clamp %3 {{min = 0.0 : f32, max = 6.0 : f32}} : {x}
  %4 = graph.div %r, %s : ({x}, {_t([c, 1, 1])}) -> {x}
  %5 = graph.conv2d %4, %w2 : ({x}, {_t([c, c, 1, 1])}) -> {x}
  %6 = graph.add %5, %x : ({x}, {x}) -> {x}
  %7 = graph.max_pool2d %6 {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : {x} -> {y}
  %8 = graph.reduce_mean %6 {{axes = array<i64: 2, 3>}} : {x} -> {_t([1, c])}
  func.return %7, %8 : {y}, {_t([1, c])}
}}"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "c, groups",
    [(32, 32), (20, 20), (32, 2)],  # 20: a padded last block of 16 or 8 lanes; 2 groups of 16
)
def test_block_layout_runs_networks_on_blocked_tensors(monkeypatch, target, c, groups):
    monkeypatch.setenv("GC_TARGET", target)
    text = _network(c, groups)
    shapes = [[c, c, 3, 3], [c, 1, 1], [c, c // groups, 3, 3], [c, 1, 1], [c, c, 1, 1]]
    weights = [rng.uniform(-0.3, 0.3, s).astype(np.float32) for s in shapes]
    weights[3] = rng.uniform(0.5, 1.5, shapes[3]).astype(np.float32)
    names = ["w1", "b1", "dw", "s", "w2"]
    x = rng.uniform(-1, 1, [1, c, 12, 12]).astype(np.float32)
    compiled = graphcompiler.compile(
        text, cache=False, constants=dict(zip(names, weights, strict=True))
    )
    assert compiled.graph.count("graph.blocked_conv2d") == 3
    assert compiled.graph.count("graph.to_blocked") == 1  # the residual shares it
    # after the max pool and the global average, which run on the blocked tensors
    assert compiled.graph.count("graph.from_blocked") == 2
    assert re.search(r"graph.reduce_mean .*: tensor<1x\d+x12x12x\d+xf32>", compiled.graph)
    assert re.search(r"graph.max_pool2d .*: tensor<1x\d+x12x12x\d+xf32>", compiled.graph)
    expected = reference.run(text, x, *weights)
    compiled.set_num_threads(1)
    one = compiled(x)
    compiled.set_num_threads(2)
    for got, want, again in zip(one, expected, compiled(x), strict=True):
        np.testing.assert_array_equal(got, again)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_block_layout_starts_at_a_narrow_stem(monkeypatch, target):
    """An RGB stem (conv 3 -> 24, bias, relu, max pool) reads its plain
    input and writes blocks: no reorder until the network's output."""
    monkeypatch.setenv("GC_TARGET", target)
    x, y, p = _t([1, 3, 20, 20]), _t([1, 24, 10, 10]), _t([1, 24, 5, 5])
    text = f"""func.func @main(%x: {x}, %w: {_t([24, 3, 7, 7])}, %b: {_t([24, 1, 1])}, %v: {_t([24, 24, 3, 3])}) -> {p} {{
  %0 = graph.conv2d %x, %w {{strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>}} : ({x}, {_t([24, 3, 7, 7])}) -> {y}
  %1 = graph.add %0, %b : ({y}, {_t([24, 1, 1])}) -> {y}
  %2 = graph.relu %1 : {y}
  %3 = graph.max_pool2d %2 {{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}} : {y} -> {p}
  %4 = graph.conv2d %3, %v {{padding = array<i64: 1, 1, 1, 1>}} : ({p}, {_t([24, 24, 3, 3])}) -> {p}
  func.return %4 : {p}
}}"""
    weights = [
        rng.uniform(-0.3, 0.3, s).astype(np.float32)
        for s in ([24, 3, 7, 7], [24, 1, 1], [24, 24, 3, 3])
    ]
    x_value = rng.uniform(-1, 1, [1, 3, 20, 20]).astype(np.float32)
    compiled = graphcompiler.compile(
        text, cache=False, constants=dict(zip("wbv", weights, strict=True))
    )
    assert "graph.to_blocked" not in compiled.graph
    assert compiled.graph.count("graph.from_blocked") == 1
    assert re.search(r"graph.blocked_conv2d .*\(tensor<1x3x20x20xf32>", compiled.graph)
    np.testing.assert_allclose(compiled(x_value), reference.run(text, x_value, *weights), atol=2e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "channels, spatial, element",
    [
        (32, [5, 7], "f32"),  # tiles of a block of pixels, then the rest
        (20, [4, 4], "f32"),  # a padded last block (of 16 or 8 lanes)
        (40, [37], "f32"),  # one spatial dim
        (8, [2, 9], "f32"),  # (16 lanes) only a padded block
        (20, [3, 5], "i32"),  # integers: transposed as i32 lanes
        (20, [4, 6], "ui8"),  # (u8 networks' reorders: widened to i32 lanes)
        (24, [5, 5], "i16"),
        (20, [1, 2], "ui8"),  # fewer pixels than a block: element by element
    ],
)
def test_reorders_into_and_out_of_blocks(monkeypatch, target, channels, spatial, element):
    """to_blocked and from_blocked equal the reference exactly (zeros in
    to_blocked's padding lanes; from_blocked ignores the NaN in them)."""
    monkeypatch.setenv("GC_TARGET", target)
    block = targets.get_target(target).f32_lanes

    def typed(shape) -> str:
        return _t(shape).replace("f32>", f"{element}>")

    plain, blocked = [2, channels, *spatial], [2, -(-channels // block), *spatial, block]
    text = (
        f"func.func @main(%x: {typed(plain)}, %y: {typed(blocked)}) -> ({typed(blocked)}, {typed(plain)}) {{\n"
        f"  %0 = graph.to_blocked %x {{block = {block} : i64}} : {typed(plain)} -> {typed(blocked)}\n"
        f"  %1 = graph.from_blocked %y : {typed(blocked)} -> {typed(plain)}\n"
        f"  func.return %0, %1 : {typed(blocked)}, {typed(plain)}\n}}"
    )
    dtype = {"f32": np.float32, "i32": np.int32, "ui8": np.uint8, "i16": np.int16}[element]
    x = rng.uniform(0, 100, plain).astype(dtype)
    y = rng.uniform(0, 100, blocked).astype(dtype)
    if element == "f32":
        y[:, -1, ..., channels - (blocked[1] - 1) * block :] = np.nan
    compiled = graphcompiler.compile(text, cache=False)
    assert ("tir.permutex2var" in compiled.tir) == (np.prod(spatial) >= block)
    for got, want in zip(compiled(x, y), reference.run(text, x, y), strict=True):
        np.testing.assert_array_equal(got, want)
