"""8-bit matmuls as u8 x s8 (graph-integer-matmul's second rewrite) and
their byte-quad kernels: `vpdpbusd` on VNNI hosts, the same sums emulated
everywhere else, and pairs where a target has no VNNI."""

import dataclasses
import itertools

import numpy as np
import pytest

import graphcompiler
from graphcompiler.lowering.graph_to_tir import matmul_pairs, matmul_template
from graphcompiler.lowering.tir_to_llvm import brgemm
from graphcompiler.runtime.amx_tiles import has_amx
from graphcompiler.runtime.microkernels import Microkernel, has_dot_instruction, microkernel_module
from graphcompiler.target.description import get_target

HOST = get_target()  # GC_TARGET's, else the host: what compile() targets
VNNI_HOST = has_dot_instruction(HOST, "u8s8", HOST.f32_lanes)
AMX_HOST = has_amx(HOST, "u8s8")


def _dims(shape) -> str:
    return "x".join(map(str, shape))


def _tensor(shape, element: str) -> str:
    return f"tensor<{_dims(shape)}x{element}>" if len(shape) else f"tensor<{element}>"


def _force(monkeypatch, path: str) -> None:
    """Run u8 x s8 matmuls on `path`: "amx" (the host's tiles), "vnni" (the
    host's vpdpbusd), "emulated" (byte quads without either; "emulated-8"
    on 8 lanes) or "pairs" (as without VNNI)."""
    if path == "amx" and not AMX_HOST:
        pytest.skip("the host has no AMX-INT8 (or Linux did not lend its tiles)")
    if path == "vnni" and not VNNI_HOST:
        pytest.skip("the host has no VNNI")
    monkeypatch.setattr(matmul_template, "byte_quads", lambda target: path != "pairs")
    if path != "amx":
        for module in (matmul_pairs, brgemm):
            monkeypatch.setattr(module, "has_amx", lambda *args: False)
    if path.startswith("emulated"):
        monkeypatch.setattr(brgemm, "has_dot_instruction", lambda *args: False)
    if path == "emulated-8":  # the 8-lane kernels (an AVX2 target)
        monkeypatch.setenv("GC_TARGET", "avx2")


@pytest.mark.parametrize("path", ["amx", "vnni", "emulated", "emulated-8", "pairs"])
@pytest.mark.parametrize(
    "a_shape, b_shape, transposes",
    [
        ((1, 1), (1, 1), (False, False)),
        ((5, 7), (7, 19), (False, False)),  # K not a multiple of 4, column tail
        ((33, 64), (64, 48), (False, False)),  # A's quads copied in place
        ((2, 9, 31), (31, 17), (False, False)),  # batched A
        ((70, 130), (40, 130), (False, True)),  # B stored [N, K]; 2 chunks of 32 rows
        ((96, 256), (256, 64), (False, False)),  # whole AMX tiles of K
        ((300, 64), (64, 48), (False, False)),  # AMX: calls of at most 256 accumulators' rows
        ((31, 6), (31, 24), (True, False)),  # A stored [K, M]
        ((3, 4, 12), (3, 12, 5), (False, False)),  # batched B
    ],
)
@pytest.mark.parametrize("constant_b", [True, False])
def test_byte_quad_matmul_is_exact(monkeypatch, path, a_shape, b_shape, transposes, constant_b):
    """Every u8 and s8 value, the extremes included (255 x -128 summed
    over K), gives numpy's int64 product."""
    _force(monkeypatch, path)
    rng = np.random.default_rng(len(a_shape) * 100 + a_shape[-1])
    a = rng.integers(0, 256, a_shape).astype(np.uint8)
    b = rng.integers(-128, 128, b_shape).astype(np.int8)
    a.flat[:3], b.flat[:3] = 255, -128
    a_ = np.swapaxes(a, -1, -2) if transposes[0] else a
    b_ = np.swapaxes(b, -1, -2) if transposes[1] else b
    want = np.matmul(a_.astype(np.int64), b_.astype(np.int64)).astype(np.int32)
    flags = (
        f"transpose_a = {str(transposes[0]).lower()}, transpose_b = {str(transposes[1]).lower()}"
    )
    types = f"(tensor<{_dims(a.shape)}xui8>, tensor<{_dims(b.shape)}xi8>) -> tensor<{_dims(want.shape)}xi32>"
    text = f"""
func.func @main(%a: tensor<{_dims(a.shape)}xui8>, %b: tensor<{_dims(b.shape)}xi8>) -> tensor<{_dims(want.shape)}xi32> {{
  %y = graph.matmul %a, %b {{{flags}}} : {types}
  func.return %y : tensor<{_dims(want.shape)}xi32>
}}"""
    constants = {"b": b} if constant_b else {}
    compiled = graphcompiler.compile(text, constants=constants, cache=False)
    kind = "gc_ukernel_i16x2_" if path == "pairs" else "gc_ukernel_u8s8x4_"
    assert kind in compiled.llvm_ir
    lanes = 8 if path == "emulated-8" else HOST.f32_lanes
    assert f"_l{lanes}_" in compiled.llvm_ir
    assert ("_dot" in compiled.llvm_ir) == (path in ("vnni", "amx"))
    assert ("_amx" in compiled.llvm_ir) == (path == "amx")
    got = compiled(a) if constant_b else compiled(a, b)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    if "__elided__" not in compiled.tir:  # its tiles verify (an AMX one once took all the rows)
        graphcompiler.parse(compiled.tir)


