"""Matmul through packed panels and generated microkernels, on every target
the host can run (avx512 16 lanes, avx2 8 lanes, generic 4 lanes): odd
sizes (register-tile and panel tails), transposes, batch broadcasting, GEMV,
constant weights packed at compile time, f16/bf16 computed in f32, fused
epilogues; against a float64 numpy product, 1 and 2 threads bitwise equal.
"""

import math
from dataclasses import replace

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver.loading import parse
from graphcompiler.ir import element_types
from graphcompiler.lowering.llvm.microkernels import declaration, declared_kernels
from graphcompiler.runtime.microkernels import Microkernel
from graphcompiler.target import description as targets
from graphcompiler.target.schedules import MatmulSchedule

TARGETS = [name for name in ("avx512", "avx2", "generic") if targets.supported(name)]
rng = np.random.default_rng(7)


def _type(shape, element="f32"):
    return "tensor<" + "x".join(str(s) for s in [*shape, element]) + ">"


def _matmul_text(a_shape, b_shape, out_shape, element="f32", transpose_a=False, transpose_b=False):
    flags = [
        f"{n} = true"
        for n, on in (("transpose_a", transpose_a), ("transpose_b", transpose_b))
        if on
    ]
    props = " {" + ", ".join(flags) + "}" if flags else ""
    a, b, o = _type(a_shape, element), _type(b_shape, element), _type(out_shape, element)
    return f"""func.func @main(%a: {a}, %b: {b}) -> {o} {{
  %0 = graph.matmul %a, %b{props} : ({a}, {b}) -> {o}
  func.return %0 : {o}
}}"""


def _expected(a, b, transpose_a, transpose_b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if transpose_a:
        a64 = np.swapaxes(a64, -1, -2)
    if transpose_b:
        b64 = np.swapaxes(b64, -1, -2)
    return np.matmul(a64, b64)


def _run_both_thread_counts(compiled, *inputs):
    compiled.set_num_threads(1)
    one = compiled(*inputs)
    compiled.set_num_threads(2)
    two = compiled(*inputs)
    np.testing.assert_array_equal(one, two)  # blocking and threads never reorder K
    return one


CASES = [
    # (a_shape, b_shape, transpose_a, transpose_b)
    ([1, 1], [1, 1], False, False),
    ([3, 17], [17, 65], False, False),
    ([127, 33], [33, 129], False, False),
    ([65, 300], [300, 47], False, False),  # two K blocks and a K tail on small targets
    ([1, 257], [257, 100], False, False),  # GEMV
    ([129, 17], [129, 65], True, False),
    ([17, 129], [65, 129], False, True),
    ([40, 17], [33, 40], True, True),
    ([2, 3, 17, 19], [19, 23], False, False),  # batch, B broadcast
    ([3, 17, 19], [1, 19, 23], False, False),
    ([1, 17, 19], [4, 23, 19], False, True),  # A broadcast over B's batch
    ([13, 1001], [1001, 50], False, False),  # K blocks, then one of the rest of K
    ([1001, 13], [1001, 50], True, False),  # a transposed A read in place; K tail
    ([600, 130], [600, 20], True, False),  # one spanning 312 KB is copied into row groups
    ([7, 2048], [2048, 33], False, False),  # A rows 8 KiB apart, read in place
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("a_shape, b_shape, transpose_a, transpose_b", CASES)
def test_matmul_variants(monkeypatch, target, a_shape, b_shape, transpose_a, transpose_b):
    monkeypatch.setenv("GC_TARGET", target)
    a = rng.uniform(-1, 1, a_shape).astype(np.float32)
    b = rng.uniform(-1, 1, b_shape).astype(np.float32)
    want = _expected(a, b, transpose_a, transpose_b)
    text = _matmul_text(a_shape, b_shape, want.shape, "f32", transpose_a, transpose_b)
    compiled = graphcompiler.compile(text)
    assert "tir.brgemm_tile" in compiled.tir
    k = a_shape[-2] if transpose_a else a_shape[-1]
    got = _run_both_thread_counts(compiled, a, b)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * k)


def test_a_shallow_transposed_a_is_read_where_it_is():
    """A transposed A within IN_PLACE_TRANSPOSED_A_MAX_BYTES feeds the tiles
    from where it is (each K row's mr values adjacent, K rows M apart): no
    copy into row groups; a bigger one is still copied."""
    from graphcompiler.lowering.graph_to_tir.matmul import IN_PLACE_TRANSPOSED_A_MAX_BYTES

    beyond = IN_PLACE_TRANSPOSED_A_MAX_BYTES // 4 // 49 + 1
    for k, m, copied in ((960, 49, False), (beyond, 49, True)):
        a = rng.uniform(-1, 1, (k, m)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, 40)).astype(np.float32)
        want = _expected(a, b, True, False)
        compiled = graphcompiler.compile(_matmul_text([k, m], [k, 40], want.shape, "f32", True))
        assert (f"a_k = {m} : i64" not in compiled.tir) == copied  # K rows M apart: in place
        got = _run_both_thread_counts(compiled, a, b)
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * k)


