"""A bench Graph evaluated with numpy: the reference every engine is checked
against, and the `numpy` column (BLAS for matmuls and convolutions, numpy's
vectorized loops for the rest, all in f32)."""

from __future__ import annotations

import math

import numpy as np

from bench.graph import Graph, Node

_F32 = np.float32


def erf(x: np.ndarray) -> np.ndarray:
    """erf in float32 (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7): numpy has
    no erf, and math.erf element by element would make gelu the numpy column's
    whole time."""
    sign = np.sign(x)
    a = np.abs(x)
    t = _F32(1) / (_F32(1) + _F32(0.3275911) * a)
    poly = t * (
        _F32(0.254829592)
        + t
        * (
            _F32(-0.284496736)
            + t * (_F32(1.421413741) + t * (_F32(-1.453152027) + t * _F32(1.061405429)))
        )
    )
    return sign * (_F32(1) - poly * np.exp(-a * a))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, epsilon: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(var + _F32(epsilon)) * gamma + beta


def _batch_norm(x, scale, bias, mean, var, epsilon: float) -> np.ndarray:
    shape = (1, -1) + (1,) * (x.ndim - 2)
    factor = (scale / np.sqrt(var + _F32(epsilon))).reshape(shape)
    return (x - mean.reshape(shape)) * factor + bias.reshape(shape)


def _conv2d(x: np.ndarray, w: np.ndarray, padding: int) -> np.ndarray:
    """Stride 1: the input's windows contracted with the weights by BLAS."""
    padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, w.shape[2:], axis=(2, 3))
    out = np.tensordot(w, windows, axes=([1, 2, 3], [1, 4, 5]))  # [O, N, OH, OW]
    return np.ascontiguousarray(out.transpose(1, 0, 2, 3))


def _apply(node: Node, args: list[np.ndarray]) -> np.ndarray:
    op, attrs = node.op, node.attrs
    if op == "constant":
        return np.full(node.output.shape, attrs["value"], _F32)
    if op == "add":
        return args[0] + args[1]
    if op == "sub":
        return args[0] - args[1]
    if op == "mul":
        return args[0] * args[1]
    if op == "relu":
        return np.maximum(args[0], _F32(0))
    if op == "exp":
        return np.exp(args[0])
    if op == "gelu":
        x = args[0]
        return _F32(0.5) * x * (_F32(1) + erf(x * _F32(1 / math.sqrt(2))))
    if op == "softmax":
        return _softmax(args[0])
    if op == "layer_norm":
        return _layer_norm(*args, attrs["epsilon"])
    if op == "batch_norm":
        return _batch_norm(*args, attrs["epsilon"])
    if op == "matmul":
        b = np.swapaxes(args[1], -1, -2) if attrs["transpose_b"] else args[1]
        return np.matmul(args[0], b)
    if op == "reshape":
        return args[0].reshape(node.output.shape)
    if op == "transpose":
        return np.ascontiguousarray(args[0].transpose(attrs["perm"]))
    if op == "conv2d":
        return _conv2d(*args, attrs["padding"])
    raise ValueError(f"no numpy form for bench op '{op}'")


def evaluate(graph: Graph, inputs: list[np.ndarray]) -> np.ndarray:
    """The graph's output for `inputs` (in the order of graph.inputs)."""
    env = {spec.value.name: array for spec, array in zip(graph.inputs, inputs, strict=True)}
    for node in graph.nodes:
        env[node.output.name] = _apply(node, [env[v.name] for v in node.inputs])
    return env[graph.output.name]