def _centered_matmul(a_type, b, za_shape, zb_shape, transpose_b) -> str:
    """sum_k (a - za)(b - zb) as the ONNX importer builds MatMulInteger: the
    8-bit operands cast to i16 minus their zero points."""
    m, k = 6, b.shape[1] if transpose_b else b.shape[0]
    n = b.shape[0] if transpose_b else b.shape[1]
    b_type = "ui8" if b.dtype == np.uint8 else "i8"
    b_dims = _dims(b.shape)
    args, lines = [f"%a: tensor<{m}x{k}x{a_type}>"], []

    def centered(value: str, dims: str, zero_shape, zero: str) -> str:
        """`value` (i16 tensor<dims>) minus argument %`zero` of `zero_shape`."""
        if zero_shape is None:
            return value
        zero_type, value_type = _tensor(zero_shape, "i16"), f"tensor<{dims}xi16>"
        args.append(f"%{zero}: {zero_type}")
        lines.append(
            f"%{zero}c = graph.sub {value}, %{zero} : ({value_type}, {zero_type}) -> {value_type}"
        )
        return f"%{zero}c"

    lines.append(f"%a16 = graph.cast %a : tensor<{m}x{k}x{a_type}> -> tensor<{m}x{k}xi16>")
    a_value = centered("%a16", f"{m}x{k}", za_shape, "za")
    values = ", ".join(str(v) for v in b.flatten())
    lines += [
        f"%b = graph.constant dense<[{values}]> : tensor<{b.size}x{b_type}>",
        f"%bs = graph.reshape %b : tensor<{b.size}x{b_type}> -> tensor<{b_dims}x{b_type}>",
        f"%b16 = graph.cast %bs : tensor<{b_dims}x{b_type}> -> tensor<{b_dims}xi16>",
    ]
    b_value = centered("%b16", b_dims, zb_shape, "zb")
    flag = "true" if transpose_b else "false"
    lines += [
        f"%y = graph.matmul {a_value}, {b_value} {{transpose_b = {flag}}} : "
        f"(tensor<{m}x{k}xi16>, tensor<{b_dims}xi16>) -> tensor<{m}x{n}xi32>",
        f"func.return %y : tensor<{m}x{n}xi32>",
    ]
    body = "\n  ".join(lines)
    return f"func.func @main({', '.join(args)}) -> tensor<{m}x{n}xi32> {{\n  {body}\n}}"


@pytest.mark.parametrize(
    "a_type, b_type, za, zb, transpose_b",
    [
        (a_type, b_type, za, zb, transpose_b)
        for a_type, b_type in itertools.product(["ui8", "i8"], [np.uint8, np.int8])
        for za, zb in [(None, None), ((), ()), ((6, 1), "columns")]
        for transpose_b in (False, True)
    ]
    + [("ui8", np.int8, None, "columns", False), ("i8", np.uint8, (6, 1), None, True)],
)
def test_zero_points_are_subtracted_after_the_8_bit_product(a_type, b_type, za, zb, transpose_b):
    """Every pair of 8-bit types, zero points absent, one value, one per row
    of A and one per column of B (B stored either way): the rewritten
    matmul multiplies u8 by s8, and the result is the centered product's."""
    rng = np.random.default_rng(5)
    k, n = 37, 21
    info = np.iinfo(b_type)
    b = rng.integers(info.min, info.max + 1, (n, k) if transpose_b else (k, n)).astype(b_type)
    a_info = np.iinfo(np.uint8 if a_type == "ui8" else np.int8)
    a = rng.integers(a_info.min, a_info.max + 1, (6, k)).astype(a_info.dtype)
    zb_shape = None if zb is None else ((n, 1) if transpose_b else (n,)) if zb == "columns" else zb
    text = _centered_matmul(a_type, b, za, zb_shape, transpose_b)
    module = graphcompiler.parse(text)
    graphcompiler.apply_pipeline(module, "builtin.module(graph-integer-matmul)")
    assert "xui8>, tensor<" in str(module) and "xi8>) -> tensor<6x21xi32>" in str(module)
    args = {"a": a}
    za_value = zb_value = 0
    if za is not None:
        za_value = args["za"] = rng.integers(-200, 300, za).astype(np.int16)
    if zb_shape is not None:
        zb_value = args["zb"] = rng.integers(-200, 300, zb_shape).astype(np.int16)
    b_centered = b.astype(np.int64) - np.asarray(zb_value, np.int64)
    b_ = b_centered.T if transpose_b else b_centered
    want = ((a.astype(np.int64) - za_value) @ b_).astype(np.int32)
    got = graphcompiler.compile(text, cache=False)(**args)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("zero, sums", [(0, 1), (3, 2)])
