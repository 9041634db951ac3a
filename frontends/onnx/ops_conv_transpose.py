"""ONNX's ConvTranspose (registered in `ops.CONVERTERS`), 1-D to 3-D, as
ordinary convolutions of the input: one per output phase.

A transposed convolution of stride s is the convolution, stride 1, of the
input with s - 1 zeros inserted between its elements, padded by
dilation * (kernel - 1) - pads, with the weight's channels swapped per
group and its kernel flipped. Written that way, s^rank - 1 of every s^rank
products read an inserted zero (and an inf weight times that zero is NaN).
So it is split by output phase instead (the sub-pixel form): the outputs
j = q * s + r of one phase r read the input through the taps k of the
flipped kernel with (r + k * dilation - pad) divisible by s only; those
taps are s / gcd(dilation, s) apart, and input element q + offset +
i * dilation / gcd for the i-th of them. Each phase is one convolution of
the input with its slice of the kernel (no phase has a tap: zeros), and
the phases' outputs are interleaved (stacked, then one transpose puts each
phase's outputs s apart) and cut to the output's length. Phases that read
the input alike are one convolution, their kernel slices stacked as its
output channels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, reshape
from graphcompiler.frontends.onnx.ops_window import (
    _AUTO_PADS,
    _slice_axis,
    _spatial_rank,
    _with_bias,
    convolution,
)
from graphcompiler.ir.element_types import compute_dtype


@converter("ConvTranspose")
def _conv_transpose(node: Node) -> list:
    x, weight = node.value(0), node.value(1)
    rank = _spatial_rank(node, x)
    spatial, kernel = node.shape(0)[2:], node.shape(1)[2:]
    node.attr("kernel_shape")
    groups = int(node.attr("group", 1))
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    output_padding = list(node.attr("output_padding", [0] * rank))
    begins, ends = _pads(node, spatial, kernel, strides, dilations, output_padding)
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    lengths = [
        s * (n - 1) + extra + e - b - end
        for s, n, extra, e, b, end in zip(
            strides, spatial, output_padding, extents, begins, ends, strict=True
        )
    ]
    if min(lengths) <= 0:
        raise node.error(f"the output would have the spatial shape {lengths}")
    weight = _transposed_weight(node, weight, groups)
    # the flipped kernel's taps read the (zero-inserted) input from here
    starts = [e - 1 - b for e, b in zip(extents, begins, strict=True)]
    per_dim = [
        [_phase(spatial[d], kernel[d], strides[d], dilations[d], starts[d], lengths[d], r)
         for r in range(strides[d])]
        for d in range(rank)
    ]  # fmt: skip
    phase_lengths = [math.ceil(n / s) for n, s in zip(lengths, strides, strict=True)]
    phases = [list(taps) for taps in itertools.product(*per_dim)]  # the first dim's slowest
    stacked = _phase_outputs(node, x, weight, phases, groups, phase_lengths)
    return [_with_bias(node, _interleave(node, stacked, strides, lengths))]


def _pads(node: Node, spatial, kernel, strides, dilations, output_padding):
    """(begins, ends): the pads, or those that give output_shape (default
    input * stride with SAME auto_pad), split as auto_pad says."""
    rank = len(spatial)
    auto_pad = node.require_attr("auto_pad", _AUTO_PADS, "NOTSET")
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    output_shape = node.attr("output_shape")
    if output_shape is None and not auto_pad.startswith("SAME"):
        pads = list(node.attr("pads", [0] * 2 * rank)) if auto_pad == "NOTSET" else [0] * 2 * rank
        return pads[:rank], pads[rank:]
    if output_shape:  # onnx's shape inference drops dims of output_shape (1s among them)
        node.beyond_shape_inference = True
    target = (
        list(output_shape)[-rank:]
        if output_shape
        else [s * n for s, n in zip(strides, spatial, strict=True)]
    )
    begins, ends = [], []
    for d in range(rank):
        total = strides[d] * (spatial[d] - 1) + output_padding[d] + extents[d] - target[d]
        if not output_shape and (total < 0 or output_padding[d]):
            node.beyond_shape_inference = True  # onnx's infers input * stride + output_padding
        if total < 0 and not output_shape:  # SAME beyond the full output: no padding
            total = 0  # (onnxruntime: the output is shorter)
        if total < 0:  # an output_shape beyond the full output grows at the end
            begins.append(0)
            ends.append(total)
            continue
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    node.attr("pads")  # ignored then, as the spec says
    return begins, ends


@dataclass(frozen=True)
class _Taps:
    """One phase along one dim: the flipped kernel's taps first, first + step,
    ... (count of them) read input first_input + i * dilation, for outputs
    0 .. length - 1 of the phase (every phase has the same length)."""

    first: int
    step: int
    count: int
    dilation: int
    first_input: int
    length: int


def _phase(size, kernel, stride, dilation, start, length, phase) -> _Taps | None:
    """Phase `phase`'s taps along a dim of `size` inputs (None: it has none,
    or they read nothing but padding)."""
    taps = [k for k in range(kernel) if (phase + k * dilation - start) % stride == 0]
    outputs = math.ceil(length / stride)
    if not taps:
        return None
    step = stride // math.gcd(dilation, stride)
    first_input = (phase + taps[0] * dilation - start) // stride
    reads = dilation * step // stride
    last_input = first_input + outputs - 1 + (len(taps) - 1) * reads
    if first_input >= size or last_input < 0:
        return None
    return _Taps(taps[0], step, len(taps), reads, first_input, outputs)


def _phase_outputs(
    node: Node,
    x: SSAValue,
    weight: SSAValue,
    phases: list[list[_Taps | None]],
    groups: int,
    lengths: list[int],
) -> SSAValue:
    """Every phase's outputs, [N, phases, O, lengths...]. Phases that read
    the input alike share one convolution (one group), their slices of the
    kernel stacked as its output channels: a kernel the size of the stride
    (UNet's 2x2, stride 2) is one convolution with O x 4 outputs."""
    n, o = x.type.get_shape()[0], weight.type.get_shape()[0]
    alike: dict[object, list[int]] = {}
    for index, taps in enumerate(phases):
        key = None if None in taps else tuple((t.count, t.dilation, t.first_input) for t in taps)
        alike.setdefault(key if groups == 1 and key is not None else index, []).append(index)
    results: list[SSAValue | None] = [None] * len(phases)
    for members in alike.values():
        taps = phases[members[0]]
        if None in taps:
            element = x.type.element_type
            zeros = np.zeros([n, o, *lengths], compute_dtype(element))
            results[members[0]] = node.importer.constant_value(zeros, element, node.label)
            continue
        slices = [_kernel_slice(node, weight, phases[i]) for i in members]
        kernels = slices[0] if len(slices) == 1 else node.make("concat", slices, axis=0)
        out = _convolve(node, x, kernels, taps, groups)
        if len(members) == len(phases):  # one convolution: its channels are phase-major
            return reshape(node, out, [n, len(phases), o, *lengths])
        for position, index in enumerate(members):
            results[index] = _slice_axis(node, out, 1, position * o, o) if len(members) > 1 else out
    pieces = [reshape(node, value, [n, 1, o, *lengths]) for value in results]
    return pieces[0] if len(pieces) == 1 else node.make("concat", pieces, axis=1)


def _kernel_slice(node: Node, weight: SSAValue, taps: Sequence[_Taps]) -> SSAValue:
    for d, t in enumerate(taps):
        weight = _slice_axis(node, weight, 2 + d, t.first, t.count, t.step)
    return weight


def _convolve(
    node: Node, x: SSAValue, kernels: SSAValue, taps: Sequence[_Taps], groups: int
) -> SSAValue:
    """A phase's convolution, stride 1: pads crop where it starts inside x."""
    sizes = x.type.get_shape()[2:]
    begins = [-t.first_input for t in taps]
    ends = [
        t.length - size + t.first_input + t.dilation * (t.count - 1)
        for t, size in zip(taps, sizes, strict=True)
    ]
    rank = len(taps)
    dilations = [t.dilation for t in taps]
    return convolution(node, x, kernels, [1] * rank, dilations, begins + ends, groups)


def _interleave(node: Node, stacked: SSAValue, strides: list[int], lengths: list[int]) -> SSAValue:
    """out[n, o, q * s + r, ...] = stacked[n, phase r, o, q, ...]: one
    transpose of [N, s..., O, Q...] to [N, O, Q0, s0, Q1, s1, ...], cut to
    `lengths`."""
    rank = len(strides)
    n, _, o, *phase_lengths = stacked.type.get_shape()
    split = reshape(node, stacked, [n, *strides, o, *phase_lengths])
    perm = [0, rank + 1, *[v for d in range(rank) for v in (rank + 2 + d, 1 + d)]]
    moved = node.make("transpose", [split], perm=perm)
    full = [q * s for q, s in zip(phase_lengths, strides, strict=True)]
    result = reshape(node, moved, [n, o, *full])
    if full == lengths:
        return result
    return node.make(
        "slice",
        [result],
        starts=[0] * (2 + rank),
        ends=[n, o, *lengths],
        steps=[1] * (2 + rank),
    )


def _transposed_weight(node: Node, weight: SSAValue, groups: int) -> SSAValue:
    """ConvTranspose's [C, O / group, K...] weight as Conv's [O, C / group,
    K...] one with the kernel flipped (graph-constant-fold evaluates it for
    an initializer)."""
    c, o_per_group, *kernel = weight.type.get_shape()
    if c % groups:
        raise node.error(f"group {groups} does not divide the {c} input channels")
    rank = len(kernel)
    grouped = reshape(node, weight, [groups, c // groups, o_per_group, *kernel])
    swapped = node.make("transpose", [grouped], perm=[0, 2, 1, *range(3, 3 + rank)])
    result = reshape(node, swapped, [groups * o_per_group, c // groups, *kernel])
    for d, size in enumerate(kernel):
        if size > 1:
            reverse = node.importer.constant_value(np.arange(size - 1, -1, -1), i64, node.label)
            result = node.make("gather", [result, reverse], axis=2 + d)
    return result
