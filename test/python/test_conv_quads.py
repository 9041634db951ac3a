"""8-bit convolutions: u8 x s8 sums on the blocked byte-quad tiles
(`vpdpbusd` on VNNI targets, the same sums emulated elsewhere), padded with
the conv's pad value, exact against numpy; the direct loop nests' pad
value and widening; and QDQ convolutions rewritten onto them."""


import numpy as np
import pytest

import graphcompiler
from graphcompiler.frontends.onnx import import_onnx
from graphcompiler.lowering.tir_to_llvm import brgemm
from graphcompiler.runtime.microkernels import has_dot_instruction
from graphcompiler.target.description import get_target
from test.python.test_quantized import QUANTIZED

HOST = get_target()  # GC_TARGET's, else the host: what compile() targets
VNNI_HOST = has_dot_instruction(HOST, "u8s8", HOST.f32_lanes)


def _tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def _reference(x, w, strides, pads, dilations, pad_value, groups=1):
    """The convolution in int64, the input padded with `pad_value`."""
    n, c, h, width = x.shape
    o, c_per_group, kh, kw = w.shape
    padded = np.pad(
        x.astype(np.int64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
        constant_values=pad_value,
    )  # fmt: skip
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (width + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    per_group = o // groups
    for ky in range(kh):
        for kx in range(kw):
            top, left = ky * dilations[0], kx * dilations[1]
            patch = padded[:, :, top : top + strides[0] * (oh - 1) + 1 : strides[0],
                           left : left + strides[1] * (ow - 1) + 1 : strides[1]]  # fmt: skip
            for g in range(groups):
                channels = patch[:, g * c_per_group : (g + 1) * c_per_group]
                weights = w[g * per_group : (g + 1) * per_group, :, ky, kx].astype(np.int64)
                out[:, g * per_group : (g + 1) * per_group] += np.einsum(
                    "nchw,oc->nohw", channels, weights
                )
    return out


def _conv_program(x_shape, w, out_shape, x_element, w_element, strides, pads, dilations,
                  pad_value, groups=1) -> str:  # fmt: skip
    x_type, w_type = _tensor(x_shape, x_element), _tensor(w.shape, w_element)
    out_type = _tensor(out_shape, "i32")
    window = (
        f"strides = array<i64: {strides[0]}, {strides[1]}>, "
        f"padding = array<i64: {', '.join(map(str, pads))}>, "
        f"dilations = array<i64: {dilations[0]}, {dilations[1]}>, "
        f"groups = {groups} : i64, pad_value = {pad_value} : i64"
    )
    return f"""func.func @main(%x: {x_type}) -> {out_type} {{
  %w = graph.constant dense<"0x{np.ascontiguousarray(w).tobytes().hex()}"> : {w_type}
  %y = graph.conv2d %x, %w {{{window}}} : ({x_type}, {w_type}) -> {out_type}
  func.return %y : {out_type}
}}"""


def _force(monkeypatch, path: str) -> None:
    """Byte-quad tiles on `path`: "vnni" (the host's vpdpbusd), "emulated"
    (without it) or "emulated-8" (on the AVX2 target's 8-lane blocks)."""
    if path == "vnni" and not VNNI_HOST:
        pytest.skip("the host has no VNNI")
    if path.startswith("emulated"):
        monkeypatch.setattr(brgemm, "has_dot_instruction", lambda *args: False)
    if path == "emulated-8":
        monkeypatch.setenv("GC_TARGET", "avx2")


CASES = [
    # x shape, w shape, strides, pads [top, left, bottom, right], dilations, pad value
    ((1, 16, 8, 8), (16, 16, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 0),  # read as it lies
    ((1, 32, 9, 9), (32, 32, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 77),
    ((2, 20, 10, 11), (48, 20, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 5),  # a part block, 2 images
    ((1, 3, 23, 23), (16, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 129),  # an RGB stem: one word
    ((1, 64, 14, 14), (32, 64, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 0),  # gathered pixels
    ((1, 24, 7, 7), (40, 24, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 200),  # dilated, part blocks
    ((1, 16, 5, 30), (16, 16, 1, 3), (1, 1), (0, 1, 0, 1), (1, 1), 255),
    ((1, 130, 6, 6), (24, 130, 3, 3), (1, 2), (1, 0, 1, 2), (1, 1), 1),  # chunks of blocks
]


@pytest.mark.parametrize("path", ["vnni", "emulated", "emulated-8"])
@pytest.mark.parametrize("x_shape, w_shape, strides, pads, dilations, pad_value", CASES)
def test_byte_quad_convolution_is_exact(
    monkeypatch, path, x_shape, w_shape, strides, pads, dilations, pad_value
):
    _force(monkeypatch, path)
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    x = rng.integers(0, 256, x_shape).astype(np.uint8)
    w = rng.integers(-128, 128, w_shape).astype(np.int8)
    want = _reference(x, w, strides, pads, dilations, pad_value)
    program = _conv_program(x_shape, w, want.shape, "ui8", "i8", strides, pads, dilations,
                            pad_value)  # fmt: skip
    compiled = graphcompiler.compile(program, cache=False)
    assert "u8_s8_quads = true" in compiled.tir  # the tiles, not a direct loop nest
    np.testing.assert_array_equal(compiled(x), want)


def test_extreme_bytes_sum_exactly():
    """255 x -128 over 16 channels x 9 taps: sums far beyond i16."""
    x = np.full((1, 16, 5, 5), 255, np.uint8)
    w = np.full((16, 16, 3, 3), -128, np.int8)
    program = _conv_program(x.shape, w, (1, 16, 5, 5), "ui8", "i8", (1, 1), (1, 1, 1, 1),
                            (1, 1), 255)  # fmt: skip
    got = graphcompiler.compile(program, cache=False)(x)
    assert got.min() == got.max() == 255 * -128 * 16 * 9


@pytest.mark.parametrize("groups", [1, 4])
def test_direct_loop_nests_pad_with_the_pad_value_and_widen(groups):
    """Grouped u8 convolutions and i16 ones run on direct loop nests: their
    padding reads the pad value, and 16-bit products sum in i32."""
    rng = np.random.default_rng(groups)
    x = rng.integers(0, 256, (1, 8, 6, 6)).astype(np.uint8)
    w = rng.integers(-128, 128, (8, 8 // groups, 3, 3)).astype(np.int8)
    want = _reference(x, w, (1, 1), (1, 2, 1, 0), (1, 1), 99, groups)
    program = _conv_program(x.shape, w, want.shape, "ui8", "i8", (1, 1), (1, 2, 1, 0), (1, 1),
                            99, groups)  # fmt: skip
    np.testing.assert_array_equal(graphcompiler.compile(program, cache=False)(x), want)
    wide_x = rng.integers(-300, 300, x.shape).astype(np.int16)
    wide_w = rng.integers(-300, 300, w.shape).astype(np.int16)
    want = _reference(wide_x, wide_w, (1, 1), (0, 0, 0, 0), (1, 1), 0, groups)
    program = _conv_program(x.shape, wide_w, want.shape, "i16", "i16", (1, 1), (0, 0, 0, 0),
                            (1, 1), 0, groups)  # fmt: skip
    np.testing.assert_array_equal(graphcompiler.compile(program, cache=False)(wide_x), want)


def test_qdq_resnet_convolutions_run_on_byte_quads():
    """The QDQ ResNet of the model suite: every convolution (one group)
    becomes a blocked u8 x s8 one, whatever the host (the rewrite forced,
    the 16-lane target's blocks)."""
    module = import_onnx(QUANTIZED / "resnet_int8_qdq.onnx")
    pipeline = (
        "builtin.module(graph-integer-matmul{convolutions=all},graph-constant-fold,"
        "func.func(canonicalize,cse),graph-block-layout{target=avx512})"
    )
    graphcompiler.apply_pipeline(module, pipeline)
    convolutions = [op for op in module.walk() if op.name.endswith("conv2d")]
    assert convolutions
    for op in convolutions:
        types = [str(v.type.element_type) for v in (*op.operands, op.results[0])]
        assert (op.name, types) == ("graph.blocked_conv2d", ["ui8", "i8", "i32"]), op


def test_max_pool_of_dequantized_bytes_matches_the_f32_pool():
    """graph-integer-matmul pools the bytes, then dequantizes: the same
    values as pooling the dequantized f32 (padding never wins)."""
    program = """func.func @main(%q: tensor<1x4x9x9xui8>) -> tensor<1x4x5x5xf32> {
  %z = graph.constant dense<3> : tensor<ui8>
  %s = graph.constant dense<0.37> : tensor<f32>
  %f = graph.cast %q : tensor<1x4x9x9xui8> -> tensor<1x4x9x9xf32>
  %zf = graph.cast %z : tensor<ui8> -> tensor<f32>
  %c = graph.sub %f, %zf : (tensor<1x4x9x9xf32>, tensor<f32>) -> tensor<1x4x9x9xf32>
  %x = graph.mul %c, %s : (tensor<1x4x9x9xf32>, tensor<f32>) -> tensor<1x4x9x9xf32>
  %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x9x9xf32> -> tensor<1x4x5x5xf32>
  func.return %y : tensor<1x4x5x5xf32>
}"""
    compiled = graphcompiler.compile(program, cache=False)
    assert "tensor<1x4x5x5xui8>" in str(compiled.graph)  # pooled as bytes
    q = np.random.default_rng(7).integers(0, 256, (1, 4, 9, 9)).astype(np.uint8)
    x = (q.astype(np.float32) - np.float32(3)) * np.float32(0.37)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    want = windows[:, :, ::2, ::2].max(axis=(-1, -2))
    np.testing.assert_array_equal(compiled(q), want)


ON_TILES = [
    # x shape, w shape, strides, pads [top, left, bottom, right], dilations, pad value
    ((1, 128, 7, 9), (48, 128, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 0),  # 3 output blocks
    ((2, 144, 10, 10), (64, 144, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 0),  # gathered, K padded
    ((1, 136, 12, 12), (40, 136, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 0),  # part blocks
    ((1, 256, 14, 14), (32, 256, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 0),  # calls of 128, 64, 4
    ((1, 64, 9, 40), (32, 64, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 77),  # rows of 32 + 8
    ((1, 80, 11, 11), (48, 80, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 200),  # strided, part block
    ((1, 64, 8, 8), (32, 64, 3, 3), (1, 1), (2, 1, 2, 0), (2, 1), 3),  # dilated, uneven pads
    ((1, 128, 6, 6), (32, 128, 1, 1), (1, 1), (1, 1, 1, 1), (1, 1), 9),  # a padded 1x1
]


@pytest.mark.parametrize("path", ["amx", "vector"])
@pytest.mark.parametrize("x_shape, w_shape, strides, pads, dilations, pad_value", ON_TILES)
def test_convolutions_on_amx_tiles_are_exact(
    monkeypatch, path, x_shape, w_shape, strides, pads, dilations, pad_value
):
    """u8 x s8 convolutions on pixel-major words (conv_amx.py): on the
    host's AMX tiles, and the same Tensor IR on the vector kernels (what a
    host without AMX would run)."""
    from graphcompiler.lowering.graph_to_tir import conv_amx, conv_blocked

    if path == "amx" and not conv_amx.has_amx(HOST, "u8s8"):
        pytest.skip("the host has no AMX-INT8 (or Linux did not lend its tiles)")
    if HOST.f32_lanes != 16:
        pytest.skip("AMX hosts have 16-lane blocks: an 8-lane target never takes this layout")
    if path == "vector":
        for module in (conv_amx, brgemm):
            monkeypatch.setattr(module, "has_amx", lambda *args: False)
        monkeypatch.setattr(conv_blocked, "takes_amx_tiles",
                            lambda kernel, *operands: conv_amx.suits_tiles(*operands))  # fmt: skip
    rng = np.random.default_rng(sum(x_shape) + sum(w_shape))
    x = rng.integers(0, 256, x_shape).astype(np.uint8)
    w = rng.integers(-128, 128, w_shape).astype(np.int8)
    x.flat[:300], w.flat[:300] = 255, -128  # sums far beyond i16
    want = _reference(x, w, strides, pads, dilations, pad_value)
    program = _conv_program(x_shape, w, want.shape, "ui8", "i8", strides, pads, dilations,
                            pad_value)  # fmt: skip
    compiled = graphcompiler.compile(program, cache=False)
    words = -(-x_shape[1] // 64) * 16
    assert f"x{words}xi32>" in compiled.tir  # the pixel-major copy
    assert ("_amx" in compiled.llvm_ir) == (path == "amx")
    np.testing.assert_array_equal(compiled(x), want)


def test_the_pixel_major_copy_does_not_grow_with_the_channels(monkeypatch):
    """The copy into pixel-major words loops over the input's channel blocks:
    one store per block, unrolled, made a 100000-channel convolution (a
    fuzzed QDQ graph) compile for 51 s."""
    from graphcompiler.lowering.graph_to_tir import conv_amx, conv_blocked

    if HOST.f32_lanes != 16:
        pytest.skip("AMX hosts have 16-lane blocks: an 8-lane target never takes this layout")
    monkeypatch.setattr(conv_blocked, "takes_amx_tiles",
                        lambda kernel, *operands: conv_amx.suits_tiles(*operands))  # fmt: skip
    sizes = {}
    for channels in (64, 4096):
        rng = np.random.default_rng(channels)
        x = rng.integers(0, 256, (1, channels, 4, 4)).astype(np.uint8)
        w = rng.integers(-128, 128, (16, channels, 3, 3)).astype(np.int8)
        want = _reference(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 7)
        program = _conv_program(
            x.shape, w, want.shape, "ui8", "i8", (1, 1), (1, 1, 1, 1), (1, 1), 7
        )
        compiled = graphcompiler.compile(program, cache=False)
        assert f"x{channels // 4}xi32>" in compiled.tir  # the pixel-major copy
        np.testing.assert_array_equal(compiled(x), want)
        sizes[channels] = len(compiled.tir)
    assert sizes[4096] < 1.1 * sizes[64], sizes
