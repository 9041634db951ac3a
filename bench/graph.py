"""A workload described once, as a small graph of f32 tensor ops.

The same description is emitted three ways (mlir_text.py for graphcompiler,
onnx_models.py for onnxruntime, numpy_ops.py for numpy and the reference),
so the three engines compute the same function by construction. Shapes are
inferred here; flops count only matmuls and convolutions (the work the
GFLOP/s column is about).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class Input:
    """A function input: `weight` inputs are model parameters (initializers
    in the ONNX model); values are normal(0, scale), or |normal| + 0.5 when
    `positive` (variances)."""

    value: Value
    weight: bool = False
    scale: float = 1.0
    positive: bool = False


@dataclass(frozen=True)
class Node:
    op: str
    inputs: tuple[Value, ...]
    output: Value
    attrs: dict = field(default_factory=dict)


class Graph:
    """Records ops in order; each method returns the result Value."""

    def __init__(self) -> None:
        self.inputs: list[Input] = []
        self.nodes: list[Node] = []
        self.output: Value | None = None
        self._names: set[str] = set()

    # --- inputs and outputs ---------------------------------------------------

    def input(
        self,
        name: str,
        shape: list[int],
        *,
        weight: bool = False,
        scale: float = 1.0,
        positive: bool = False,
    ) -> Value:
        value = Value(self._fresh(name), tuple(shape))
        self.inputs.append(Input(value, weight, scale, positive))
        return value

    def weight(self, name: str, shape: list[int], fan_in: int | None = None) -> Value:
        """A parameter scaled by 1/sqrt(fan_in) so deep stacks stay O(1)."""
        return self.input(name, shape, weight=True, scale=1 / math.sqrt(fan_in or shape[0]))

    def set_output(self, value: Value) -> None:
        self.output = value

    def random_inputs(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        arrays = []
        for spec in self.inputs:
            data = rng.standard_normal(spec.value.shape, dtype=np.float32) * np.float32(spec.scale)
            arrays.append(np.abs(data) + np.float32(0.5) if spec.positive else data)
        return arrays

    # --- ops ------------------------------------------------------------------

    def constant(self, value: float) -> Value:
        """A scalar as a tensor<1xf32> constant (broadcast by the binary ops)."""
        return self._node("constant", [], (1,), value=float(value))

    def add(self, a: Value, b: Value) -> Value:
        return self._binary("add", a, b)

    def sub(self, a: Value, b: Value) -> Value:
        return self._binary("sub", a, b)

    def mul(self, a: Value, b: Value) -> Value:
        return self._binary("mul", a, b)

    def relu(self, x: Value) -> Value:
        return self._node("relu", [x], x.shape)

    def exp(self, x: Value) -> Value:
        return self._node("exp", [x], x.shape)

    def gelu(self, x: Value) -> Value:
        """Exact gelu, x * Phi(x) (graph.gelu's default)."""
        return self._node("gelu", [x], x.shape)

    def softmax(self, x: Value) -> Value:
        """Softmax over the last axis."""
        return self._node("softmax", [x], x.shape)

    def layer_norm(self, x: Value, gamma: Value, beta: Value, epsilon: float = 1e-5) -> Value:
        """Normalization over the last axis."""
        return self._node("layer_norm", [x, gamma, beta], x.shape, epsilon=epsilon)

    def batch_norm(
        self, x: Value, scale: Value, bias: Value, mean: Value, var: Value, epsilon: float = 1e-5
    ) -> Value:
        """Inference batch norm over channel dim 1."""
        return self._node("batch_norm", [x, scale, bias, mean, var], x.shape, epsilon=epsilon)

    def matmul(self, a: Value, b: Value, transpose_b: bool = False) -> Value:
        (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
        if transpose_b:
            k2, n = n, k2
        if k != k2:
            raise ValueError(f"matmul {a.shape} x {b.shape}: contraction {k} != {k2}")
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return self._node("matmul", [a, b], (*batch, m, n), transpose_b=transpose_b)

    def reshape(self, x: Value, shape: list[int]) -> Value:
        if math.prod(shape) != x.size:
            raise ValueError(f"reshape {x.shape} -> {shape}: sizes differ")
        return self._node("reshape", [x], tuple(shape))

    def transpose(self, x: Value, perm: list[int]) -> Value:
        return self._node("transpose", [x], tuple(x.shape[p] for p in perm), perm=list(perm))

    def conv2d(self, x: Value, w: Value, padding: int = 0) -> Value:
        """NCHW x OIHW, stride 1, the same padding on every side."""
        (n, c, h, wd), (o, i, kh, kw) = x.shape, w.shape
        if c != i:
            raise ValueError(f"conv2d {x.shape} x {w.shape}: channels {c} != {i}")
        shape = (n, o, h + 2 * padding - kh + 1, wd + 2 * padding - kw + 1)
        return self._node("conv2d", [x, w], shape, padding=padding)

    # --- measures -------------------------------------------------------------

    def flops(self) -> int:
        """Multiply-add flops (2 per MAC) of the matmuls and convolutions."""
        total = 0
        for node in self.nodes:
            if node.op == "matmul":
                a = node.inputs[0]
                total += 2 * node.output.size * a.shape[-1]
            elif node.op == "conv2d":
                _, i, kh, kw = node.inputs[1].shape
                total += 2 * node.output.size * i * kh * kw
        return total

    def io_bytes(self) -> int:
        """Bytes of every input and the output: the least traffic a call needs."""
        return 4 * (sum(spec.value.size for spec in self.inputs) + self.output.size)

    # --- helpers --------------------------------------------------------------

    def _fresh(self, hint: str) -> str:
        name, count = hint, 0
        while name in self._names:
            count += 1
            name = f"{hint}{count}"
        self._names.add(name)
        return name

    def _binary(self, op: str, a: Value, b: Value) -> Value:
        return self._node(op, [a, b], tuple(np.broadcast_shapes(a.shape, b.shape)))

    def _node(self, op: str, inputs: list[Value], shape: tuple[int, ...], **attrs) -> Value:
        output = Value(self._fresh(op if op != "constant" else "c"), tuple(shape))
        self.nodes.append(Node(op, tuple(inputs), output, attrs))
        return output
