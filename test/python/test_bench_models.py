"""`python -m bench --models` without torch: a model already exported (here
a small committed one standing in for the full-size file) is imported,
compiled, timed and checked against onnxruntime; a bad --only is a clear
error. Run from the repository root in a subprocess, as test_bench.py does."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "test" / "models"


def _bench(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "bench", "--models", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_an_exported_model_is_timed_and_checked(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    for suffix in (".onnx", ".npz"):  # the cache holds it: nothing to export, no torch
        shutil.copy(MODELS / f"resnet_torchscript_static{suffix}", tmp_path)
    path = tmp_path / "results.json"
    run = _bench(
        "--only", "resnet", "--models-dir", str(tmp_path), "--quick", "--seconds", "0.05",
        "--threads", "1", "--json", str(path),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "ours/ort" in run.stdout and "err vs ort" in run.stdout
    assert "(1/1) resnet" in run.stderr and "exporting" not in run.stderr
    document = json.loads(path.read_text())
    assert document["settings"]["mode"] == "models"
    [row] = document["rows"]
    assert row["model"] == "resnet" and row["threads"] == 1
    assert row["import_s"] > 0 and row["compile_s"] > 0 and row["ours_over_onnxruntime"] > 0
    ours, ort = row["engines"]["ours"], row["engines"]["onnxruntime"]
    assert ours["status"] == "ok" and ours["error"] < 1e-4, ours
    assert ort["status"] == "ok" and ort["ort_vs_torch"] < 1e-4, ort
    for result in (ours, ort):
        assert result["min_ms"] <= result["median_ms"] and result["runs"] >= 2


def test_unknown_model_is_a_clear_error():
    run = _bench("--only", "no_such_model")
    assert run.returncode != 0
    assert "--only 'no_such_model' matches no model" in run.stderr
    assert "Traceback" not in run.stderr
