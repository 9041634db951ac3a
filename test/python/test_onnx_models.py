"""The example ONNX models (examples/onnx/models.py: an MLP, a transformer
encoder, a small CNN) compile and match onnxruntime within 1e-4, and gc-run
runs an .onnx file with --random-inputs --check-reference --bench."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

import onnx  # noqa: E402

import graphcompiler  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "onnx"))

from check import random_inputs  # noqa: E402
from models import cnn, encoder, mlp  # noqa: E402
from onnxruntime_session import session  # noqa: E402

MODELS = {
    "mlp": lambda: mlp(batch=8),
    "encoder": lambda: encoder(layers=1, seq=16, d=64, heads=4),
    "cnn": lambda: cnn(),
}


@pytest.mark.parametrize("name", MODELS)
def test_matches_onnxruntime(name):
    model = MODELS[name]()
    feeds = random_inputs(model, seed=5)
    (expected,) = session(model).run(None, feeds)
    got = graphcompiler.compile(model)(*feeds.values())
    assert got.shape == expected.shape
    np.testing.assert_allclose(
        got, expected, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(expected).max())
    )


def test_encoder_keeps_onnx_names():
    from graphcompiler.frontends.onnx import import_onnx

    text = str(import_onnx(MODELS["encoder"]()))
    assert "func.func @main(%x: tensor<1x16x64xf32>) -> tensor<1x16x64xf32>" in text
    assert "%attn = graph.softmax %scaled" in text and "%ln = graph.layer_norm %x" in text


def test_gc_run_checks_and_benches_an_onnx_file(tmp_path):
    path = tmp_path / "cnn.onnx"
    onnx.save(MODELS["cnn"](), path)
    gc_run = [shutil.which("gc-run") or "gc-run", str(path)]
    # in a subprocess run from elsewhere: the repository root's statistics.py
    # shadows the standard library's when the root is on sys.path
    result = subprocess.run(
        [*gc_run, "--random-inputs", "--check-reference", "--bench", "3"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "output #0: matches the reference" in result.stdout and "bench: 3 calls" in result.stdout
