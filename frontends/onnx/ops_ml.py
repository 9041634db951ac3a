"""Converters of ai.onnx.ml ops (registered in `ops.CONVERTERS`):
Binarizer, ArrayFeatureExtractor and TreeEnsemble, in graph ops.

TreeEnsemble walks every tree of the ensemble for every sample at once:
the position of each (sample, tree) is an index into tables of the nodes
followed by the leaves (a leaf leads to itself), built at import time. A
step gathers each position's feature, split and comparison, compares the
sample's feature value, and moves to the true or false child; as many
steps as the deepest tree has levels bring every position to a leaf, whose
weight goes to its target, aggregated over the trees as onnxruntime does
(onnx's reference differs in two corners: a tree that is one leaf reads
the leaf numbered as its root, and a target no tree reaches is +-FLT_MAX
under MIN and MAX, where onnxruntime gives 0).
"""

from __future__ import annotations

import math

import numpy as np
from onnx import numpy_helper
from xdsl.dialects.builtin import IntegerType, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import cast, converter, reshape

ML = "ai.onnx.ml"
LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
_COMPARISONS = {
    LEQ: "less_equal", LT: "less", GTE: "greater_equal", GT: "greater", EQ: "equal",
    NEQ: "not_equal",
}  # fmt: skip
AVERAGE, SUM = 0, 1
EXTREME_AGGREGATES = {2: "reduce_min", 3: "reduce_max"}  # MIN, MAX


@converter("Binarizer", domain=ML)
def _binarizer(node: Node) -> list:
    x = node.value(0)
    above = node.make("greater", [x, node.scalar(float(node.attr("threshold", 0.0)), x)])
    return [cast(node, above, x.type.element_type)]


@converter("ArrayFeatureExtractor", domain=ML)
def _array_feature_extractor(node: Node) -> list:
    """x[..., indices] with the indices flattened; a 1-D x gives [1, n] (onnx's reference)."""
    x, indices = node.value(0), node.value(1)
    shape = list(x.type.get_shape())
    count = math.prod(indices.type.get_shape())
    flat = reshape(node, indices, [count])
    taken = node.make("gather", [x, flat], axis=len(shape) - 1)
    return [reshape(node, taken, [1, count] if len(shape) == 1 else [*shape[:-1], count])]


def _array(node: Node, name: str, dtype=None) -> np.ndarray | None:
    """Attribute `name` (a list or a tensor) as an array, None if absent."""
    value = node.attr(name)
    if value is None:
        return None
    return np.asarray(numpy_helper.to_array(value) if hasattr(value, "dims") else value, dtype)


