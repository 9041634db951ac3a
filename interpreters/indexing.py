"""Reference semantics of the indexing ops (gather_elements, gather_nd,
scatter_elements, scatter_nd, lookup), in numpy; reference.py runs them.

Indices follow graph.gather: [-n, 0) counts from the end, outside [-n, n)
reads 0 or writes nothing. The scatters combine their updates one at a
time, in row-major order over the updates, as the compiled kernels do: so
duplicates resolve the same way (the last "none" write wins, sums round in
the same order), and f16/bf16 round after every combination, as each is
stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import Operation

from graphcompiler.dialects import graph
from graphcompiler.ir.element_types import dense_values, round_to_bf16

Array = np.ndarray


def _wrap(indices: Array, n: int | Array) -> tuple[Array, Array]:
    """Positions along dims of size n ([-n, 0) counts from the end; 0 where
    outside [-n, n)) and where they are inside."""
    indices = indices.astype(np.int64)
    wrapped = np.where(indices < 0, indices + n, indices)
    inside = (wrapped >= 0) & (wrapped < n)
    return np.where(inside, wrapped, 0), inside


def _gather_elements(op: graph.GatherElementsOp, x: Array, indices: Array) -> Array:
    """numpy.take_along_axis on the part of x that indices covers; an index
    outside [-n, n) reads 0."""
    axis = op.normalized_axis(x.ndim)
    if x.shape[axis] == 0:
        return np.zeros(indices.shape, x.dtype)
    positions, inside = _wrap(indices, x.shape[axis])
    covered = x[tuple(slice(None if d == axis else s) for d, s in enumerate(indices.shape))]
    return np.where(inside, np.take_along_axis(covered, positions, axis), np.zeros((), x.dtype))


def _gather_nd(op: graph.GatherNDOp, x: Array, indices: Array) -> Array:
    """x[batch, *indices[t]] for each tuple t; a tuple with an index outside
    [-n, n) reads a slice of 0."""
    batch, depth = op.batch_dim_count, indices.shape[-1]
    tuples, sizes = indices.shape[:-1], x.shape[batch : batch + depth]
    if 0 in sizes:
        return np.zeros([*tuples, *x.shape[batch + depth :]], x.dtype)
    positions, inside = _wrap(indices, np.array(sizes))
    taken = x[(*np.indices(tuples)[:batch], *np.moveaxis(positions, -1, 0))]
    mask = inside.all(axis=-1).reshape((*tuples, *[1] * (taken.ndim - len(tuples))))
    return np.where(mask, taken, np.zeros((), x.dtype))


_COMBINE: dict[str, Callable[[Array, Array], Array]] = {
    "none": lambda old, new: new,
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
"""What a scatter's `reduction` makes of the element there and the update."""


def _round_to_f16(values: Array) -> Array:
    return np.asarray(values).astype(np.float16).astype(np.float32)


def _scatter(
    op: graph.HasReduction,
    x: Array,
    updates: Array,
    targets: Iterable[tuple[tuple[int, ...], tuple | None]],
) -> Array:
    """A copy of x with updates[t] combined at each (t, place) of `targets`,
    in order; a place of None (an index outside) is skipped."""
    element = op.results[0].type.element_type
    stored = np.asarray
    if isinstance(element, BFloat16Type):
        stored = round_to_bf16
    elif isinstance(element, Float16Type):
        stored = _round_to_f16
    combine = _COMBINE[op.reduction_kind]
    out = x.copy()
    for t, place in targets:
        if place is not None:
            out[place] = stored(combine(out[place], updates[t]))
    return out


def _scatter_elements(
    op: graph.ScatterElementsOp, x: Array, indices: Array, updates: Array
) -> Array:
    """updates[p] at p with p[axis] = indices[p], p in row-major order."""
    axis = op.normalized_axis(x.ndim)
    positions, inside = _wrap(indices, x.shape[axis])
    targets = (
        (p, (*p[:axis], positions[p], *p[axis + 1 :]) if inside[p] else None)
        for p in np.ndindex(*indices.shape)
    )
    return _scatter(op, x, updates, targets)


def _scatter_nd(op: graph.ScatterNDOp, x: Array, indices: Array, updates: Array) -> Array:
    """updates[t] at indices[t] (a slice), t in row-major order."""
    positions, inside = _wrap(indices, np.array(x.shape[: indices.shape[-1]]))
    targets = (
        (t, tuple(positions[t]) if inside[t].all() else None)
        for t in np.ndindex(*indices.shape[:-1])
    )
    return _scatter(op, x, updates, targets)


def _lookup(op: graph.LookupOp, x: Array) -> Array:
    """table[x], table[x + 128] for i8."""
    offset = 128 if x.dtype == np.int8 else 0
    return dense_values(op.table).reshape(graph.TABLE_ENTRIES)[x.astype(np.int64) + offset]


INDEXING: dict[type[Operation], Callable[..., Array]] = {
    graph.LookupOp: _lookup,
    graph.GatherElementsOp: _gather_elements,
    graph.GatherNDOp: _gather_nd,
    graph.ScatterElementsOp: _scatter_elements,
    graph.ScatterNDOp: _scatter_nd,
}
"""The ops' entries of reference.IMPLEMENTATIONS."""
