"""Converters of ONNX ops composed from several graph ops (registered in
`ops.CONVERTERS`): Einsum and GroupNormalization.

Einsum contracts its operands left to right, two at a time, as one batched
graph.matmul:

    a [batch, left, contracted] -> transpose, reshape -> [B, L, K]
    b [batch, contracted, right] -> transpose, reshape -> [B, K, R]
    matmul -> [B, L, R] -> reshape [batch..., left..., right...]

after each operand has its diagonals taken (a letter repeated in one
operand: a gather of the flattened pair) and the letters no later step
needs summed out; the result is transposed into the output's order.

GroupNormalization normalizes [N, G, C / G * spatial] with instance_norm,
then applies the per-channel scale and bias (opset 21) or, for opset 18's
per-group ones, lets instance_norm apply them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import _float_input, cast, converter, reshape, stashed

# --- Einsum ------------------------------------------------------------------------


def _subscripts(node: Node, equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """Each operand's letters and the output's, an ellipsis spelled out as
    digits (its dims right-aligned across the operands, as numpy)."""
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise node.error(f"equation '{equation}' names {len(terms)} operands, {len(ranks)} given")
    if any(c.isdigit() for c in equation):
        raise node.error(f"equation '{equation}' is not an einsum equation")
    spans = [
        rank - (len(term) - 3) for term, rank in zip(terms, ranks, strict=True) if "..." in term
    ]
    width = max(spans, default=0)
    broadcast = "".join(str(d) for d in range(width))
    letters = []
    for term, rank in zip(terms, ranks, strict=True):
        if "..." in term:
            term = term.replace("...", broadcast[width - (rank - (len(term) - 3)) :])
        if len(term) != rank or not all(c.isalpha() or c.isdigit() for c in term):
            raise node.error(f"subscripts '{term}' do not fit an operand of rank {rank}")
        letters.append(term)
    if arrow:
        output = output.replace("...", broadcast)
    else:  # numpy's implicit output: the ellipsis, then the letters used once, sorted
        counts = "".join(letters)
        output = broadcast + "".join(
            sorted(c for c in set(counts) if c.isalpha() and counts.count(c) == 1)
        )
    if len(set(output)) != len(output) or any(c not in "".join(letters) for c in output):
        raise node.error(f"output subscripts '{output}' repeat a letter or name an unknown one")
    return letters, output


def _permute(node: Node, x: SSAValue, letters: str, order: str) -> SSAValue:
    if letters == order:
        return x
    return node.make("transpose", [x], perm=[letters.index(c) for c in order])


def _diagonals(node: Node, x: SSAValue, letters: str) -> tuple[SSAValue, str]:
    """x[..., i, ..., i, ...] -> x[..., i, ...] for each repeated letter:
    the pair moved together, flattened and gathered at i * (n + 1)."""
    while True:
        repeated = next((c for c in letters if letters.count(c) > 1), None)
        if repeated is None:
            return x, letters
        first = letters.index(repeated)
        second = letters.index(repeated, first + 1)
        order = list(range(len(letters)))
        order.remove(second)
        order.insert(first + 1, second)
        if order != list(range(len(letters))):
            x = node.make("transpose", [x], perm=order)
        shape = list(x.type.get_shape())
        size = shape[first]
        if shape[first + 1] != size:
            raise node.error(
                f"subscript '{repeated}' labels dims of sizes {size} and {shape[first + 1]}"
            )
        flat = reshape(node, x, [*shape[:first], size * size, *shape[first + 2 :]])
        where = node.importer.constant_value(np.arange(size) * (size + 1), i64, node.label)
        x = node.make("gather", [flat, where], axis=first)
        letters = "".join(letters[i] for i in order if i != second)


def _sum_out(node: Node, x: SSAValue, letters: str, keep: str) -> tuple[SSAValue, str]:
    axes = [i for i, c in enumerate(letters) if c not in keep]
    if not axes:
        return x, letters
    x = node.make("reduce_sum", [x], axes=axes, keep_dims=False)
    return x, "".join(c for c in letters if c in keep)


def _contract(node: Node, a: SSAValue, left: str, b: SSAValue, right: str, keep: str):
    """a and b (their letters `left`, `right`) as one matmul; the letters
    shared and in `keep` are its batch, the shared others are contracted."""
    sizes = dict(zip(left, a.type.get_shape(), strict=True)) | dict(
        zip(right, b.type.get_shape(), strict=True)
    )
    batch = "".join(c for c in left if c in right and c in keep)
    summed = "".join(c for c in left if c in right and c not in keep)
    only_a = "".join(c for c in left if c not in right)
    only_b = "".join(c for c in right if c not in left)

    def size(group: str) -> int:
        return math.prod(sizes[c] for c in group)

    a = reshape(
        node,
        _permute(node, a, left, batch + only_a + summed),
        [size(batch), size(only_a), size(summed)],
    )
    b = reshape(
        node,
        _permute(node, b, right, batch + summed + only_b),
        [size(batch), size(summed), size(only_b)],
    )
    product = node.make("matmul", [a, b])
    letters = batch + only_a + only_b
    return reshape(node, product, [sizes[c] for c in letters]), letters


def _unbroadcast(node: Node, operands: list, letters: list[str]) -> None:
    """A letter of size 1 in one operand and n in another broadcasts: the
    size-1 dim is dropped from its operand (in place)."""
    sizes: dict[str, set[int]] = {}
    for x, term in zip(operands, letters, strict=True):
        for c, n in zip(term, x.type.get_shape(), strict=True):
            sizes.setdefault(c, set()).add(n)
    # a letter's size: the one other than 1 (0 included: an empty dim), else 1
    largest = {c: min(found - {1}, default=1) for c, found in sizes.items()}
    for index, (x, term) in enumerate(zip(operands, letters, strict=True)):
        shape = x.type.get_shape()
        keep = [i for i, (c, n) in enumerate(zip(term, shape, strict=True)) if n == largest[c]]
        if len(keep) != len(term):
            if any(shape[i] != 1 for i in range(len(term)) if i not in keep):
                raise node.error(f"operand {index} does not broadcast with the others")
            operands[index] = reshape(node, x, [shape[i] for i in keep])
            letters[index] = "".join(term[i] for i in keep)


@converter("Einsum")
def _einsum(node: Node) -> list:
    operands = node.values()
    equation = str(node.attr("equation", ""))
    letters, output = _subscripts(node, equation, [len(x.type.get_shape()) for x in operands])
    _unbroadcast(node, operands, letters)
    prepared = []
    for index, (x, term) in enumerate(zip(operands, letters, strict=True)):
        x, term = _diagonals(node, x, term)
        needed = output + "".join(t for other, t in enumerate(letters) if other != index)
        prepared.append(_sum_out(node, x, term, needed))
    result, current = prepared[0]
    for index, (x, term) in enumerate(prepared[1:], start=1):
        keep = output + "".join(letters[index + 1 :])
        result, current = _sum_out(node, result, current, keep + term)
        result, current = _contract(node, result, current, x, term, keep)
    result, current = _sum_out(node, result, current, output)
    return [_permute(node, result, current, output)]


# --- GroupNormalization ------------------------------------------------------------


@converter("GroupNormalization")
def _group_norm(node: Node) -> list:
    x = _float_input(node)
    n, channels, *spatial = x.type.get_shape()
    groups = int(node.attr("num_groups"))
    if groups <= 0 or channels % groups:
        raise node.error(f"num_groups {groups} does not divide the {channels} channels")
    scale, bias = node.value(1), node.value(2)
    sizes = {math.prod(v.type.get_shape()) for v in (scale, bias)}
    if sizes not in ({channels}, {groups}):
        raise node.error(f"scale and bias must both hold {channels} (or {groups}) values")
    element = x.type.element_type
    per_group = sizes == {groups}
    if per_group:
        group_scale, group_bias = reshape(node, scale, [groups]), reshape(node, bias, [groups])
    else:
        group_scale, group_bias = (
            node.importer.constant_value(np.full(groups, v), element, node.label)
            for v in (1.0, 0.0)
        )
    grouped = reshape(node, x, [n, groups, channels // groups * math.prod(spatial)])
    epsilon = float(node.attr("epsilon", 1e-5))
    stage_one = [stashed(node, v) for v in (grouped, group_scale, group_bias)]
    normalized = node.make("instance_norm", stage_one, epsilon=epsilon)
    normalized = cast(node, normalized, element)
    result = reshape(node, normalized, [n, channels, *spatial])
    if per_group:
        return [result]
    ones = [1] * len(spatial)
    result = node.make("mul", [result, reshape(node, scale, [channels, *ones])])
    return [node.make("add", [result, reshape(node, bias, [channels, *ones])])]
