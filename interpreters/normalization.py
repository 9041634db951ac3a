"""Reference semantics of the row-normalizing ops (softmax, log_softmax,
layer_norm, rms_norm, instance_norm, batch_norm, attention), in numpy;
reference.py runs them. Softmax over a slice holding NaN or +inf, or only
-inf, is all NaN (x - max(x) is NaN there), as the compiled kernels give.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.normalization import head_groups

Array = np.ndarray


def _log_softmax(op: graph.LogSoftmaxOp, x: Array) -> Array:
    axis = op.normalized_axis(x.ndim)
    shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _softmax(op: graph.SoftmaxOp, x: Array) -> Array:
    """exp(x - max) / sum: a slice holding NaN or +inf, or only -inf, is all NaN."""
    axis = op.normalized_axis(x.ndim)
    exponentials = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)


def _attention(op: graph.AttentionOp, query: Array, key: Array, value: Array, *mask) -> Array:
    """softmax(query keyᵀ * scale + mask) value, op by op."""
    query, key, value = (
        np.swapaxes(x, -3, -2) if op.is_sequence_major(role) else x
        for role, x in zip(("query", "key", "value"), (query, key, value), strict=True)
    )
    key, value = (np.repeat(x, head_groups(query.shape, x.shape), axis=-3) for x in (key, value))
    if not op.key_is_transposed:
        key = np.swapaxes(key, -1, -2)
    scores = np.matmul(query, key) * np.float32(op.scale_value)
    if mask:
        scores = scores + mask[0]
    exponentials = np.exp(scores - np.max(scores, axis=-1, keepdims=True, initial=-np.inf))
    probabilities = exponentials / np.sum(exponentials, axis=-1, keepdims=True)
    if op.zeroes_nan_probabilities:
        probabilities = np.where(np.isnan(probabilities), np.float32(0), probabilities)
    result = np.matmul(probabilities, value)
    return np.swapaxes(result, -3, -2) if op.is_sequence_major("result") else result


def _normalize(x: Array, axes: tuple[int, ...], epsilon: float) -> Array:
    mean = np.mean(x, axis=axes, keepdims=True)
    variance = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon)


def _layer_norm(op: graph.LayerNormOp, x: Array, gamma: Array, beta: Array) -> Array:
    axes = tuple(range(op.normalized_axis(x.ndim), x.ndim))
    return _normalize(x, axes, op.epsilon_value) * gamma + beta


def _rms_norm(op: graph.RmsNormOp, x: Array, scale: Array) -> Array:
    axes = tuple(range(op.normalized_axis(x.ndim), x.ndim))
    return x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + op.epsilon_value) * scale


def _instance_norm(op: graph.InstanceNormOp, x: Array, scale: Array, bias: Array) -> Array:
    scale, bias = (p.reshape([-1] + [1] * (x.ndim - 2)) for p in (scale, bias))
    return _normalize(x, tuple(range(2, x.ndim)), op.epsilon_value) * scale + bias


def _batch_norm(op: graph.BatchNormOp, x: Array, *parameters: Array) -> Array:
    scale, bias, mean, var = (p.reshape([-1] + [1] * (x.ndim - 2)) for p in parameters)
    return (x - mean) / np.sqrt(var + op.epsilon_value) * scale + bias


NORMALIZATION: dict[type[Operation], Callable[..., Array]] = {
    graph.SoftmaxOp: _softmax,
    graph.LogSoftmaxOp: _log_softmax,
    graph.LayerNormOp: _layer_norm,
    graph.RmsNormOp: _rms_norm,
    graph.InstanceNormOp: _instance_norm,
    graph.BatchNormOp: _batch_norm,
    graph.AttentionOp: _attention,
}
