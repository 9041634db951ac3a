"""Tensor IR execution through the Python API: numerics against numpy,
argument checks at the call boundary, globals, threads, diagnostics."""

import subprocess
import sys

import llvmlite.binding as llvm
import numpy as np
import pytest

from graphcompiler.driver.program import TirProgram
from graphcompiler.ir.diagnostics import DiagnosticError
from graphcompiler.runtime.jit import engine as jit
from graphcompiler.runtime.symbols import RUNTIME_SYMBOLS, native_source

rng = np.random.default_rng(7)


def brgemm_program(batch, m, n, k, accumulate):
    """C = (C +) sum_b A[b] @ B[b] through tir.brgemm on whole tensors."""
    return TirProgram(f"""
    tir.func @kernel(%A: !tir.tensor<{batch}x{m}x{k}xf32>, %B: !tir.tensor<{batch}x{k}x{n}xf32>, %C: !tir.tensor<{m}x{n}xf32>) {{
      %batch = tir.const {batch} : index
      tir.brgemm %A, %B, %C, %batch {{m = {m} : i64, n = {n} : i64, k = {k} : i64, lda = {k} : i64, ldb = {n} : i64, ldc = {n} : i64, stride_a = {m * k} : i64, stride_b = {k * n} : i64, accumulate = {str(accumulate).lower()}}} : !tir.tensor<{batch}x{m}x{k}xf32>, !tir.tensor<{batch}x{k}x{n}xf32>, !tir.tensor<{m}x{n}xf32>, index
      tir.return
    }}
    """)


@pytest.mark.parametrize(
    "batch, m, n, k",
    [(1, 1, 1, 1), (3, 7, 33, 5), (2, 16, 16, 64), (4, 33, 7, 17), (2, 12, 48, 3), (1, 5, 17, 1)],
)
@pytest.mark.parametrize("accumulate", [False, True])
def test_brgemm_matches_numpy(batch, m, n, k, accumulate):
    program = brgemm_program(batch, m, n, k, accumulate)
    A = rng.standard_normal((batch, m, k), dtype=np.float32)
    B = rng.standard_normal((batch, k, n), dtype=np.float32)
    C = rng.standard_normal((m, n), dtype=np.float32)
    expected = np.einsum("bmk,bkn->mn", A.astype(np.float64), B) + (C if accumulate else 0)
    program["kernel"](A, B, C)
    np.testing.assert_allclose(C, expected, rtol=1e-4, atol=1e-4)


AXPY = """
tir.global @calls : i64
tir.func @axpy(%x: !tir.tensor<1000xf32>, %y: !tir.tensor<1000xf32>, %a: f32, %n: i32) -> i64 {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %end = tir.cast %n : i32 -> index
  tir.for %i = %c0 to %end step %c1 parallel {
    %xv = tir.load %x[%i] : !tir.tensor<1000xf32>
    %yv = tir.load %y[%i] : !tir.tensor<1000xf32>
    %s = tir.fmadd %a, %xv, %yv : f32
    tir.store %s, %y[%i] : !tir.tensor<1000xf32>
  }
  %g = tir.global_ref @calls : !tir.var<i64>
  %old = tir.read %g : !tir.var<i64>
  %one = tir.const 1 : i64
  %new = tir.add %old, %one : (i64, i64) -> i64
  tir.assign %g = %new : !tir.var<i64>
  tir.return %new : i64
}
"""


@pytest.fixture(scope="module")
def axpy():
    return TirProgram(AXPY)


@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_loop_equals_numpy_for_any_thread_count(axpy, threads):
    axpy.set_num_threads(threads)
    x = rng.standard_normal(1000, dtype=np.float32)
    y = rng.standard_normal(1000, dtype=np.float32)
    expected = 3.0 * x + y
    axpy["axpy"](x, y, 3.0, 999)
    np.testing.assert_allclose(y[:999], expected[:999], rtol=1e-5, atol=1e-6)  # fused rounding
    assert y[999] == pytest.approx(expected[999] - 3.0 * x[999])  # untouched


