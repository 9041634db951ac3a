"""Converters of ONNX's DFT (opsets 17 and 20), STFT and MelWeightMatrix, registered in
`ops.CONVERTERS`.

A DFT of static length is a linear map, so it runs as one graph.matmul with
a constant matrix (computed in float64 with numpy, then stored in the
input's element type). The input [..., n, c] (c = 1: real, c = 2: complex,
real and imaginary parts interleaved) is viewed as rows of n * c values;
the matrix maps such a row to the m * 2 interleaved parts of the output
[..., m, 2] (or the L real values of an IRFFT's [..., L, 1]):

    forward  X[k] = sum_j x[j] e^{-2 pi i jk / L}           (numpy.fft.fft)
    inverse  x[j] = 1/L sum_k X[k] e^{+2 pi i jk / L}       (numpy.fft.ifft)
    onesided forward: the first L // 2 + 1 bins              (numpy.fft.rfft)
    onesided inverse: the real signal of a one-sided spectrum (numpy.fft.irfft)

with (xr + i xi)(cos t + i s sin t) = (xr cos t - s xi sin t) + i (xi cos t
+ s xr sin t), s = -1 forward and +1 inverse. dft_length L pads with zeros
(rows the matrix never reads) or truncates (rows of zeros); an axis other
than the last signal one is transposed there and back.

MelWeightMatrix is a constant of its constant inputs (folded by the
importer with onnx's reference). STFT reads its
frames with one graph.gather of constant positions ([frames,
frame_length] along the signal), multiplies them by the window and maps each
with the same matrix.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import i64

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, converter, reshape
from graphcompiler.frontends.onnx.ops_math import _single


def dft_matrix(n: int, parts: int, length: int, inverse: bool, onesided: bool) -> np.ndarray:
    """The float64 matrix [n * parts, outputs] mapping a signal of n values
    (`parts` = 1 real, 2 interleaved complex) along the DFT's axis to its
    transform of length `length`: m interleaved (real, imaginary) pairs, or
    `length` real values for the inverse one-sided transform (IRFFT)."""
    if inverse and onesided:  # IRFFT: bins k < length // 2 + 1 of a Hermitian spectrum
        bins = np.arange(n)[:, None]
        t = np.arange(length)[None, :]
        angle = 2 * np.pi * ((bins * t) % length) / length
        weight = np.where((bins == 0) | (2 * bins == length), 1.0, 2.0)
        weight = np.where(bins < length // 2 + 1, weight, 0.0) / length
        real, imaginary = weight * np.cos(angle), -weight * np.sin(angle)
        matrix = np.stack([real, imaginary], axis=1)  # [n, 2, length]
        return matrix[:, :parts].reshape(n * parts, length)
    outputs = length // 2 + 1 if onesided else length
    j = np.arange(n)[:, None]
    k = np.arange(outputs)[None, :]
    angle = 2 * np.pi * ((j * k) % length) / length
    scale = np.where(j < length, 1.0 / length if inverse else 1.0, 0.0)  # truncation
    cos = scale * np.cos(angle)
    sin = scale * np.sin(angle) * (1.0 if inverse else -1.0)
    matrix = np.empty((n, 2, outputs, 2))
    matrix[:, 0, :, 0], matrix[:, 0, :, 1] = cos, sin  # from the real part
    matrix[:, 1, :, 0], matrix[:, 1, :, 1] = -sin, cos  # from the imaginary part
    return matrix[:, :parts].reshape(n * parts, outputs * 2)


def _signal_axis(node: Node, rank: int) -> int:
    """Opset 17's attribute `axis` (default 1) or opset 20's constant input
    #2 (default -2), in [-rank, -2] or [0, rank - 2]: the complex dim is none."""
    if node.importer.opset >= 20:
        axis = _single(node, 2, "axis") if node.has_input(2) else -2
    else:
        axis = int(node.attr("axis", 1))
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise node.error(
            f"axis {axis} is out of range for rank {rank} (the last dim holds the complex parts)"
        )
    return axis % rank


@converter("DFT")
def _dft(node: Node) -> list:
    x = _float_input(node)
    shape = list(x.type.get_shape())
    rank = len(shape)
    if rank < 2 or shape[-1] not in (1, 2):
        raise node.error(
            f"the input must be [..., n, 1] (real) or [..., n, 2] (complex), got shape {shape}"
        )
    inverse = bool(node.require_attr("inverse", [0, 1], 0))
    onesided = bool(node.require_attr("onesided", [0, 1], 0))
    axis = _signal_axis(node, rank)
    n, parts = shape[axis], shape[-1]
    if node.has_input(1):
        length = _single(node, 1, "dft_length")
    else:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise node.error(f"dft_length {length} is not positive")
    matrix = dft_matrix(n, parts, length, inverse, onesided)
    out_parts = 1 if inverse and onesided else 2

    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    moved = perm != list(range(rank))
    if moved:
        x = node.make("transpose", [x], perm=perm)
    batch = [shape[d] for d in perm[:-2]]
    rows = reshape(node, x, [math.prod(batch), n * parts])
    weights = node.importer.constant_value(matrix, x.type.element_type, node.label)
    result = node.make("matmul", [rows, weights])
    result = reshape(node, result, [*batch, matrix.shape[1] // out_parts, out_parts])
    if moved:
        result = node.make("transpose", [result], perm=[perm.index(d) for d in range(rank)])
    return [result]


@converter("STFT")
def _stft(node: Node) -> list:
    signal = _float_input(node)
    shape = list(signal.type.get_shape())
    if len(shape) != 3 or shape[-1] not in (1, 2):
        raise node.error(f"the signal must be [batch, length, 1 or 2], got shape {shape}")
    batch, length, parts = shape
    step = _single(node, 1, "frame_step")
    window = node.value(2) if node.has_input(2) else None
    if node.has_input(3):
        frame = _single(node, 3, "frame_length")
    else:
        frame = window.type.get_shape()[0] if window is not None else length
    if window is not None and list(window.type.get_shape()) != [frame]:
        raise node.error(f"the window's shape {window.type.get_shape()} is not [{frame}]")
    onesided = bool(node.require_attr("onesided", [0, 1], 1))
    if step < 1 or not 1 <= frame <= length:
        raise node.error(f"frame_step {step} and frame_length {frame} do not fit {length} samples")
    if onesided and parts == 2:
        raise node.error("a one-sided STFT needs a real signal ([batch, length, 1])")
    frames = (length - frame) // step + 1
    positions = np.arange(frames)[:, None] * step + np.arange(frame)[None, :]
    where = node.importer.constant_value(positions, i64, node.label)
    framed = node.make("gather", [signal, where], axis=1)  # [batch, frames, frame, parts]
    if window is not None:
        framed = node.make("mul", [framed, reshape(node, window, [frame, 1])])
    matrix = dft_matrix(frame, parts, frame, False, onesided)
    rows = reshape(node, framed, [batch * frames, frame * parts])
    weights = node.importer.constant_value(matrix, signal.type.element_type, node.label)
    result = node.make("matmul", [rows, weights])
    return [reshape(node, result, [batch, frames, matrix.shape[1] // 2, 2])]


@converter("MelWeightMatrix")
def _mel_weight_matrix(node: Node) -> list:
    """A filter bank of constant sizes: the importer folds the node with
    onnx's reference once its inputs are known, so reaching here means an
    input is not (bound graph inputs are), or the reference refused them."""
    names = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"]
    for index, what in enumerate(names):
        node.constant(index, what)
    raise node.error("these sizes and edges do not make a filter bank")