@pytest.mark.parametrize("target", TARGETS)
def test_constant_weights_are_packed_at_compile_time(monkeypatch, target):
    monkeypatch.setenv("GC_TARGET", target)
    weights = rng.uniform(-1, 1, (19, 37)).astype(np.float32)
    dense = ", ".join(f"[{', '.join(repr(float(v)) for v in row)}]" for row in weights)
    text = f"""func.func @main(%x: tensor<21x19xf32>) -> tensor<21x37xf32> {{
  %w = graph.constant dense<[{dense}]> : tensor<19x37xf32>
  %0 = graph.matmul %x, %w : (tensor<21x19xf32>, tensor<19x37xf32>) -> tensor<21x37xf32>
  func.return %0 : tensor<21x37xf32>
}}"""
    compiled = graphcompiler.compile(text)
    nr = MatmulSchedule.for_shape(targets.get_target(target), 1, 21, 37, 19, constant_b=True).nr
    panels = math.ceil(37 / nr)
    assert f"!tir.tensor<{panels}x19x{nr}xf32>" in compiled.tir  # the packed global
    x = rng.uniform(-1, 1, (21, 19)).astype(np.float32)
    got = _run_both_thread_counts(compiled, x)
    np.testing.assert_allclose(got, x.astype(np.float64) @ weights, rtol=0, atol=1e-5)