def test_globals_are_numpy_views(axpy):
    calls = axpy.globals["calls"]
    calls[...] = 10
    x, y = np.zeros(1000, np.float32), np.zeros(1000, np.float32)
    assert axpy["axpy"](x, y, 1.0, 1) == 11
    assert int(calls) == 11


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "@axpy takes 4 arguments, got 0"),
        (
            (np.zeros(1000), np.zeros(1000, np.float32), 1.0, 1),
            r"argument #0 \('%x'\) of @axpy has dtype float64, expected float32",
        ),
        (
            (np.zeros(999, np.float32), np.zeros(1000, np.float32), 1.0, 1),
            r"has shape \[999\], expected \[1000\]",
        ),
        (
            (np.zeros(2000, np.float32)[::2], np.zeros(1000, np.float32), 1.0, 1),
            "is not C-contiguous",
        ),
        ([0.0] * 1000, "must be a numpy array"),
        (
            (np.zeros(1000, np.float32), np.zeros(1000, np.float32), "2", 1),
            r"argument #2 \('%a'\) of @axpy must be a number",
        ),
        (
            (np.zeros(1000, np.float32), np.zeros(1000, np.float32), 1.0, 2**40),
            "does not fit in i32",
        ),
        ((np.zeros(1000, np.float32), np.zeros(1000, np.float32), 1.0, 1.5), "must be an integer"),
    ],
)
def test_bad_arguments_raise_before_native_code(axpy, args, message):
    if isinstance(args, list):
        args = (args, np.zeros(1000, np.float32), 1.0, 1)
    with pytest.raises(ValueError, match=message):
        axpy["axpy"](*args)


def test_read_only_and_misaligned_arrays_are_refused(axpy):
    frozen = np.zeros(1000, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        axpy["axpy"](np.zeros(1000, np.float32), frozen, 1.0, 1)
    raw = np.zeros(4001, np.uint8)
    misaligned = raw[1:].view(np.float32)
    with pytest.raises(ValueError, match="not aligned"):
        axpy["axpy"](misaligned, np.zeros(1000, np.float32), 1.0, 1)


def test_unsupported_op_is_a_diagnostic():
    with pytest.raises(
        DiagnosticError, match="'arith.constant' op cannot be converted to the llvm dialect"
    ):
        TirProgram(
            "tir.func @f() -> i32 {\n  %0 = arith.constant 1 : i32\n  tir.return %0 : i32\n}\n"
        )


def test_tools_report_failures_without_tracebacks(tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text("tir.func @mystery(i32)\ntir.func @main() {\n  tir.return\n}\n")
    for tool in ("gc_translate", "gc_run"):
        extra = ["--mlir-to-llvmir"] if tool == "gc_translate" else []
        result = subprocess.run(
            [sys.executable, "-m", f"graphcompiler.tools.{tool}", str(source), *extra],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 1
        assert f"{source}:1:1: error: 'tir.func' op declares @mystery" in result.stderr
        assert "Traceback" not in result.stderr


def test_every_runtime_symbol_has_an_implementation():
    runtime = llvm.parse_assembly(native_source())
    defined = {f.name for f in runtime.functions if not f.is_declaration}
    assert set(RUNTIME_SYMBOLS) <= defined


def test_thread_count_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GC_NUM_THREADS", "3")
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert jit.default_num_threads() == 3
    monkeypatch.delenv("GC_NUM_THREADS")
    assert jit.default_num_threads() == 5
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert jit.default_num_threads() == 0


def test_generated_code_is_visible(axpy):
    assert 'define i64 @"axpy"' in axpy.llvm_ir
    assert "axpy:" in axpy.asm
    assert "tir.for %i = %c0 to %end step %c1 parallel" in axpy.tir  # the input, as given
