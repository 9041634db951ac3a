"""graph.loop compiled (lowering/graph_to_tir/loop.py) against numpy and the
reference interpreter: states carried step to step, output rows in step
order either way, invariants, no steps at all, and the same bits on one
and two threads."""

import numpy as np
import pytest

import graphcompiler
from graphcompiler.interpreters.reference import run

SOURCE = """
func.func @main(%h0: tensor<3x4xf32>, %xs: tensor<{steps}x3x4xf32>, %w: tensor<4x4xf32>, %u: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<{steps}x3x4xf32>) {{
  %h, %ys = graph.loop @step(%h0) over (%xs) with (%u) {reverse} : (tensor<3x4xf32>, tensor<{steps}x3x4xf32>, tensor<4xf32>) -> (tensor<3x4xf32>, tensor<{steps}x3x4xf32>)
  %out = graph.matmul %h, %w : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  func.return %out, %ys : tensor<3x4xf32>, tensor<{steps}x3x4xf32>
}}
func.func private @step(%h: tensor<3x4xf32>, %x: tensor<3x4xf32>, %u: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {{
  %r = graph.constant dense<[[0.5, -0.25, 0.125, 0.0], [0.25, 0.5, 0.0, -0.125], [0.0, 0.125, 0.5, 0.25], [-0.125, 0.0, 0.25, 0.5]]> : tensor<4x4xf32>
  %m = graph.matmul %h, %r : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  %a = graph.add %m, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %b = graph.add %a, %u : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %next = graph.tanh %b : tensor<3x4xf32>
  %row = graph.mul %next, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %next, %row : tensor<3x4xf32>, tensor<3x4xf32>
}}
"""
R = np.array(
    [[0.5, -0.25, 0.125, 0.0], [0.25, 0.5, 0.0, -0.125], [0.0, 0.125, 0.5, 0.25],
     [-0.125, 0.0, 0.25, 0.5]], np.float32)  # fmt: skip


def _numpy(h, xs, w, u, reverse):
    rows = np.zeros_like(xs)
    for t in reversed(range(len(xs))) if reverse else range(len(xs)):
        h = np.tanh(h @ R + xs[t] + u)
        rows[t] = h * xs[t]
    return h @ w, rows


@pytest.mark.parametrize("steps", [1, 6, 7, 0])
@pytest.mark.parametrize("reverse", [False, True])
def test_loop_carries_its_state_and_stacks_its_rows(steps, reverse):
    source = SOURCE.format(steps=steps, reverse="reverse" if reverse else "")
    rng = np.random.default_rng(steps)
    inputs = [
        rng.standard_normal(shape).astype(np.float32)
        for shape in ([3, 4], [steps, 3, 4], [4, 4], [4])
    ]
    compiled = graphcompiler.compile(source, cache=False)
    got = compiled(*inputs)
    for g, want in zip(got, _numpy(*inputs, reverse), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    for g, want in zip(got, run(source, *inputs), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    compiled.num_threads = 2
    for one, two in zip(got, compiled(*inputs), strict=True):
        assert one.tobytes() == two.tobytes()


def test_the_step_is_compiled_once_however_many_steps():
    """The same functions and calls for 20 steps as for 200 (an odd count
    adds a last step after the loop's pairs)."""
    counts = {}
    for steps in (20, 200):
        tir = graphcompiler.compile(SOURCE.format(steps=steps, reverse=""), cache=False).tir
        counts[steps] = (tir.count("tir.func @"), tir.count("tir.call @"), tir.count("tir.for"))
    assert counts[20] == counts[200]