@pytest.mark.parametrize("element", ["f16", "bf16"])
def test_half_precision_is_computed_in_f32(element):
    a = rng.uniform(-1, 1, (9, 40)).astype(np.float32)
    b = rng.uniform(-1, 1, (40, 18)).astype(np.float32)
    if element == "f16":
        a, b = a.astype(np.float16), b.astype(np.float16)
        inputs = (a, b)
    else:
        a = element_types.round_to_bf16(a)
        b = element_types.round_to_bf16(b)
        inputs = (a, b)
    compiled = graphcompiler.compile(_matmul_text([9, 40], [40, 18], [9, 18], element))
    assert "tir.brgemm_tile" in compiled.tir
    got = np.asarray(compiled(*inputs), dtype=np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_fused_epilogue_runs_on_each_block():
    text = """func.func @main(%x: tensor<70x90xf32>, %w: tensor<90x50xf32>, %b: tensor<50xf32>) -> tensor<70x50xf32> {
  %0 = graph.matmul %x, %w : (tensor<70x90xf32>, tensor<90x50xf32>) -> tensor<70x50xf32>
  %1 = graph.add %0, %b : (tensor<70x50xf32>, tensor<50xf32>) -> tensor<70x50xf32>
  %2 = graph.relu %1 : tensor<70x50xf32>
  func.return %2 : tensor<70x50xf32>
}"""
    compiled = graphcompiler.compile(text)
    assert "tir.brgemm_tile" in compiled.tir
    x, w = rng.uniform(-1, 1, (70, 90)), rng.uniform(-1, 1, (90, 50))
    b = rng.uniform(-1, 1, 50)
    inputs = [v.astype(np.float32) for v in (x, w, b)]
    got = _run_both_thread_counts(compiled, *inputs)
    np.testing.assert_allclose(got, np.maximum(x @ w + b, 0), rtol=0, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_a_batch_of_matrices_times_one_b_is_one_gemm_of_their_rows(monkeypatch, target):
    """[2, 3, 5, 40] x [40, 70] runs as one GEMM of 30 rows (register tiles
    span matrices), while the epilogue still sees each matrix: an operand
    broadcast over the rows but not over the batch ([1, 3, 1, 70]) must
    meet the right matrix."""
    monkeypatch.setenv("GC_TARGET", target)
    a_t, o_t = _type([2, 3, 5, 40]), _type([2, 3, 5, 70])
    text = f"""func.func @main(%x: {a_t}, %w: {_type([40, 70])}, %s: {_type([1, 3, 1, 70])}) -> {o_t} {{
  %0 = graph.matmul %x, %w : ({a_t}, {_type([40, 70])}) -> {o_t}
  %1 = graph.mul %0, %s : ({o_t}, {_type([1, 3, 1, 70])}) -> {o_t}
  %2 = graph.relu %1 : {o_t}
  func.return %2 : {o_t}
}}"""
    x, w, scale = (rng.uniform(-1, 1, shape) for shape in ([2, 3, 5, 40], [40, 70], [1, 3, 1, 70]))
    compiled = graphcompiler.compile(text, cache=False)
    assert "!tir.tensor<30x40xf32>" in compiled.tir  # A's rows stacked
    got = _run_both_thread_counts(compiled, *(v.astype(np.float32) for v in (x, w, scale)))
    np.testing.assert_allclose(got, np.maximum((x @ w) * scale, 0), rtol=0, atol=1e-4)


def test_blocks_of_stacked_matrices_hold_whole_matrices():
    schedule = MatmulSchedule.for_shape(targets.get_target("avx512"), 1, 49, 3072, 768)
    assert replace(schedule, mc=10).with_row_blocks_of(49, 7).mc == 14
    assert replace(schedule, mc=48).with_row_blocks_of(49, 7).mc == 49
    assert schedule.with_row_blocks_of(49, 1) is schedule


def test_register_tile_fills_the_register_file():
    avx512, avx2 = targets.get_target("avx512"), targets.get_target("avx2")
    for target in (avx512, avx2):
        rows, vectors = MatmulSchedule.register_tile(target, 1024)
        assert rows * vectors + vectors + 1 <= target.vector_registers  # accumulators + B + A
        assert rows * vectors >= target.vector_registers // 2
    assert MatmulSchedule.register_tile(avx512, 16)[1] == 1  # no vectors past N
    schedule = MatmulSchedule.for_shape(avx512, 1, 1024, 1024, 1024)
    assert schedule.kc == 1024  # one K block: C is read and written once
    assert schedule.kc * schedule.nr * 4 <= avx512.l2_bytes // 4  # the B slice in L2
    assert schedule.mc * schedule.kc * 4 <= avx512.l2_bytes  # so is the A block


def test_weights_streamed_from_l2_take_deeper_register_tiles():
    """197 tokens x 768 -> 3072 (ViT-B/16's MLP): with B the weights, a tile
    as useful with more rows whose A rows still fit L1 (9x3 over 6x4), not
    one whose A rows spill (14x2); activations keep the shallower tile."""
    host_like = replace(targets.get_target("avx512"), l1_bytes=32 << 10, l2_bytes=1 << 20)
    assert MatmulSchedule.register_tile(host_like, 3072, 197, k=768) == (9, 3)
    assert MatmulSchedule.register_tile(host_like, 3072, 197) == (6, 4)
    assert MatmulSchedule.register_tile(host_like, 1024, 1024, k=1024) == (6, 4)


def test_k_is_cut_before_m_when_that_keeps_every_row_in_one_block():
    """A transformer's down projection (197 tokens, K = 3072): K blocks of
    768 let all of A's rows share one block, so the weights are read once."""
    host_like = replace(targets.get_target("avx512"), l2_bytes=1 << 20, cores=2)
    schedule = MatmulSchedule.for_shape(host_like, 1, 197, 768, 3072, constant_b=True)
    assert (schedule.kc, schedule.mc) == (768, 198)
    assert schedule.nc < 768  # the cores split N, which re-reads A, not the weights


def test_a_huge_k_schedules_at_once():
    """K = 2^31 (a fuzzed shape): the K cuts tried are bounded, not one per
    256 steps of K (eight million schedules, 28 s of a compile)."""
    import time

    start = time.monotonic()
    schedule = MatmulSchedule.for_shape(targets.get_target("avx512"), 1, 16, 24, 1 << 31)
    assert time.monotonic() - start < 1.0
    assert schedule.kc * math.ceil((1 << 31) / schedule.kc) >= 1 << 31


def _declared_after_round_trip(*kernels):
    """The kernels the declarations carry, after printing and parsing them."""
    from xdsl.dialects.builtin import ModuleOp

    return declared_kernels(parse(str(ModuleOp([declaration(k) for k in kernels]))))


def test_microkernel_parameters_travel_on_their_declaration():
    kernel = Microkernel(m=3, n=21, lanes=16, a_row=1, a_k=14, ldb=32, ldc=100)
    assert Microkernel.from_fields(kernel.fields()) == kernel
    assert kernel.vectors == 2
    text = kernel.llvm_ir()
    assert "@llvm.masked.store.v16f32" in text  # 21 = 16 + a 5-lane masked tail
    assert text.count("@llvm.fmuladd.v16f32") == 3 * 2
    other = Microkernel(m=1, n=8, lanes=8, a_row=1, a_k=1, ldb=8, ldc=8, prefetch=True)
    assert _declared_after_round_trip(kernel, other) == (kernel, other)


def test_a_microkernel_attribute_that_does_not_match_its_function_is_an_error():
    from graphcompiler.ir.diagnostics import DiagnosticError

    kernel = Microkernel(m=3, n=21, lanes=16, a_row=1, a_k=14, ldb=32, ldc=100)
    text = str(declaration(kernel)).replace("m = 3 : i64", "m = 4 : i64")
    with pytest.raises(DiagnosticError, match="does not describe this function"):
        declared_kernels(parse(f"builtin.module {{\n{text}\n}}"))


def test_compiled_programs_carry_their_microkernels():
    compiled = graphcompiler.compile(_matmul_text((5, 7), (7, 9), (5, 9)))
    assert compiled.microkernels
    assert all(f'@"{kernel.name}"(' in compiled.llvm_ir for kernel in compiled.microkernels)


def test_prefetching_microkernels_take_the_next_panel():
    kernel = Microkernel(m=6, n=64, lanes=16, a_row=512, a_k=1, ldb=64, ldc=512, prefetch=True)
    assert _declared_after_round_trip(kernel) == (kernel,)
    text = kernel.llvm_ir()
    assert "i1 %accumulate, ptr %pf)" in text
    assert text.count("@llvm.prefetch.p0(ptr") == 1  # one line per K step
    schedule = MatmulSchedule.for_shape(targets.get_target("avx512"), 1, 256, 512, 4099)
    (full, kc), (last, rest) = schedule.k_blocks(4099)  # no zero padding: a shorter last block
    assert kc == schedule.kc and last == 1 and 0 < rest < kc and full * kc + rest == 4099


def test_tiles_of_a_block_share_the_next_panel_for_prefetching(monkeypatch):
    """A block of 22 row groups of 9 rows and 48-wide panels (3 lines a
    row): each tile prefetches one line of every 7th K row of the next
    panel; a 512x768x768 matmul spreads its prefetches, and its results are
    those of numpy. Blocks follow the target's caches and cores: the fixed
    AVX-512 description here, not the host's (on a 16-core Sapphire Rapids
    with 2 MiB of L2 the test's earlier host-target matmul spread none)."""
    monkeypatch.setenv("GC_TARGET", "avx512")
    kernel = Microkernel(m=9, n=48, lanes=16, a_row=768, a_k=1, ldb=48, ldc=3072,
                         prefetch=True, prefetch_every=7)  # fmt: skip
    assert kernel.name.endswith("_pf7") and _declared_after_round_trip(kernel) == (kernel,)
    assert "%pfstep = udiv i64 %l, 7" in kernel.llvm_ir()
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 768), dtype=np.float32)
    b = rng.standard_normal((768, 768), dtype=np.float32)
    compiled = graphcompiler.compile(_matmul_text(a.shape, b.shape, (512, 768)))
    spread = [k.prefetch_every for k in compiled.microkernels if getattr(k, "prefetch", False)]
    assert spread and max(spread) > 1
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=1e-4, atol=1e-3)


