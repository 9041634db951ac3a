"""compile(profile=True): each kernel's calls and time (tir-profile-kernels,
runtime/kernel_profile.py), the same results as without, and gc-run --profile."""

from __future__ import annotations

import numpy as np
import pytest

import graphcompiler
from graphcompiler.runtime import kernel_profile
from graphcompiler.tools import gc_run

TEXT = """func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %0 = graph.matmul %x, %w : (tensor<64x128xf32>, tensor<128x96xf32>) -> tensor<64x96xf32>
  %1 = graph.softmax %0 {axis = 1 : i64} : tensor<64x96xf32>
  %2 = graph.transpose %1 {perm = array<i64: 1, 0>} : tensor<64x96xf32> -> tensor<96x64xf32>
  %3 = graph.exp %2 : tensor<96x64xf32>
  %4 = graph.transpose %3 {perm = array<i64: 1, 0>} : tensor<96x64xf32> -> tensor<64x96xf32>
  func.return %4 : tensor<64x96xf32>
}"""

rng = np.random.default_rng(3)


def _inputs():
    return [rng.standard_normal(s).astype(np.float32) for s in ([64, 128], [128, 96])]


def test_every_kernel_is_counted_and_timed():
    profiled = graphcompiler.compile(TEXT, profile=True)
    plain = graphcompiler.compile(TEXT, cache=False)
    inputs = _inputs()
    np.testing.assert_array_equal(profiled(*inputs), plain(*inputs))
    for _ in range(2):
        profiled(*inputs)
    times = profiled.profile(reset=True)
    kernels = [t.kernel for t in times]
    assert len(kernels) == len(set(kernels)) >= 2
    assert all(t.calls == 3 and t.seconds > 0 for t in times)
    assert [t.seconds for t in times] == sorted((t.seconds for t in times), reverse=True)
    assert any(t.shapes.startswith("64x96xf32 <- ") for t in times)
    assert all(t.calls == 0 and t.seconds == 0 for t in profiled.profile())
    profiled(*inputs)
    assert all(t.calls == 1 for t in profiled.profile())
    assert "share" in kernel_profile.table(times)


def test_profiling_needs_the_flag_and_the_default_pipeline():
    plain = graphcompiler.compile(TEXT, cache=False)
    with pytest.raises(ValueError, match="profile=True"):
        plain.profile()
    with pytest.raises(ValueError, match="give no pipeline"):
        graphcompiler.compile(TEXT, profile=True, pipeline="gc-cpu-pipeline")


def test_gc_run_prints_the_kernel_table(tmp_path, capsys):
    path = tmp_path / "graph.mlir"
    path.write_text(TEXT)
    assert gc_run.main([str(path), "--random-inputs", "--bench", "3", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "ms/call" in out and "64x96xf32 <- 64x128xf32, 128x96xf32" in out
    lines = [line for line in out.splitlines() if "%" in line and "<-" in line]
    assert lines and all(line.split()[3] == "3" for line in lines)
