"""TfIdfVectorizer on integer tokens (registered in `ops.CONVERTERS`),
written out in graph ops.

The pool is known at import time, so each of its n-grams is a product of
token matches: for a skip distance d, the n-gram (t1, ..., tn) occurs at
position i when x[i] == t1, x[i + d] == t2, ... Each token's match mask is
computed once; an n-gram's count sums, over the distances 1 .. max_skip_count
+ 1 (a unigram once), the product of its tokens' masks shifted by k d. The
counts of all n-grams, one column each, meet their output columns through a
0/1 matrix (n-grams may share a column), and the mode weighs them, as onnx's
reference does. String tokens are not supported (the element type).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import cast, converter, reshape


def _pool_ngrams(node: Node, pool: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """(the n-gram's index in the pool, its tokens) for the n-grams of
    counted lengths; ngram_counts[k] is where the (k + 1)-grams start."""
    starts = [int(s) for s in node.attr("ngram_counts")]
    low, high = int(node.attr("min_gram_length")), int(node.attr("max_gram_length"))
    if not 1 <= low <= high:
        raise node.error(f"gram lengths [{low}, {high}] are not a range of positive lengths")
    ngrams, index = [], 0
    for size, start in enumerate(starts, 1):
        end = starts[size] if size < len(starts) else len(pool)
        if end < start or (end - start) % size:
            raise node.error(f"the pool's {size}-grams ({start} to {end}) are not whole")
        for offset in range(start, end, size):
            if low <= size <= high:
                ngrams.append((index, tuple(pool[offset : offset + size])))
            index += 1
    return ngrams


@converter("TfIdfVectorizer")
def _tfidf_vectorizer(node: Node) -> list:
    x = node.value(0)
    shape = list(x.type.get_shape())
    if not isinstance(x.type.element_type, IntegerType) or len(shape) not in (1, 2):
        raise node.error("the input must be integer tokens of shape [C] or [N, C]")
    if node.attr("pool_strings") is not None:
        raise node.unsupported_attribute("pool_strings", "string tokens")
    pool = [int(t) for t in node.attr("pool_int64s") or []]
    mode = node.require_attr("mode", ("TF", "IDF", "TFIDF"), None)
    skips = int(node.attr("max_skip_count", 0))
    columns = [int(i) for i in node.attr("ngram_indexes")]
    weights = node.attr("weights")
    ngrams = _pool_ngrams(node, pool)
    rows = reshape(node, x, [1, shape[0]] if len(shape) == 1 else shape)
    batch, length = rows.type.get_shape()
    f32 = Float32Type()
    masks: dict[int, SSAValue] = {}

    def mask(token: int) -> SSAValue:
        if token not in masks:
            masks[token] = cast(node, node.make("equal", [rows, node.scalar(token, rows)]), f32)
        return masks[token]

    def shifted(token: int, start: int, size: int) -> SSAValue:
        return node.make("slice", [mask(token)], starts=[0, start], ends=[batch, start + size])

    counts = []
    for _, tokens in ngrams:
        total = None
        for distance in range(1, (skips + 1 if len(tokens) > 1 else 1) + 1):
            span = length - (len(tokens) - 1) * distance  # positions the n-gram can start at
            if span <= 0:
                break
            both = shifted(tokens[0], 0, span)
            for k, token in enumerate(tokens[1:], 1):
                both = node.make("mul", [both, shifted(token, k * distance, span)])
            found = node.make("reduce_sum", [both], axes=[1], keep_dims=True)
            total = found if total is None else node.make("add", [total, found])
        counts.append(total if total is not None else _zeros(node, batch))
    width = max(columns) + 1
    routing = np.zeros([max(len(ngrams), 1), width], np.float32)
    for row, (index, _) in enumerate(ngrams):
        if index >= len(columns):
            raise node.error(f"ngram_indexes has no column for the pool's n-gram #{index}")
        routing[row, columns[index]] = 1.0
    counts = counts or [_zeros(node, batch)]
    stacked = counts[0] if len(counts) == 1 else node.make("concat", counts, axis=1)
    y = node.make("matmul", [stacked, node.importer.constant_value(routing, f32, node.label)])
    if mode != "TF":
        given = np.asarray(weights if weights else [1.0] * width, np.float32)
        if given.size != width:
            raise node.error(f"weights has {given.size} values for {width} output columns")
        w = node.importer.constant_value(given, f32, node.label)
        if mode == "IDF":
            seen = node.make("greater", [y, node.scalar(0.0, y)])
            y = node.make("select", [seen, w, node.scalar(0.0, y)])
        else:
            y = node.make("mul", [y, w])
    return [reshape(node, y, [width] if len(shape) == 1 else [batch, width])]


def _zeros(node: Node, batch: int) -> SSAValue:
    return node.importer.constant_value(np.zeros([batch, 1], np.float32), Float32Type(), node.label)
