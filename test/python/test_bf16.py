"""bf16 compute: widening bf16 matmuls and convolutions, the fpmath mode of
compile(precision="bf16") (graph-bf16-fpmath), and the bf16-pair kernels
that run it on AVX512-BF16 (their portable form is run here, on any host)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import graphcompiler
from graphcompiler.ir.element_types import round_to_bf16
from graphcompiler.lowering.graph_to_tir import matmul_template
from graphcompiler.tools import gc_run

MODELS = Path(__file__).resolve().parents[1] / "models"


def _mlp(m: int, k: int, n: int, transpose_b: bool = False) -> str:
    w_shape = f"{n}x{k}" if transpose_b else f"{k}x{n}"
    return f"""
func.func @main(%x: tensor<{m}x{k}xf32>, %w: tensor<{w_shape}xf32>) -> tensor<{m}x{n}xf32> {{
  %y = graph.matmul %x, %w {{transpose_b = {str(transpose_b).lower()}}} : (tensor<{m}x{k}xf32>, tensor<{w_shape}xf32>) -> tensor<{m}x{n}xf32>
  %r = graph.relu %y : tensor<{m}x{n}xf32>
  func.return %r : tensor<{m}x{n}xf32>
}}"""


def _bf16_product(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w on bf16-rounded operands, summed in f64."""
    return round_to_bf16(x).astype(np.float64) @ round_to_bf16(w).astype(np.float64)


def _relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max() / np.abs(want).max())


@pytest.mark.parametrize("m,k,n,transpose_b", [(33, 64, 40, False), (7, 37, 19, True)])
def test_bf16_precision_rounds_the_layer_operands(m, k, n, transpose_b):
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((n, k) if transpose_b else (k, n), dtype=np.float32)
    source = _mlp(m, k, n, transpose_b)
    bf16 = graphcompiler.compile(source, constants={"w": w}, cache=False, precision="bf16")
    f32 = graphcompiler.compile(source, constants={"w": w}, cache=False)
    assert "bf16" in bf16.graph and "bf16" not in f32.graph
    want = np.maximum(_bf16_product(x, w.T if transpose_b else w), 0)
    assert _relative_error(bf16(x=x), want) < 1e-6  # only the f32 sum's rounding
    exact = np.maximum(x.astype(np.float64) @ (w.T if transpose_b else w), 0)
    assert 1e-5 < _relative_error(bf16(x=x), exact) < 2e-2  # the operands' rounding
    assert _relative_error(f32(x=x), exact) < 1e-6


@pytest.mark.parametrize("channels", [8, 16])
def test_bf16_precision_of_convolutions(channels):
    """precision="bf16" gives a convolution bf16 operands where the target
    has AMX-BF16 and it has a block of input channels or more (then the
    sums are the rounded operands' exact products); elsewhere it stays f32."""
    from graphcompiler.runtime.amx_tiles import has_amx
    from graphcompiler.target.description import get_target

    rng = np.random.default_rng(channels)
    x = rng.standard_normal((1, channels, 9, 9), dtype=np.float32)
    f = rng.standard_normal((16, channels, 3, 3), dtype=np.float32)
    x_type, f_type = f"tensor<1x{channels}x9x9xf32>", f"tensor<16x{channels}x3x3xf32>"
    source = f"""
func.func @main(%x: {x_type}, %f: {f_type}) -> tensor<1x16x7x7xf32> {{
  %c = graph.conv2d %x, %f : ({x_type}, {f_type}) -> tensor<1x16x7x7xf32>
  func.return %c : tensor<1x16x7x7xf32>
}}"""

    def convolved(x, f):
        return sum(
            np.einsum("nchw,oc->nohw", x[:, :, i : i + 7, j : j + 7], f[:, :, i, j])
            for i in range(3)
            for j in range(3)
        )

    compiled = graphcompiler.compile(source, constants={"f": f}, cache=False, precision="bf16")
    on_pairs = channels >= 16 and has_amx(get_target(), "bf16")
    assert ("bf16" in str(compiled.tir)) == on_pairs
    if on_pairs:
        x, f = round_to_bf16(x), round_to_bf16(f)
    want = convolved(x.astype(np.float64), f.astype(np.float64))
    assert _relative_error(compiled(x=x), want) < 1e-6


PAIR_CONVOLUTIONS = [
    # c, o, size, kernel, stride, pad, dilation
    (32, 48, 9, 3, 1, 1, 1),  # 3 output blocks: one a tile
    (40, 32, 11, 3, 2, 1, 1),  # a part block of input channels, strided
    (64, 80, 14, 1, 1, 0, 1),  # pointwise: the pixels one run of A rows
    (48, 32, 10, 1, 2, 0, 1),  # strided 1x1: pixels gathered
    (16, 16, 12, 3, 1, 2, 2),  # dilated, a K of one tile row
    (96, 32, 5, 5, 1, 2, 1),  # 3 tile rows of K, 25 taps
]


