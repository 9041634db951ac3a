"""TfIdfVectorizer on integer tokens (registered in `ops.CONVERTERS`),
written out in graph ops.

The pool is known at import time. For a skip distance d, the n-gram (t1,
..., tn) occurs at position i when x[i] == t1, x[i + d] == t2, ...: the
n-grams of one length are compared at once, the window of x starting at k d
against a row of every n-gram's k-th token ([batch, positions, n-grams]),
the matches of the n tokens combined and summed over the positions, and
over the distances 1 .. max_skip_count + 1 (unigrams once). So the ops grow
with the lengths and distances, not with the pool. The counts are gathered
into their output columns (summed through a 0/1 matrix where n-grams share
a column), and the mode weighs them, as onnx's reference does. String tokens are not
supported (the element type).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import cast, converter, reshape


def _pool_ngrams(node: Node, pool: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """(the n-gram's index in the pool, its tokens) for the n-grams of
    counted lengths, in pool order; ngram_counts[k] is where the (k +
    1)-grams start. An n-gram listed twice is an error (onnxruntime's;
    onnx's reference counts it for its last index only)."""
    starts = [int(s) for s in node.attr("ngram_counts")]
    low, high = int(node.attr("min_gram_length")), int(node.attr("max_gram_length"))
    if not 1 <= low <= high:
        raise node.error(f"gram lengths [{low}, {high}] are not a range of positive lengths")
    counted: dict[tuple[int, ...], int] = {}
    seen: set[tuple[int, ...]] = set()
    index = 0
    for size, start in enumerate(starts, 1):
        end = starts[size] if size < len(starts) else len(pool)
        if end < start or (end - start) % size:
            raise node.error(f"the pool's {size}-grams ({start} to {end}) are not whole")
        for offset in range(start, end, size):
            tokens = tuple(pool[offset : offset + size])
            if tokens in seen:
                raise node.error(f"the pool lists the n-gram {list(tokens)} twice")
            seen.add(tokens)
            if low <= size <= high:
                counted[tokens] = index
            index += 1
    return sorted((index, tokens) for tokens, index in counted.items())


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
    sizes = sorted({len(tokens) for _, tokens in ngrams})
    counts = []  # per n-gram length, [batch, that many n-grams]: in pool order, as `ngrams`
    for size in sizes:
        table = np.array([tokens for _, tokens in ngrams if len(tokens) == size], np.int64)
        total = None
        for distance in range(1, (skips + 1 if size > 1 else 1) + 1):
            span = length - (size - 1) * distance  # positions an n-gram can start at
            if span <= 0:
                break
            found = None  # [batch, span, n-grams]: each n-gram's tokens all match there
            for k in range(size):
                window = node.make("slice", [rows], starts=[0, k * distance],
                                   ends=[batch, k * distance + span])  # fmt: skip
                tokens = node.importer.constant_value(
                    table[:, k].reshape(1, 1, -1), rows.type.element_type, node.label
                )
                match = node.make("equal", [reshape(node, window, [batch, span, 1]), tokens])
                found = match if found is None else node.make("logical_and", [found, match])
            summed = node.make("reduce_sum", [cast(node, found, f32)], axes=[1], keep_dims=False)
            total = summed if total is None else node.make("add", [total, summed])
        counts.append(total if total is not None else _zeros(node, batch, len(table)))
    width = max(columns) + 1
    targets = []
    for index, _ in ngrams:
        if index >= len(columns):
            raise node.error(f"ngram_indexes has no column for the pool's n-gram #{index}")
        targets.append(columns[index])
    counts = [*counts, _zeros(node, batch, 1)]  # the last column: 0, for a column no n-gram has
    stacked = node.make("concat", counts, axis=1)
    if len(set(targets)) == len(targets):  # one n-gram per column: a gather
        source = np.full(width, len(targets), np.int64)
        source[targets] = np.arange(len(targets))
        y = node.make(
            "gather", [stacked, node.importer.constant_value(source, i64, node.label)], axis=1
        )
    else:  # columns that sum several n-grams: a 0/1 matrix
        routing = np.zeros([len(targets) + 1, width], np.float32)
        routing[np.arange(len(targets)), targets] = 1.0
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


def _zeros(node: Node, batch: int, width: int) -> SSAValue:
    return node.importer.constant_value(
        np.zeros([batch, width], np.float32), Float32Type(), node.label
    )