def test_a_zero_zero_point_of_the_weights_adds_no_row_sums(zero, sums):
    """Symmetric weights (a constant zero point of 0, the usual case) need
    no sums of A: only B's column sums are taken; a zero point of 3 adds
    A's row sums."""
    text = f"""
func.func @main(%a: tensor<6x8xui8>, %za: tensor<i16>) -> tensor<6x4xi32> {{
  %a16 = graph.cast %a : tensor<6x8xui8> -> tensor<6x8xi16>
  %ac = graph.sub %a16, %za : (tensor<6x8xi16>, tensor<i16>) -> tensor<6x8xi16>
  %b = graph.constant dense<1> : tensor<8x4xi8>
  %zb = graph.constant dense<{zero}> : tensor<i8>
  %b16 = graph.cast %b : tensor<8x4xi8> -> tensor<8x4xi16>
  %zb16 = graph.cast %zb : tensor<i8> -> tensor<i16>
  %bc = graph.sub %b16, %zb16 : (tensor<8x4xi16>, tensor<i16>) -> tensor<8x4xi16>
  %y = graph.matmul %ac, %bc : (tensor<6x8xi16>, tensor<8x4xi16>) -> tensor<6x4xi32>
  func.return %y : tensor<6x4xi32>
}}"""
    module = graphcompiler.parse(text)
    graphcompiler.apply_pipeline(module, "builtin.module(graph-integer-matmul)")
    assert "(tensor<6x8xui8>, tensor<8x4xi8>) -> tensor<6x4xi32>" in str(module)
    assert str(module).count("graph.reduce_sum") == sums


def test_byte_quads_use_vpdpbusd_where_the_target_has_it():
    """With AVX512-VNNI (16 lanes) or AVX-VNNI (8) the quad microkernels are
    one `vpdpbusd` per register: compiled to assembly on every host."""
    import llvmlite.binding as llvm

    avx512 = get_target("avx512")

    def with_extensions(*names: str):
        return dataclasses.replace(avx512, extensions=frozenset(names))

    assert has_dot_instruction(with_extensions("avx512vnni"), "u8s8", 16)
    assert has_dot_instruction(with_extensions("avxvnni"), "u8s8", 8)
    assert not has_dot_instruction(with_extensions("avxvnni"), "u8s8", 16)
    assert not has_dot_instruction(with_extensions("avx512bf16"), "u8s8", 16)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for lanes, register, cpu, features in (
        (16, "zmm", "icelake-server", "+avx512f,+avx512bw,+avx512vl,+avx512vnni"),
        (8, "ymm", "alderlake", "+avx2,+avxvnni,-avx512f"),
    ):
        machine = llvm.Target.from_default_triple().create_target_machine(
            cpu=cpu, features=features, opt=2
        )
        kernel = Microkernel(m=4, n=2 * lanes - 3, lanes=lanes, a_row=40, a_k=1, ldb=32, ldc=48,
                             pairs="u8s8", dot_instruction=True)  # fmt: skip
        assert kernel.name.startswith("gc_ukernel_u8s8x4_") and kernel.name.endswith("_dot")
        parsed = llvm.parse_assembly(microkernel_module([kernel]))
        parsed.verify()
        assembly = machine.emit_assembly(parsed)
        assert f"vpdpbusd\t%{register}" in assembly and "vpmaddwd" not in assembly


@pytest.mark.parametrize("pairs, product", [("u8s8", "tdpbusd"), ("bf16", "tdpbf16ps")])
def test_amx_tile_kernels_compile_to_tile_instructions(pairs, product):
    """The AMX kernels (2 x 2 tiles of 16 x 16 sums, rows in chunks of 32,
    a column tail of 5) built and compiled to assembly on every host: the
    tiles are configured once per call, loaded, multiplied and stored."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu="sapphirerapids", features="+amx-tile,+amx-int8,+amx-bf16", opt=2
    )
    kernel = Microkernel(m=64, n=21, lanes=16, a_row=80, a_k=1, ldb=32, ldc=48, pairs=pairs,
                         dot_instruction=True, amx=True)  # fmt: skip
    parsed = llvm.parse_assembly(microkernel_module([kernel]))
    parsed.verify()
    assembly = machine.emit_assembly(parsed)
    assert assembly.count("ldtilecfg") == 1 and "tilerelease" in assembly
    assert assembly.count(f"{product}\t") == 4  # one per C tile, in the K loop
    assert "tilestored" in assembly and "tilezero" in assembly


def test_cache_keys_tell_whether_the_process_may_use_amx(monkeypatch):
    """A program compiled where Linux lent AMX's tiles may use them; loaded
    from the cache where it did not, it would stop on its first tile
    instruction: the keys differ."""
    from graphcompiler.driver import compile_cache
    from graphcompiler.runtime import amx_tiles

    keys = {}
    for lent in (True, False):
        monkeypatch.setattr(amx_tiles, "enable_amx", lambda lent=lent: lent)
        keys[lent] = compile_cache.source_key("func.func @main() { func.return }", "main", {})
    assert keys[True] != keys[False]
