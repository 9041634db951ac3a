"""conv2d through brgemm tiles (shifted input rows, packed weights, the
filter taps as loops) on every target the host runs: padding (also
asymmetric), stride, dilation, groups, the direct 1x1 path, constant
weights packed at compile time and fused epilogues; depthwise convolutions
as vectorized stencils; against the reference interpreter, 1 and 2 threads
bitwise equal.
"""

import numpy as np
import pytest
from xdsl.dialects.builtin import Float32Type, TensorType

import graphcompiler
from graphcompiler.driver import compiler
from graphcompiler.interpreters import reference
from graphcompiler.lowering.graph_to_tir import conv_gemm
from graphcompiler.lowering.graph_to_tir.depthwise import DepthwiseConv
from graphcompiler.lowering.graph_to_tir.kernel import Operand
from graphcompiler.target import description as targets

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
rng = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def plain_layout(monkeypatch):
    """These are the kernels on plain NCHW tensors (convolutions whose
    channels are not whole blocks): graph-block-layout is left out, so that
    channel counts that are whole blocks on some target test them too
    (test_conv_blocked.py has the blocked ones)."""
    stage = compiler.GRAPH_STAGE.replace("graph-block-layout,", "")
    monkeypatch.setattr(compiler, "GRAPH_STAGE", stage)


def _t(shape):
    return "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"