def test_microkernel_taps_round_trip():
    kernel = Microkernel(
        m=2, n=8, lanes=8, a_row=9, a_k=1, ldb=58, ldc=56, taps=((3, 18, 58), (3, 6, 1))
    )
    assert _declared_after_round_trip(kernel) == (kernel,)
    assert kernel.llvm_ir().count("phi i64") == 3  # two tap loops around one K loop


def test_microkernel_code_does_not_grow_with_the_filter():
    def kernel(size: int) -> Microkernel:
        return Microkernel(m=4, n=16, lanes=8, a_row=1, a_k=4, ldb=64, ldc=256,
                           taps=((size, 4 * size * 8, 640), (size, 32, 4096)))  # fmt: skip

    assert len(kernel(32).llvm_ir()) - len(kernel(3).llvm_ir()) < 100  # digits of the sizes


def test_llvm_does_not_unroll_a_microkernels_tap_loops():
    """NOT_UNROLLED: after O2, a 3x3 filter's kernel has as many FMAs as the
    same tile without taps (LLVM may unroll the K loop in both), not 9
    times as many (which made ResNet-50's microkernels 25% slower to build)."""
    import llvmlite.binding as llvm

    from graphcompiler.runtime.jit.engine import _target_machine, initialize_llvm
    from graphcompiler.runtime.jit.optimizer import optimize_here
    from graphcompiler.runtime.microkernels import microkernel_module

    def fmas_after_o2(kernel: Microkernel) -> int:
        module = llvm.parse_assembly(microkernel_module([kernel]))
        optimize_here(module, _target_machine())
        return str(module.get_function(kernel.name)).count("call <8 x float> @llvm.fmuladd.v8f32(")

    initialize_llvm()
    tile = Microkernel(m=4, n=16, lanes=8, a_row=1, a_k=4, ldb=64, ldc=256)
    filtered = replace(tile, taps=((3, 96, 640), (3, 32, 4096)))
    assert fmas_after_o2(filtered) == fmas_after_o2(tile) >= tile.m * tile.vectors