@pytest.mark.parametrize("path", ["amx", "vector"])
@pytest.mark.parametrize("c, o, size, kernel, stride, pad, dilation", PAIR_CONVOLUTIONS)
def test_bf16_convolutions_run_on_pairs(monkeypatch, path, c, o, size, kernel, stride, pad,
                                        dilation):  # fmt: skip
    """graph-bf16-fpmath{convolutions=true}'s convolutions run channel-blocked
    on bf16 pairs (conv_amx.py): on the host's AMX-BF16 tiles, and the same
    Tensor IR on the vector pair kernels; their sums are those of the
    bf16-rounded operands."""
    from graphcompiler.lowering.graph_to_tir import conv_amx
    from graphcompiler.lowering.tir_to_llvm import brgemm
    from graphcompiler.runtime.amx_tiles import has_amx
    from graphcompiler.target.description import get_target

    if get_target().f32_lanes != 16:
        pytest.skip("bf16 pairs run in blocks of 16 channels")
    if path == "amx" and not has_amx(get_target(), "bf16"):
        pytest.skip("the host has no AMX-BF16 (or Linux did not lend its tiles)")
    if path == "vector":
        for module in (conv_amx, brgemm):
            monkeypatch.setattr(module, "has_amx", lambda *args: False)
    rng = np.random.default_rng(c + o + size)
    x = rng.standard_normal((1, c, size, size), dtype=np.float32)
    f = rng.standard_normal((o, c, kernel, kernel), dtype=np.float32) / np.sqrt(c * kernel**2)
    out = (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
    x_type, out_type = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<1x{o}x{out}x{out}xf32>"
    f_type = f"tensor<{o}x{c}x{kernel}x{kernel}xf32>"
    values = ", ".join(f"{v:.9e}" for v in f.flatten())
    source = f"""
func.func @main(%x: {x_type}) -> {out_type} {{
  %f = graph.constant dense<[{values}]> : tensor<{f.size}xf32>
  %w = graph.reshape %f : tensor<{f.size}xf32> -> {f_type}
  %y = graph.conv2d %x, %w {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>, dilations = array<i64: {dilation}, {dilation}>}} : ({x_type}, {f_type}) -> {out_type}
  %r = graph.relu %y : {out_type}
  func.return %r : {out_type}
}}"""
    module = graphcompiler.parse(source)
    graphcompiler.apply_pipeline(module, "builtin.module(graph-bf16-fpmath{convolutions=true})")
    compiled = graphcompiler.compile(module, cache=False)
    words = -(-c // 32) * 16
    assert f"x{words}xi32>" in compiled.tir  # bf16 pairs, pixel-major
    assert ("_amx" in compiled.llvm_ir) == (path == "amx")
    rx = np.pad(round_to_bf16(x).astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    rf = round_to_bf16(f).astype(np.float64)
    span = stride * (out - 1) + 1
    want = np.maximum(sum(
        np.einsum("nchw,oc->nohw", rx[:, :, i * dilation : i * dilation + span : stride,
                                      j * dilation : j * dilation + span : stride], rf[:, :, i, j])
        for i in range(kernel) for j in range(kernel)
    ), 0)  # fmt: skip
    assert _relative_error(compiled(x), want) < 1e-6


def test_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="unknown precision 'fp8' .*f32, bf16"):
        graphcompiler.compile(_mlp(2, 3, 4), precision="fp8")


@pytest.mark.parametrize(
    "m,k,n,transpose_b", [(33, 64, 40, False), (7, 37, 19, True), (65, 130, 70, False)]
)
@pytest.mark.parametrize("constant_b", [True, False])
@pytest.mark.parametrize("amx", [True, False])
def test_bf16_pair_kernels(monkeypatch, m, k, n, transpose_b, constant_b, amx):
    """The path of AVX512-BF16 hosts (bf16 pairs packed two K steps to an
    i32, pair microkernels) with the portable multiply-add that stands in
    for `vdpbf16ps` where the host lacks it: the same sums; and on hosts
    with AMX-BF16, the pairs on AMX tiles."""
    from graphcompiler.lowering.graph_to_tir import matmul_pairs
    from graphcompiler.lowering.tir_to_llvm import brgemm
    from graphcompiler.runtime.amx_tiles import has_amx
    from graphcompiler.target.description import get_target

    if amx and not has_amx(get_target(), "bf16"):  # GC_TARGET's, else the host
        pytest.skip("the host has no AMX-BF16 (or Linux did not lend its tiles)")
    if not amx:
        for module in (matmul_pairs, brgemm):
            monkeypatch.setattr(module, "has_amx", lambda *args: False)
    monkeypatch.setattr(matmul_template, "bf16_pairs", lambda target: True)
    rng = np.random.default_rng(k)
    x = rng.standard_normal((m, k), dtype=np.float32)
    w = rng.standard_normal((n, k) if transpose_b else (k, n), dtype=np.float32)
    constants = {"w": w} if constant_b else {}
    compiled = graphcompiler.compile(
        _mlp(m, k, n, transpose_b), constants=constants, cache=False, precision="bf16"
    )
    if not constant_b:  # a weight computed at run time is not a layer's: made bf16 here
        text = _mlp(m, k, n, transpose_b).replace("%x, %w", "%xb, %wb")
        w_type = f"tensor<{n}x{k}xf32>" if transpose_b else f"tensor<{k}x{n}xf32>"
        casts = (
            f"  %xb = graph.cast %x : tensor<{m}x{k}xf32> -> tensor<{m}x{k}xbf16>\n"
            f"  %wb = graph.cast %w : {w_type} -> {w_type.replace('f32', 'bf16')}\n"
        )
        text = text.replace("  %y = ", casts + "  %y = ").replace(
            f"(tensor<{m}x{k}xf32>, {w_type})",
            f"(tensor<{m}x{k}xbf16>, {w_type.replace('f32', 'bf16')})",
        )
        compiled = graphcompiler.compile(text, cache=False)
    assert "gc_ukernel_bf16x2_" in compiled.llvm_ir
    assert ("_amx" in compiled.llvm_ir) == amx
    args = {"x": x} if constant_b else {"x": x, "w": w}
    want = np.maximum(_bf16_product(x, w.T if transpose_b else w), 0)
    assert _relative_error(compiled(**args), want) < 1e-6


def test_bf16_pairs_use_vdpbf16ps_where_the_target_has_it(monkeypatch):
    """With AVX512-BF16 the pair microkernels are one `vdpbf16ps` per
    register: built and compiled to assembly on every host (only such a
    host can run it)."""
    import llvmlite.binding as llvm

    from graphcompiler.lowering.tir_to_llvm import brgemm
    from graphcompiler.runtime.microkernels import Microkernel, microkernel_module
    from graphcompiler.target.description import get_target

    bf16_host = type(get_target("avx512"))(
        **{**get_target("avx512").__dict__, "extensions": frozenset({"avx512bf16"})}
    )
    monkeypatch.setattr(brgemm, "get_target", lambda: bf16_host)
    monkeypatch.setattr(matmul_template, "bf16_pairs", lambda target: True)
    module = graphcompiler.parse("""
func.func @main(%x: tensor<33x64xf32>) -> tensor<33x40xf32> {
  %w = graph.constant dense<0.5> : tensor<64x40xf32>
  %y = graph.matmul %x, %w : (tensor<33x64xf32>, tensor<64x40xf32>) -> tensor<33x40xf32>
  func.return %y : tensor<33x40xf32>
}""")
    graphcompiler.apply_pipeline(module, "builtin.module(graph-bf16-fpmath,gc-cpu-pipeline)")
    assert "gc_ukernel_bf16x2_" in str(module) and "_dot" in str(module)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu="sapphirerapids", features="+avx512f,+avx512bw,+avx512vl,+avx512bf16", opt=2
    )
    for lanes, register in ((16, "zmm"), (8, "ymm")):
        kernel = Microkernel(m=4, n=2 * lanes - 3, lanes=lanes, a_row=40, a_k=1, ldb=32, ldc=48,
                             pairs="bf16", dot_instruction=True)  # fmt: skip
        parsed = llvm.parse_assembly(microkernel_module([kernel]))
        parsed.verify()
        assembly = machine.emit_assembly(parsed)
        assert f"vdpbf16ps\t%{register}" in assembly and "vfmadd" not in assembly


def test_gc_run_precision_flag(tmp_path, capsys):
    path = tmp_path / "mlp.mlir"
    path.write_text(_mlp(4, 8, 3))
    assert gc_run.main([str(path), "--random-inputs", "--precision", "bf16"]) == 0
    with pytest.raises(SystemExit):
        gc_run.main([str(path), "--random-inputs", "--precision", "fp8"])
    assert "invalid choice: 'fp8'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["bert_torchscript_static", "resnet_torchscript_static"])
def test_bf16_precision_on_suite_models(name):
    """Suite models at precision="bf16" stay within the bf16 operands'
    error of their f32 results (the README states what to expect); one
    whose layers are all convolutions gives its f32 results."""
    manifest = json.loads((MODELS / "manifest.json").read_text())
    if f"{name}.onnx" not in {entry["file"] for entry in manifest["models"]}:
        pytest.skip(f"{name} is not in the suite")
    data = np.load(MODELS / f"{name}.npz")
    inputs = {k: data[k] for k in data.files if not k.startswith("output")}
    f32 = graphcompiler.compile(MODELS / f"{name}.onnx", cache=False)
    bf16 = graphcompiler.compile(MODELS / f"{name}.onnx", cache=False, precision="bf16")
    want, got = f32(**inputs), bf16(**inputs)
    want, got = (want[0], got[0]) if isinstance(want, tuple | list) else (want, got)
    error = _relative_error(got.astype(np.float64), want.astype(np.float64))
    assert error < 2e-2
    assert (error > 0) == ("bf16" in str(bf16.tir))  # a convolutions-only model stays f32
