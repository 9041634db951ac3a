"""Ops of the same structure share one kernel, built once
(lowering/graph_to_tir/kernel_reuse.py): each call packs its own constant
weights, so every layer still computes with its own."""

import re

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters import reference
from graphcompiler.runtime.tuning import forced_conv_path

rng = np.random.default_rng(5)


def _t(shape):
    return "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"


def _dense(array: np.ndarray) -> str:
    return f"dense<{array.tolist()}> : {_t(array.shape)}"


def _kernels(tir: str, prefix: str) -> list[str]:
    return re.findall(rf"tir\.func @({prefix}__\d+)\(", tir)


def _layers(count: int, width: int) -> tuple[str, list]:
    """`count` dense layers x @ W_i + b_i, relu; each W_i, b_i its own."""
    lines, value = [], "%x"
    weights = []
    for index in range(count):
        w = rng.uniform(-1, 1, (width, width)).astype(np.float32)
        b = rng.uniform(-1, 1, (width,)).astype(np.float32)
        weights.append((w, b))
        lines += [
            f"  %w{index} = graph.constant {_dense(w)}",
            f"  %b{index} = graph.constant {_dense(b)}",
            f"  %m{index} = graph.matmul {value}, %w{index} : ({_t([4, width])}, {_t([width, width])}) -> {_t([4, width])}",
            f"  %a{index} = graph.add %m{index}, %b{index} : ({_t([4, width])}, {_t([width])}) -> {_t([4, width])}",
            f"  %r{index} = graph.relu %a{index} : {_t([4, width])}",
        ]  # fmt: skip
        value = f"%r{index}"
    body = "\n".join(lines)
    text = f"func.func @main(%x: {_t([4, width])}) -> {_t([4, width])} {{\n{body}\n  func.return {value} : {_t([4, width])}\n}}"
    return text, weights


def test_layers_share_one_kernel_and_keep_their_weights():
    text, weights = _layers(3, 24)
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert len(_kernels(compiled.tir, "fused")) == 1, compiled.tir
    # built for the first layer; the others' weights packed by the reuse
    assert len(re.findall(r"tir\.global @fused__\d+_packed_b :", compiled.tir)) == 1
    assert len(re.findall(r"tir\.global @fused__\d+_packed_b_\d+ :", compiled.tir)) == 2
    x = rng.uniform(-1, 1, (4, 24)).astype(np.float32)
    expected = x.astype(np.float64)
    for w, b in weights:
        expected = np.maximum(expected @ w + b, 0)
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("path", ["gemm", "rows"])
def test_convolutions_share_one_kernel(path):
    """Two convolutions of one shape, other filters: the GEMM (1x1) and the
    shifted-rows (3x3 stride 1) paths each pack both filters."""
    kernel = 1 if path == "gemm" else 3
    x, w = [1, 3, 6, 6], [3, 3, kernel, kernel]  # fewer channels than any target blocks
    filters = [rng.uniform(-1, 1, w).astype(np.float32) for _ in range(2)]
    pad = kernel // 2
    props = f"{{strides = array<i64: 1, 1>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>}}"
    text = f"""func.func @main(%x: {_t(x)}) -> {_t(x)} {{
  %w0 = graph.constant {_dense(filters[0])}
  %w1 = graph.constant {_dense(filters[1])}
  %c0 = graph.conv2d %x, %w0 {props} : ({_t(x)}, {_t(w)}) -> {_t(x)}
  %c1 = graph.conv2d %c0, %w1 {props} : ({_t(x)}, {_t(w)}) -> {_t(x)}
  func.return %c1 : {_t(x)}
}}"""
    token = forced_conv_path.set(path)  # whatever the host measured or prefers
    try:
        compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    finally:
        forced_conv_path.reset(token)
    assert len(_kernels(compiled.tir, "conv2d")) == 1, compiled.tir
    image = rng.uniform(-1, 1, x).astype(np.float32)
    np.testing.assert_allclose(compiled(image), reference.run(text, image), rtol=1e-4, atol=1e-4)


def test_a_constant_both_packed_and_read_in_place():
    """x @ W + W: the kernel packs W (the matmul's B) and reads it in its
    epilogue too; the second layer's kernel call gets its own W for both."""
    ws = [rng.uniform(-1, 1, (8, 8)).astype(np.float32) for _ in range(2)]
    m8 = _t([8, 8])
    text = f"""func.func @main(%x: {m8}) -> {m8} {{
  %w0 = graph.constant {_dense(ws[0])}
  %w1 = graph.constant {_dense(ws[1])}
  %m0 = graph.matmul %x, %w0 : ({m8}, {m8}) -> {m8}
  %y0 = graph.add %m0, %w0 : ({m8}, {m8}) -> {m8}
  %m1 = graph.matmul %y0, %w1 : ({m8}, {m8}) -> {m8}
  %y1 = graph.add %m1, %w1 : ({m8}, {m8}) -> {m8}
  func.return %y1 : {m8}
}}"""
    compiled = graphcompiler.compile(text, cache=False, verify_each=True)
    assert len(_kernels(compiled.tir, "fused")) == 1, compiled.tir
    x = rng.uniform(-1, 1, (8, 8)).astype(np.float32)
    expected = x.astype(np.float64)
    for w in ws:
        expected = expected @ w + w
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-5, atol=1e-5)
