"""Kernel choices measured per machine (runtime/tuning.py, driver/tuning.py):
the table steers lowering for the host target only, every path computes
the same convolution, tuning records the fastest candidate once, and a new
choice changes the compile-cache key."""

from __future__ import annotations

import json

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver import tuning as tuner
from graphcompiler.driver.compile_cache import _machine_parts
from graphcompiler.interpreters import reference
from graphcompiler.lowering.graph_to_tir.conv_gemm import CONV_PATHS, ConvCase
from graphcompiler.runtime.tuning import TuningTable, forced_conv_path, table_path, tuned_choice
from graphcompiler.target.description import get_target
from graphcompiler.tools import gc_run

CASE = ConvCase((1, 8, 10, 10), (32, 8, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1)
TEXT = tuner.convolution_text(CASE)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache directory of the test's own, the host target."""
    monkeypatch.setenv("GC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GC_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("GC_TARGET", raising=False)
    return tmp_path


def _record(choice: str) -> None:
    table = TuningTable(table_path())
    table.record("conv2d", CASE.signature, {p: (0.5 if p == choice else 1.0) for p in CONV_PATHS})
    table.save()


def _lowered_path(text: str = TEXT) -> str:
    """Which path lowering took for CASE, read off its brgemm tiles: the
    rows' tiles loop over filter taps; a GEMM's C rows are the output
    plane's 100 pixels, a transposed GEMM's the 32 channels."""
    module = graphcompiler.parse(text)
    graphcompiler.apply_pipeline(module, "builtin.module(convert-graph-to-tir)", verify_each=True)
    tiles = [line for line in str(module).splitlines() if "tir.brgemm_tile" in line]
    for path, mark in (
        ("rows", "taps = array"),
        ("gemm", "ldc = 100 :"),
        ("transposed", "ldc = 32 :"),
    ):
        if tiles and all(mark in tile for tile in tiles):
            return path
    raise AssertionError(f"no path recognized in {tiles}")


def test_the_table_steers_the_host_targets_lowering(cache_dir):
    for path in CONV_PATHS:
        _record(path)
        assert tuned_choice(get_target("host"), "conv2d", CASE.signature) == path
        assert _lowered_path() == path


def test_named_targets_ignore_the_table(cache_dir, monkeypatch):
    _record("gemm")
    assert tuned_choice(get_target("avx2"), "conv2d", CASE.signature) is None
    monkeypatch.setenv("GC_TARGET", "avx2")
    assert _lowered_path() == "rows"  # avx2's derived rule for a 3x3, stride-1 layer


@pytest.mark.parametrize("path", CONV_PATHS)
def test_every_path_computes_the_convolution(path):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(CASE.input_shape, dtype=np.float32)
    w = rng.standard_normal(CASE.weight_shape, dtype=np.float32)
    token = forced_conv_path.set(path)
    try:
        graph = graphcompiler.compile(TEXT, cache=False, num_threads=2)
    finally:
        forced_conv_path.reset(token)
    np.testing.assert_allclose(graph(x, w), reference.run(TEXT, x, w), rtol=1e-5, atol=1e-5)


def test_a_measured_path_is_never_channel_blocked():
    """Tuning measures the convolutions its model lowers plainly; alone, one
    with whole blocks of channels would be blocked, and every candidate
    would time that one kernel (MobileNet-v2's 1x1 layers were tuned so)."""
    case = ConvCase((1, 32, 28, 28), (16, 32, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1)
    weights = np.random.default_rng(2).standard_normal(case.weight_shape, dtype=np.float32)
    text = tuner.convolution_text(case)
    assert (
        "blocked_conv2d" in graphcompiler.compile(text, constants={"w": weights}, cache=False).graph
    )
    kernels = set()
    for path in CONV_PATHS:
        token = forced_conv_path.set(path)
        try:
            graph = graphcompiler.compile(text, constants={"w": weights}, cache=False)
        finally:
            forced_conv_path.reset(token)
        assert "blocked" not in graph.graph
        kernels.add(graph.tir)
    assert len(kernels) == len(CONV_PATHS)


def test_tuning_keeps_the_fastest_once(cache_dir, monkeypatch):
    timed = []

    def fake_time(case, path, num_threads, seconds):
        timed.append(path)
        return {"rows": 3.0, "gemm": 1.0, "transposed": 2.0}[path]

    monkeypatch.setattr(tuner, "time_convolution", fake_time)
    key_before = _machine_parts()
    (row,) = tuner.tune(TEXT)
    assert row == {"signature": CASE.signature, "ms": {"rows": 3.0, "gemm": 1.0,
                   "transposed": 2.0}, "choice": "gemm", "measured": True}  # fmt: skip
    assert timed == list(CONV_PATHS)
    assert _machine_parts() != key_before  # compiled code depends on the choice
    (again,) = tuner.tune(TEXT)
    assert again["measured"] is False and again["choice"] == "gemm" and len(timed) == 3


def test_tuning_times_the_real_kernels(cache_dir):
    (row,) = tuner.tune(TEXT, seconds=0.01)
    assert set(row["ms"]) == set(CONV_PATHS) and all(ms > 0 for ms in row["ms"].values())
    assert row["choice"] == min(row["ms"], key=row["ms"].get)
    stored = json.loads(table_path().read_text())
    assert stored["entries"][f"conv2d:{CASE.signature}"]["choice"] == row["choice"]


def test_a_damaged_table_is_no_table(cache_dir):
    path = table_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert tuned_choice(get_target("host"), "conv2d", CASE.signature) is None
    assert _lowered_path() in CONV_PATHS  # lowering goes on by its derived rule


def test_tuning_needs_the_cache_directory(monkeypatch):
    monkeypatch.setenv("GC_DISABLE_CACHE", "1")
    with pytest.raises(ValueError, match="cache directory"):
        tuner.tune(TEXT)


def test_gc_run_tune(cache_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tuner, "time_convolution", lambda case, path, threads, seconds: 1.0)
    source = tmp_path / "conv.mlir"
    source.write_text(TEXT)
    assert gc_run.main([str(source), "--tune", "--random-inputs", "--threads", "1"]) == 0
    assert "1 convolutions, 1 measured now, 0 known" in capsys.readouterr().err
    assert gc_run.main([str(source), "--tune", "--random-inputs", "--threads", "1"]) == 0
    assert "1 convolutions, 0 measured now, 1 known" in capsys.readouterr().err