def _out_shape(x, w, stride, pad, dilation) -> list[int]:
    n, c, h, width = x
    o, _, kh, kw = w
    oh = (h + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (width + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return [n, o, oh, ow]


def _conv_text(x, w, stride, pad, dilation, groups, constant=None, epilogue=""):
    o = w[0]
    out = _out_shape(x, w, stride, pad, dilation)
    props = (
        f"{{strides = array<i64: {stride[0]}, {stride[1]}>, padding = array<i64: {', '.join(map(str, pad))}>, "
        f"dilations = array<i64: {dilation[0]}, {dilation[1]}>, groups = {groups} : i64}}"
    )
    if constant is not None:
        args = f"%x: {_t(x)}"
        weights = f"  %w = graph.constant dense<{constant.tolist()}> : {_t(w)}\n"
    else:
        args, weights = f"%x: {_t(x)}, %w: {_t(w)}", ""
    body = f"  %0 = graph.conv2d %x, %w {props} : ({_t(x)}, {_t(w)}) -> {_t(out)}\n"
    result = "%0"
    if epilogue in ("bias_relu", "bias_relu_residual"):
        args += f", %b: {_t([o, 1, 1])}"
        body += f"  %1 = graph.add %0, %b : ({_t(out)}, {_t([o, 1, 1])}) -> {_t(out)}\n"
        body += f"  %2 = graph.relu %1 : {_t(out)}\n"
        result = "%2"
    if epilogue == "bias_relu_residual":
        args += f", %r: {_t(out)}"
        body += f"  %3 = graph.add %2, %r : ({_t(out)}, {_t(out)}) -> {_t(out)}\n"
        result = "%3"
    return f"func.func @main({args}) -> {_t(out)} {{\n{weights}{body}  func.return {result} : {_t(out)}\n}}"


def _check(compiled, text: str, inputs: list, atol: float) -> None:
    """1 and 2 threads give the same bits, within `atol` of the reference."""
    expected = reference.run(text, *inputs)
    compiled.set_num_threads(1)
    one = compiled(*inputs)
    compiled.set_num_threads(2)
    np.testing.assert_array_equal(one, compiled(*inputs))
    np.testing.assert_allclose(one, expected, rtol=0, atol=atol)


CASES = [
    # x, w, stride, padding (top, left, bottom, right), dilation, groups
    ([1, 3, 7, 9], [5, 3, 3, 3], (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ([2, 4, 8, 8], [6, 4, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ([1, 4, 9, 11], [6, 4, 3, 3], (2, 2), (1, 1, 1, 1), (1, 1), 1),
    ([1, 4, 9, 11], [6, 4, 3, 2], (1, 1), (2, 1, 0, 1), (2, 1), 1),
    ([1, 4, 20, 41], [17, 4, 5, 3], (1, 3), (2, 0, 2, 5), (1, 1), 1),
    ([1, 6, 8, 8], [4, 3, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1), 2),
    ([1, 20, 5, 37], [33, 20, 1, 1], (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1: one tap
    ([1, 16, 10, 10], [16, 16, 1, 1], (2, 2), (0, 0, 0, 0), (1, 1), 1),
    # rows narrower than a vector (tiles across rows): groups, vertical dilation, padding
    ([1, 6, 5, 5], [4, 3, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1), 2),
    ([1, 4, 9, 5], [6, 4, 3, 2], (1, 1), (2, 1, 0, 1), (2, 1), 1),
    ([2, 3, 6, 3], [5, 3, 3, 2], (1, 2), (0, 1, 1, 0), (1, 1), 1),
    # parallel: blocks of several output rows (tiles across rows), channel strips split among tasks
    ([1, 32, 30, 30], [40, 32, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ([1, 64, 40, 40], [20, 64, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1), 1),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x, w, stride, pad, dilation, groups", CASES)
def test_conv2d_variants(monkeypatch, target, x, w, stride, pad, dilation, groups):
    monkeypatch.setenv("GC_TARGET", target)
    text = _conv_text(x, w, stride, pad, dilation, groups)
    compiled = graphcompiler.compile(text)
    assert "tir.brgemm_tile" in compiled.tir
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (x, w)]
    _check(compiled, text, inputs, atol=1e-5 * w[1] * w[2] * w[3])


DEPTHWISE_CASES = [
    # x, w, stride, padding (top, left, bottom, right), dilation
    ([1, 8, 6, 6], [8, 1, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1)),  # a row shorter than a vector
    ([2, 3, 9, 77], [3, 1, 3, 3], (1, 1), (1, 1, 1, 1), (1, 1)),  # strips, single vectors, a tail
    ([1, 5, 17, 40], [5, 1, 3, 3], (2, 2), (1, 1, 1, 1), (1, 1)),  # column phases
    ([1, 4, 16, 50], [8, 1, 5, 5], (3, 2), (2, 0, 1, 4), (1, 1)),  # 2 outputs per channel
    ([1, 2, 12, 45], [2, 1, 3, 4], (1, 1), (2, 3, 0, 1), (2, 3)),  # dilated, asymmetric
    ([1, 2, 9, 21], [2, 1, 11, 11], (1, 1), (5, 5, 5, 5), (1, 1)),  # taps beyond the input
    ([2, 3, 17, 3], [9, 1, 2, 3], (1, 1), (1, 1, 1, 1), (2, 1)),  # input rows narrower than a vector
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x, w, stride, pad, dilation", DEPTHWISE_CASES)
def test_depthwise_is_a_vectorized_stencil(monkeypatch, target, x, w, stride, pad, dilation):
    monkeypatch.setenv("GC_TARGET", target)
    text = _conv_text(x, w, stride, pad, dilation, x[1], epilogue="bias_relu")
    compiled = graphcompiler.compile(text, verify_each=True)
    assert "tir.brgemm_tile" not in compiled.tir and "tir.fmadd" in compiled.tir
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (x, w, [w[0], 1, 1])]
    inputs[0][0, 0, 1, 2] = np.nan
    _check(compiled, text, inputs, atol=1e-5 * w[2] * w[3])


GEMM_CASES = [
    # x, w, stride, padding (top, left, bottom, right), dilation, constant weights
    ([2, 40, 7, 7], [70, 40, 1, 1], (1, 1), (0, 0, 0, 0), (1, 1), True),  # pointwise: no im2col
    ([1, 24, 12, 7], [33, 24, 1, 1], (1, 1), (0, 0, 0, 0), (1, 1), False),  # blocks of whole rows
    ([1, 16, 15, 13], [20, 16, 1, 1], (2, 2), (0, 0, 0, 0), (1, 1), True),  # strided 1x1: im2col
    ([2, 12, 13, 9], [17, 12, 3, 3], (2, 2), (1, 0, 1, 2), (1, 1), False),  # padded, asymmetric
    ([1, 9, 16, 16], [11, 9, 3, 3], (2, 2), (2, 2, 2, 2), (2, 2), True),  # dilated
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x, w, stride, pad, dilation, constant", GEMM_CASES)
def test_short_rows_convolve_as_one_gemm(monkeypatch, target, x, w, stride, pad, dilation, constant):
    """Pointwise and strided convolutions with short output rows take
    conv_gemm.py, with a bias, relu and residual add on each block of rows."""
    monkeypatch.setenv("GC_TARGET", target)
    taken = []
    monkeypatch.setattr(conv_gemm.GemmConv, "emit", _recording(conv_gemm.GemmConv.emit, taken))
    weights = rng.uniform(-1, 1, w).astype(np.float32)
    text = _conv_text(
        x, w, stride, pad, dilation, 1, weights if constant else None, "bias_relu_residual"
    )
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert taken and "graph.fused" in str(compiled.graph)
    inputs = [rng.uniform(-1, 1, x).astype(np.float32)]
    inputs[0][0, 0, 1, 2] = np.nan
    if not constant:
        inputs.append(weights)
    inputs.append(rng.uniform(-1, 1, [w[0], 1, 1]).astype(np.float32))
    inputs.append(rng.uniform(-1, 1, _out_shape(x, w, stride, pad, dilation)).astype(np.float32))
    _check(compiled, text, inputs, atol=1e-5 * w[1] * w[2] * w[3])


TRANSPOSED_CASES = [
    # x, w, stride, padding, constant weights: output planes of 7x7 (49 of 64 lanes filled)
    ([2, 40, 7, 7], [70, 40, 1, 1], (1, 1), (0, 0, 0, 0), True),  # pointwise
    ([1, 24, 7, 7], [48, 24, 3, 3], (1, 1), (1, 1, 1, 1), True),  # 3x3, padded
    ([1, 12, 14, 13], [40, 12, 3, 3], (2, 2), (1, 0, 1, 2), False),  # strided, asymmetric
]


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "generic"])
@pytest.mark.parametrize("x, w, stride, pad, constant", TRANSPOSED_CASES)
def test_small_output_planes_convolve_transposed(monkeypatch, target, x, w, stride, pad, constant):
    """Output planes that fill a tile's vectors badly are computed as
    outᵀ = columnsᵀ x Wᵀ (pixels as tile rows, weights as B panels), then
    transposed into the output with the bias, relu and residual add."""
    monkeypatch.setenv("GC_TARGET", target)
    taken = []
    transposed = conv_gemm.GemmConv._emit_transposed
    monkeypatch.setattr(conv_gemm.GemmConv, "_emit_transposed", _recording(transposed, taken))
    weights = rng.uniform(-1, 1, w).astype(np.float32)
    text = _conv_text(
        x, w, stride, pad, (1, 1), 1, weights if constant else None, "bias_relu_residual"
    )
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert taken
    inputs = [rng.uniform(-1, 1, x).astype(np.float32)]
    inputs[0][0, 0, 1, 2] = np.inf
    if not constant:
        inputs.append(weights)
    inputs.append(rng.uniform(-1, 1, [w[0], 1, 1]).astype(np.float32))
    inputs.append(rng.uniform(-1, 1, _out_shape(x, w, stride, pad, (1, 1))).astype(np.float32))
    _check(compiled, text, inputs, atol=1e-5 * w[1] * w[2] * w[3])


@pytest.mark.parametrize("target, plane, channels, transposed", [
    ("avx2", 7, 512, True),  # 49 columns in 16-column tiles
    ("avx2", 14, 512, False),  # 196 of 208
    ("avx2", 7, 8, False),  # too few channels to fill vectors instead
    ("avx512", 7, 512, True),  # 49 columns in a 64-column tile
    ("avx512", 14, 256, False),  # 196 of 224 (88%): faster untransposed on AVX-512
    ("avx512", 28, 256, False),
])  # fmt: skip
def test_which_planes_are_computed_transposed(monkeypatch, target, plane, channels, transposed):
    """The choice comes from the target's lanes and register tile, not the host."""
    monkeypatch.setenv("GC_TARGET", target)

    class _Kernel:
        target = targets.get_target()

    def operand(shape):
        return Operand(None, TensorType(Float32Type(), shape))

    w, out = operand([channels, 64, 3, 3]), operand([1, channels, plane, plane])
    assert conv_gemm.computes_transposed(_Kernel(), w, out) is transposed


@pytest.mark.parametrize("addend", [[1, 6, 1], [7], [1, 5, 1, 1], []])
def test_epilogue_operands_broadcast_along_rows(addend):
    """The epilogue of whole rows walks them as one range only where every
    operand is contiguous across rows or constant along them: an addend
    varying along the rows ([1, 6, 1]: per row; [7]: per column) keeps the
    row-by-row walk, a per-channel one ([1, 5, 1, 1]) or a scalar merges."""
    x, w, out = [2, 8, 6, 7], [5, 8, 1, 1], [2, 5, 6, 7]
    text = f"""func.func @main(%x: {_t(x)}, %w: {_t(w)}, %a: {_t(addend)}) -> {_t(out)} {{
  %0 = graph.conv2d %x, %w : ({_t(x)}, {_t(w)}) -> {_t(out)}
  %1 = graph.add %0, %a : ({_t(out)}, {_t(addend)}) -> {_t(out)}
  %2 = graph.sigmoid %1 : {_t(out)}
  func.return %2 : {_t(out)}
}}"""
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert "graph.fused" in str(compiled.graph)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (x, w, addend)]
    np.testing.assert_allclose(compiled(*inputs), reference.run(text, *inputs), rtol=1e-6, atol=1e-6)


def _recording(method, calls: list):
    def recorded(self, *args):
        calls.append(self)
        return method(self, *args)

    return recorded


def test_constant_weights_and_fused_bias_relu():
    x, w = [1, 8, 12, 12], [10, 8, 3, 3]
    weights = rng.uniform(-1, 1, w).astype(np.float32)
    text = _conv_text(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1, constant=weights, epilogue="bias_relu")
    compiled = graphcompiler.compile(text)
    assert "packed_w" in compiled.tir  # the weights global, packed at compile time
    assert "graph.fused" in str(compiled.graph)
    inputs = [rng.uniform(-1, 1, x).astype(np.float32), rng.uniform(-1, 1, [10, 1, 1]).astype(np.float32)]
    np.testing.assert_allclose(compiled(*inputs), reference.run(text, *inputs), rtol=0, atol=1e-4)


def test_constant_batch_norm_runs_in_the_convolution_epilogue():
    """conv -> batch_norm (constant parameters) -> relu is one kernel: the
    batch norm became a per-channel multiply-add (canonicalize) that fuses
    into the convolution's epilogue; NaN and inf inputs give what the
    op-by-op reference gives."""
    x, w = [1, 6, 9, 9], [5, 6, 3, 3]
    out = _out_shape(x, w, (1, 1), (1, 1, 1, 1), (1, 1))
    weights = rng.uniform(-1, 1, w).astype(np.float32)
    scale, bias, mean = (rng.uniform(-1, 1, 5).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.1, 2, 5).astype(np.float32)
    conv = _conv_text(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1, constant=weights)
    parameters = "".join(
        f"  %{name} = graph.constant dense<{values.tolist()}> : {_t([5])}\n"
        for name, values in (("s", scale), ("b", bias), ("m", mean), ("v", var))
    )
    text = conv.replace(
        f"  func.return %0 : {_t(out)}",
        parameters
        + f"  %1 = graph.batch_norm %0, %s, %b, %m, %v : ({_t(out)}, {', '.join([_t([5])] * 4)}) -> {_t(out)}\n"
        + f"  %2 = graph.relu %1 : {_t(out)}\n  func.return %2 : {_t(out)}",
    )
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert "batch_norm" not in str(compiled.graph)
    assert compiled.tir.count("tir.func @") == 2  # main and the one fused kernel
    inputs = [rng.uniform(-1, 1, x).astype(np.float32)]
    inputs[0][0, 1, 4, 4], inputs[0][0, 2, 0, 0] = np.nan, np.inf
    _check(compiled, text, inputs, atol=1e-4)


@pytest.mark.parametrize("groups", [1, 6])
def test_a_zero_pad_before_a_convolution_becomes_its_padding(groups):
    """Pad (zeros after H and W, "same" padding split as TensorFlow does)
    then a stride-2 convolution: one kernel reading the unpadded input."""
    x, w = [1, 6, 12, 13], [6, 6 // groups, 3, 3]
    text = f"""func.func @main(%x: {_t(x)}, %w: {_t(w)}) -> {_t([1, 6, 6, 6])} {{
  %p = graph.pad %x {{pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 0>}} : {_t(x)} -> {_t([1, 6, 13, 13])}
  %0 = graph.conv2d %p, %w {{strides = array<i64: 2, 2>, groups = {groups} : i64}} : ({_t([1, 6, 13, 13])}, {_t(w)}) -> {_t([1, 6, 6, 6])}
  func.return %0 : {_t([1, 6, 6, 6])}
}}"""
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert "graph.pad" not in str(compiled.graph)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in (x, w)]
    _check(compiled, text, inputs, atol=1e-5 * 27)


def test_integer_convolution_keeps_the_direct_loops():
    text = """func.func @main(%x: tensor<1x2x5x5xi32>, %w: tensor<3x2x3x3xi32>) -> tensor<1x3x3x3xi32> {
  %0 = graph.conv2d %x, %w : (tensor<1x2x5x5xi32>, tensor<3x2x3x3xi32>) -> tensor<1x3x3x3xi32>
  func.return %0 : tensor<1x3x3x3xi32>
}"""
    compiled = graphcompiler.compile(text)
    assert "tir.brgemm_tile" not in compiled.tir
    inputs = [rng.integers(-5, 5, s).astype(np.int32) for s in ([1, 2, 5, 5], [3, 2, 3, 3])]
    np.testing.assert_array_equal(compiled(*inputs), reference.run(text, *inputs))


@pytest.mark.parametrize("x, w, stride, pad, path", [
    ([1, 32, 7, 7], [40, 32, 1, 1], (1, 1), (0, 0, 0, 0), conv_gemm.GemmConv),  # pointwise
    ([1, 16, 13, 13], [24, 16, 3, 3], (2, 2), (1, 1, 1, 1), conv_gemm.GemmConv),  # im2col
    ([1, 8, 14, 14], [8, 1, 3, 3], (1, 1), (1, 1, 1, 1), DepthwiseConv),  # per-plane epilogue
])  # fmt: skip
def test_sixteen_lane_convolutions_lower_to_the_llvm_dialect(monkeypatch, x, w, stride, pad, path):
    """The AVX-512 code of the GEMM and depthwise paths and of the merged-row
    epilogue is built and verified on every host (hosts without AVX-512
    cannot run it: the tests above run the 8- and 4-lane code)."""
    monkeypatch.setenv("GC_TARGET", "avx512")
    taken = []
    monkeypatch.setattr(path, "emit", _recording(path.emit, taken))
    groups = x[1] if w[1] == 1 else 1
    text = _conv_text(x, w, stride, pad, (1, 1), groups, epilogue="bias_relu_residual")
    module = graphcompiler.parse(text)
    graphcompiler.apply_pipeline(module, "builtin.module(gc-cpu-pipeline)", verify_each=True)
    lowered = str(module)
    assert taken and "vector<16xf32>" in lowered and "vector<8xf32>" not in lowered


def test_shifted_rows_narrower_than_a_vector_verify():
    """Input rows of 8 (a vector on AVX2), output rows of 6: the row copies
    of each filter column are 6 wide, so they copy element by element (a
    vector loop there was never run but failed Tensor IR verification)."""
    text = """
func.func @main(%x: tensor<1x2x10x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x8x6xf32> {
  %y = graph.conv2d %x, %w : (tensor<1x2x10x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x6xf32>
  func.return %y : tensor<1x4x8x6xf32>
}"""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 10, 8)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    got = graphcompiler.compile(text, cache=False, verify_each=True)(x, w)
    np.testing.assert_allclose(got, reference.run(text, x, w), rtol=1e-5, atol=1e-5)
