"""The Ray examples (examples/ray/) run end to end on a local Ray instance
with 2 CPUs, on the suite's small ResNet: batch inference on Ray Data and
serving on Ray Serve, graphcompiler's artifact beside onnxruntime. Each
runs in a process of its own (Ray's workers and ports stay out of pytest's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the Ray examples need the `ray` extra (pip install '.[ray]')")
pytest.importorskip("onnxruntime")

from graphcompiler.driver.artifact import c_compiler  # noqa: E402
from graphcompiler.runtime.artifact import ArtifactError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "test" / "models" / "resnet_torchscript_dynamic.onnx"

try:
    c_compiler()
except ArtifactError:
    pytest.skip("the examples ship artifacts, which need a C compiler", allow_module_level=True)


def _run_example(name: str, arguments: list[str]) -> list[dict]:
    script = (
        f"import json, sys; sys.path.insert(0, {str(ROOT / 'examples' / 'ray')!r}); "
        f"import {name}; print('RESULTS', json.dumps({name}.main({arguments!r})))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-4000:]
    line = next(line for line in run.stdout.splitlines() if line.startswith("RESULTS "))
    return json.loads(line.removeprefix("RESULTS "))


def test_batch_inference_on_ray_data():
    results = _run_example(
        "batch_inference", [str(MODEL), "--rows", "96", "--batch", "4", "--repeat", "1"]
    )
    assert [r["engine"] for r in results] == ["graphcompiler", "onnxruntime"]
    assert all(r["rows_per_second"] > 0 for r in results)
    assert results[0]["max_rel_difference"] < 1e-4  # the same scores, row for row


def test_serving_on_ray_serve():
    results = _run_example(
        "serve", [str(MODEL), "--requests", "40", "--clients", "4", "--batch", "4",
                  "--time-limit", "120"]
    )  # fmt: skip
    assert [r["engine"] for r in results] == ["graphcompiler", "onnxruntime"]
    for result in results:
        assert result["requests"] == 40
        assert 0 < result["p50_ms"] <= result["p99_ms"]
    assert results[0]["max_rel_difference"] < 1e-4  # the endpoints answer the same