@converter("TreeEnsemble", domain=ML)
def _tree_ensemble(node: Node) -> list:
    x = node.value(0)
    if len(x.type.get_shape()) != 2:
        raise node.error("the input must be [samples, features]")
    samples = x.type.get_shape()[0]
    features = _array(node, "nodes_featureids", np.int64)
    splits = _array(node, "nodes_splits", np.float64)
    modes = _array(node, "nodes_modes", np.int64)
    true_ids, false_ids = (
        _array(node, "nodes_truenodeids", np.int64),
        _array(node, "nodes_falsenodeids", np.int64),
    )
    true_leaf, false_leaf = (
        _array(node, "nodes_trueleafs", bool),
        _array(node, "nodes_falseleafs", bool),
    )
    weights, targets = (
        _array(node, "leaf_weights", np.float64),
        _array(node, "leaf_targetids", np.int64),
    )
    roots = _array(node, "tree_roots", np.int64)
    missing = _array(node, "nodes_missing_value_tracks_true", bool)
    members = _array(node, "membership_values", np.float64)
    node.attr("nodes_hitrates")  # a profile of the training data: no effect on the result
    n_targets = int(node.attr("n_targets"))
    aggregate = int(node.attr("aggregate_function", 1))
    transform = node.require_attr("post_transform", (0, 1, 2), 0)  # none, softmax, logistic
    if aggregate not in (AVERAGE, SUM, *EXTREME_AGGREGATES):
        raise node.unsupported_attribute("aggregate_function")
    nodes, leaves = len(modes), len(weights)
    if missing is None:
        missing = np.zeros(nodes, bool)
    if any(
        len(a) != nodes
        for a in (features, splits, true_ids, false_ids, true_leaf, false_leaf, missing)
    ):
        raise node.error("the nodes_* attributes must have one value per node")
    if len(targets) != leaves or (leaves and not 0 <= targets.min() <= targets.max() < n_targets):
        raise node.error("leaf_targetids must give each leaf a target in [0, n_targets)")
    if features.size and not 0 <= features.min() <= features.max() < x.type.get_shape()[1]:
        raise node.error("a node reads a feature the input does not have")

    def position(index: int, leaf: bool) -> int:
        if not 0 <= index < (leaves if leaf else nodes):
            raise node.error(f"{'leaf' if leaf else 'node'} index {index} is out of range")
        return nodes + index if leaf else index

    # a root whose two branches are the same leaf is that leaf (onnx's reference)
    starts = [
        position(true_ids[r], True)
        if true_leaf[r] and false_leaf[r] and true_ids[r] == false_ids[r]
        else position(r, False)
        for r in roots
    ]
    if not starts:
        raise node.error("the ensemble has no tree")
    on_true = [position(i, leaf) for i, leaf in zip(true_ids, true_leaf, strict=True)]
    on_false = [position(i, leaf) for i, leaf in zip(false_ids, false_leaf, strict=True)]
    depth = _depth(node, starts, on_true, on_false, nodes)
    itself = list(range(nodes, nodes + leaves))

    def table(array: np.ndarray, type_) -> SSAValue:
        return node.importer.constant_value(np.asarray(array), type_, node.label)

    state = table(np.tile(np.asarray(starts, np.int64), (samples, 1)), i64)
    feature_of = table(np.concatenate([features, np.zeros(leaves, np.int64)]), i64)
    split_of = table(np.concatenate([splits, np.zeros(leaves)]), x.type.element_type)
    mode_of = table(np.concatenate([modes, np.zeros(leaves, np.int64)]), i64)
    missing_of = table(np.concatenate([missing, np.zeros(leaves, bool)]), IntegerType(1))
    true_of = table(np.asarray(on_true + itself, np.int64), i64)
    false_of = table(np.asarray(on_false + itself, np.int64), i64)
    member_sets = _member_sets(node, modes, members, nodes + leaves)
    if MEMBER in modes:
        member_sets = table(member_sets, x.type.element_type)
    for _ in range(depth):
        value = node.make(
            "gather_elements", [x, node.make("gather", [feature_of, state], axis=0)], axis=1
        )
        split = node.make("gather", [split_of, state], axis=0)
        taken = None
        for mode in sorted(set(modes.tolist())):
            if mode == MEMBER:
                sets = node.make("gather", [member_sets, state], axis=0)
                shape = [*value.type.get_shape(), 1]
                hits = node.make("equal", [sets, reshape(node, value, shape)])
                result = cast(
                    node,
                    node.make("reduce_max", [cast(node, hits, i64)], axes=[2], keep_dims=False),
                    IntegerType(1),
                )
            elif mode in _COMPARISONS:
                result = node.make(_COMPARISONS[mode], [value, split])
            else:
                raise node.error(f"node mode {mode} is not one of BRANCH_LEQ .. BRANCH_MEMBER")
            if taken is None:
                taken = result
            else:
                is_mode = node.make(
                    "equal",
                    [node.make("gather", [mode_of, state], axis=0), node.scalar(mode, state)],
                )
                taken = node.make("select", [is_mode, result, taken])
        nan = node.make("not_equal", [value, value])
        tracked = node.make("logical_and", [nan, node.make("gather", [missing_of, state], axis=0)])
        taken = node.make("logical_or", [taken, tracked])
        state = node.make(
            "select",
            [
                taken,
                node.make("gather", [true_of, state], axis=0),
                node.make("gather", [false_of, state], axis=0),
            ],
        )
    leaf = node.make("sub", [state, node.scalar(nodes, state)])
    weight = node.make("gather", [table(weights, x.type.element_type), leaf], axis=0)
    target = node.make("gather", [table(targets, i64), leaf], axis=0)
    trees = len(starts)
    hit = node.make(
        "equal",
        [
            reshape(node, target, [samples, trees, 1]),
            table(np.arange(n_targets).reshape(1, 1, -1), i64),
        ],
    )
    per_target = reshape(node, weight, [samples, trees, 1])
    if aggregate in (AVERAGE, SUM):
        summed = node.make(
            "reduce_sum",
            [node.make("select", [hit, per_target, node.scalar(0.0, weight)])],
            axes=[1],
            keep_dims=False,
        )
        y = (
            summed
            if aggregate == SUM
            else node.make("div", [summed, node.scalar(float(trees), summed)])
        )
    else:
        fill = math.inf if aggregate == 2 else -math.inf
        chosen = node.make("select", [hit, per_target, node.scalar(fill, weight)])
        y = node.make(EXTREME_AGGREGATES[aggregate], [chosen], axes=[1], keep_dims=False)
        reached = node.make("reduce_max", [cast(node, hit, i64)], axes=[1], keep_dims=False)
        touched = node.make("greater", [reached, node.scalar(0, reached)])
        y = node.make("select", [touched, y, node.scalar(0.0, y)])  # none: 0, as onnxruntime
    if transform == 1:
        y = node.make("softmax", [y], axis=-1)
    elif transform == 2:
        y = node.make("sigmoid", [y])
    return [y]


def _depth(
    node: Node, starts: list[int], on_true: list[int], on_false: list[int], nodes: int
) -> int:
    """The most steps from a root to a leaf (a cycle is an error)."""
    deepest, pending = 0, [(s, 0) for s in starts]
    while pending:
        at, steps = pending.pop()
        if at >= nodes:
            deepest = max(deepest, steps)
            continue
        if steps >= nodes:
            raise node.error("the trees' branches form a cycle")
        pending += [(on_true[at], steps + 1), (on_false[at], steps + 1)]
    return deepest


def _member_sets(node: Node, modes: np.ndarray, members, positions: int) -> np.ndarray:
    """Each position's set of members as a row padded with NaN (equal to
    nothing): membership_values holds the sets of the BRANCH_MEMBER nodes
    in node order, each ended by a NaN."""
    member_nodes = np.flatnonzero(modes == MEMBER)
    if not member_nodes.size:
        return np.full([positions, 1], np.nan)
    if members is None:
        raise node.error("BRANCH_MEMBER nodes need membership_values")
    sets, current = [], []
    for value in members.tolist():
        if math.isnan(value):
            sets.append(current)
            current = []
        else:
            current.append(value)
    if current:
        sets.append(current)
    if len(sets) != member_nodes.size:
        raise node.error(
            f"membership_values holds {len(sets)} sets for {member_nodes.size} BRANCH_MEMBER nodes"
        )
    rows = np.full([positions, max(1, max(len(s) for s in sets))], np.nan)
    for index, values in zip(member_nodes, sets, strict=True):
        rows[index, : len(values)] = values
    return rows
