"""On an AVX2-only host (test/hosts/avx2 makes this one look like a Zen 3):
the host target is 8 lanes without extensions, and models of every path
(GEMM, blocked convolutions, softmax and layer norm, int8, bf16) compile to
code without an AVX-512 instruction, which would stop such a host with
SIGILL, and compute the right values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphcompiler.target.description import supported

pytest.importorskip("onnx")

HOST = Path(__file__).resolve().parent.parent / "hosts" / "avx2"

pytestmark = pytest.mark.skipif(not supported("avx2"), reason="this host cannot run AVX2 code")

SCRIPT = r"""
import json, re
import numpy as np
from onnx import TensorProto, helper, numpy_helper
import graphcompiler
from graphcompiler.target.description import host_target

rng = np.random.default_rng(7)
AVX512 = re.compile(r"%zmm|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|%k[1-7]\b")


def model(nodes, inputs, output, initializers):
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(output, TensorProto.UNDEFINED, None)],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def w(*shape):
    return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)


report = {"lanes": host_target().f32_lanes, "extensions": sorted(host_target().extensions)}
F = TensorProto.FLOAT

w1, b1, w2 = w(256, 512), w(512), w(512, 128)
mlp = model([helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["y"])],
            [("x", F, [64, 256])], "y", {"w1": w1, "b1": b1, "w2": w2})
x = rng.standard_normal((64, 256)).astype(np.float32)
mlp_want = np.maximum(x @ w1 + b1, 0) @ w2

k3, k1 = w(64, 32, 3, 3), w(64, 64, 1, 1)
scale, shift = (1 + 0.1 * rng.standard_normal(64)).astype(np.float32), w(64)
conv = model([helper.make_node("Conv", ["x", "k3"], ["c"], pads=[1, 1, 1, 1]),
              helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"]),
              helper.make_node("Relu", ["n"], ["r"]), helper.make_node("Conv", ["r", "k1"], ["y"])],
             [("x", F, [1, 32, 28, 28])], "y",
             {"k3": k3, "k1": k1, "scale": scale, "shift": shift,
              "mean": np.zeros(64, np.float32), "var": np.ones(64, np.float32)})
image = rng.standard_normal((1, 32, 28, 28)).astype(np.float32)
padded = np.pad(image[0], ((0, 0), (1, 1), (1, 1)))
windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
c = np.einsum("chwij,ocij->ohw", windows, k3, dtype=np.float64)
r = np.maximum(c * (scale / np.sqrt(1 + 1e-5))[:, None, None] + shift[:, None, None], 0)
conv_want = np.einsum("chw,oc->ohw", r, k1[:, :, 0, 0])[None]

gamma, beta = w(1000), w(1000)
norm = model([helper.make_node("Softmax", ["x", ], ["s"], axis=-1),
              helper.make_node("LayerNormalization", ["s", "gamma", "beta"], ["y"], axis=-1)],
             [("x", F, [32, 1000])], "y", {"gamma": gamma, "beta": beta})
rows = 4 * rng.standard_normal((32, 1000)).astype(np.float32)
soft = np.exp(rows - rows.max(-1, keepdims=True)); soft /= soft.sum(-1, keepdims=True)
norm_want = (soft - soft.mean(-1, keepdims=True)) / np.sqrt(soft.var(-1, keepdims=True) + 1e-5) * gamma + beta

wq = rng.integers(-128, 128, (384, 96), dtype=np.int8)
int8 = model([helper.make_node("MatMulInteger", ["a", "wq", "za"], ["y"])],
             [("a", TensorProto.UINT8, [48, 384])], "y", {"wq": wq, "za": np.array(131, np.uint8)})
a = rng.integers(0, 256, (48, 384), dtype=np.uint8)
int8_want = (a.astype(np.int64) - 131) @ wq.astype(np.int64)

cases = [("mlp", mlp, x, mlp_want, {}), ("conv", conv, image, conv_want, {}),
         ("softmax_layer_norm", norm, rows, norm_want, {}), ("int8_matmul", int8, a, int8_want, {}),
         ("mlp_bf16", mlp, x, mlp_want, {"precision": "bf16"})]
for name, proto, value, want, options in cases:
    compiled = graphcompiler.compile(proto, cache=False, **options)
    got = compiled(value)
    report[name] = {
        "error": float(np.max(np.abs(got - want)) / np.max(np.abs(want))),
        "avx512_lines": [line.strip() for line in compiled.asm.splitlines() if AVX512.search(line)][:3],
    }
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report() -> dict:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(HOST), os.environ.get("PYTHONPATH", "")])
    )
    env.pop("GC_TARGET", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_host_target_is_the_avx2_one(report):
    assert report["lanes"] == 8
    assert report["extensions"] == []


@pytest.mark.parametrize(
    ("case", "tolerance"),
    [
        ("mlp", 1e-5),
        ("conv", 1e-5),
        ("softmax_layer_norm", 1e-5),
        ("int8_matmul", 0.0),
        ("mlp_bf16", 2e-2),
    ],
)
def test_each_path_runs_without_avx512_instructions(report, case, tolerance):
    assert report[case]["avx512_lines"] == []
    assert report[case]["error"] <= tolerance