MLP = """func.func @main(%x: tensor<33x200xf32>, %w: tensor<200x96xf32>, %b: tensor<96xf32>) -> tensor<33x96xf32> {
  %0 = graph.matmul %x, %w : (tensor<33x200xf32>, tensor<200x96xf32>) -> tensor<33x96xf32>
  %1 = graph.add %0, %b : (tensor<33x96xf32>, tensor<96xf32>) -> tensor<33x96xf32>
  %2 = graph.relu %1 : tensor<33x96xf32>
  func.return %2 : tensor<33x96xf32>
}"""


def test_arguments_bound_as_constants_are_packed_once_and_kept_out_of_the_text():
    x = rng.uniform(-1, 1, (33, 200)).astype(np.float32)
    w = rng.uniform(-1, 1, (200, 96)).astype(np.float32)
    b = rng.uniform(-1, 1, 96).astype(np.float32)
    bound = graphcompiler.compile(MLP, constants={"w": w, "b": b})
    assert [list(t.get_shape()) for t in bound.input_types] == [[33, 200]]
    assert "_packed_b" in bound.tir  # the weights' panels, packed at compile time
    # 200 x 96 floats of weights (75 KiB), twice: declared in the text, bound by the JIT
    assert len(bound.llvm_ir) < 100_000
    assert " = external global [" in bound.llvm_ir and '@"gc.data.' in bound.llvm_ir
    expected = graphcompiler.compile(MLP)(x, w, b)
    np.testing.assert_array_equal(bound(x), expected)


@pytest.mark.parametrize("count, external", [(96, True), (32, False)])
def test_constants_from_256_bytes_leave_the_llvm_ir_text(count, external):
    """A bias of 96 floats (384 bytes) is bound by the JIT, not printed into
    the LLVM IR (llvmlite prints ~10 us an element); 32 floats stay inline."""
    values = rng.uniform(-1, 1, count).astype(np.float32)
    text = f"""func.func @main(%x: tensor<4x{count}xf32>) -> tensor<4x{count}xf32> {{
  %c = graph.constant dense<{values.tolist()}> : tensor<{count}xf32>
  %y = graph.add %x, %c : (tensor<4x{count}xf32>, tensor<{count}xf32>) -> tensor<4x{count}xf32>
  func.return %y : tensor<4x{count}xf32>
}}"""
    compiled = graphcompiler.compile(text, cache=False)
    assert ('@"gc.data.' in compiled.llvm_ir) is external
    x = rng.uniform(-1, 1, (4, count)).astype(np.float32)
    np.testing.assert_array_equal(compiled(x), x + values)


def test_bad_constants_are_clear_errors():
    with pytest.raises(ValueError, match="constants name no argument of @main: v"):
        graphcompiler.compile(MLP, constants={"v": np.zeros(3)})
    with pytest.raises(ValueError, match=r"constant 'w' has shape \[2\], expected \[200, 96\]"):
        graphcompiler.compile(MLP, constants={"w": np.zeros(2)})
