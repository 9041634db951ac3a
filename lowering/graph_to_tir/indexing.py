"""Indexing by tensors of positions: gather_elements, gather_nd,
scatter_elements and scatter_nd.

Every index read becomes a position the way graph.gather's does (wrapped
once from the end, then checked against its dim), and a position outside
takes an if/else, so no load or store ever leaves a buffer.

- gather_elements walks its output; each element reads its own row, so it
  stays scalar (lanes would need a hardware gather).
- gather_nd walks the index tuples (in parallel when the work is large
  enough), computes each tuple's position once, then copies the slice it
  picks, vectorized along the slice's innermost dim.
- The scatters copy the input into the output, then walk the updates and
  write (or combine: add, mul, max, min) each at its computed position.
  Updates to one place must land in row-major order (the last "none" write
  wins, float sums round in ONNX's order), so scatter_nd walks its tuples
  serially, with each tuple's slice vectorized (its elements are distinct
  places); scatter_elements runs its outer dim in parallel only when that
  dim is not the axis (then two outer iterations never meet).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects.builtin import IndexType, VectorType
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Operand,
    compute_type,
    is_vectorizable,
    worth_parallel_work,
)


def _position(kernel: Kernel, index: SSAValue, n: int) -> tuple[SSAValue, SSAValue]:
    """(the position an index value picks in a dim of size n, whether it
    is inside): [-n, 0) counts from the end."""
    b = kernel.b
    picked = b.cast(index, IndexType())
    wrapped = b.select(b.binary(tir.LtOp, picked, 0), b.add(picked, n), picked)
    inside = b.binary(tir.AndOp, b.binary(tir.GeOp, wrapped, 0), b.binary(tir.LtOp, wrapped, n))
    return wrapped, inside


def _tuple_position(
    kernel: Kernel, indices: Operand, tuple_index: list, sizes: Sequence[int]
) -> tuple[list[SSAValue], SSAValue]:
    """The positions of the index tuple indices[tuple_index, :] in dims of
    `sizes`, and whether all are inside."""
    positions, inside = [], None
    for j, n in enumerate(sizes):
        position, within = _position(kernel, kernel.load(indices, [*tuple_index, j]), n)
        positions.append(position)
        inside = within if inside is None else kernel.b.binary(tir.AndOp, inside, within)
    return positions, inside


def _zero(kernel: Kernel, operand: Operand, lanes: int) -> SSAValue:
    element = compute_type(operand.element)
    return kernel.b.const(0, VectorType(element, [lanes]) if lanes > 1 else element)


def _if_else(
    kernel: Kernel, condition: SSAValue, then: Callable[[], None], otherwise: Callable[[], None]
) -> None:
    """if (condition) then() else otherwise()."""
    b = kernel.b
    branch = b.make_if(condition, with_else=True)
    with b.at_end_of(branch.then_region.block):
        then()
    with b.at_end_of(branch.else_region.block):
        otherwise()


@contextmanager
def _only_if(kernel: Kernel, condition: SSAValue) -> Iterator[None]:
    """What the `with` body builds runs only if `condition` holds."""
    branch = kernel.b.make_if(condition)
    with kernel.b.at_end_of(branch.then_region.block):
        yield


def _for_each_in_slice(
    kernel: Kernel, shape: list[int], body: Callable[[list, int], None], vectorize: bool
) -> None:
    """`body(slice_index, lanes)` over a slice of `shape`, serially (the
    caller's loop is the parallel one); a rank-0 slice is one element."""
    kernel.for_each(
        shape,
        lambda index, lanes: body(index if shape else [], lanes),
        vectorize and bool(shape),
        parallel=False,
    )


def gather_elements(kernel: Kernel, op: graph.GatherElementsOp) -> None:
    """out[p] = input[p with p[axis] = wrap(indices[p])], 0 outside [-n, n)."""
    source, indices = kernel.inputs
    out = kernel.out
    axis = op.normalized_axis(len(source.shape))
    n = source.shape[axis]

    def body(index: list[SSAValue], lanes: int) -> None:
        position, inside = _position(kernel, kernel.load(indices, index), n)
        source_index = [*index[:axis], position, *index[axis + 1 :]]
        _if_else(
            kernel,
            inside,
            lambda: kernel.store(out, index, kernel.load(source, source_index)),
            lambda: kernel.store(out, index, _zero(kernel, out, 1)),
        )

    kernel.for_each(out.shape, body, vectorize=False)


def gather_nd(kernel: Kernel, op: graph.GatherNDOp) -> None:
    """out[t, s] = input[t[:b], wrap(indices[t]), s], a slice of 0 when an
    index of the tuple is outside."""
    source, indices = kernel.inputs
    out = kernel.out
    batch, depth = op.batch_dim_count, indices.shape[-1]
    tuples, rest = indices.shape[:-1], source.shape[batch + depth :]
    vectorize = is_vectorizable(out, source)
    parallel = bool(tuples) and worth_parallel_work(tuples[0], math.prod(out.shape))

    with kernel.loop_nest(tuples, parallel) as t:
        positions, inside = _tuple_position(kernel, indices, t, source.shape[batch : batch + depth])

        def copy(s: list, lanes: int) -> None:
            source_index = [*t[:batch], *positions, *s]
            kernel.store(out, [*t, *s], kernel.load(source, source_index, lanes))

        def fill(s: list, lanes: int) -> None:
            kernel.store(out, [*t, *s], _zero(kernel, out, lanes))

        _if_else(
            kernel,
            inside,
            lambda: _for_each_in_slice(kernel, rest, copy, vectorize),
            lambda: _for_each_in_slice(kernel, rest, fill, vectorize),
        )


_COMBINE: dict[str, Callable[[Kernel, SSAValue, SSAValue], SSAValue]] = {
    "add": lambda k, old, new: k.b.add(old, new),
    "mul": lambda k, old, new: k.b.mul(old, new),
    "max": lambda k, old, new: k.b.binary(tir.MaxOp, old, new),
    "min": lambda k, old, new: k.b.binary(tir.MinOp, old, new),
}
"""Each scatter reduction but "none" (which stores the update as it is)."""


def _write(kernel: Kernel, reduction: str, place: list, update: SSAValue) -> None:
    """out[place] = update, or combined with what is there."""
    out = kernel.out
    if reduction != "none":
        old = kernel.load(out, place, tir.lanes_of(update.type))
        update = _COMBINE[reduction](kernel, old, update)
    kernel.store(out, place, update)


def _copy_input(kernel: Kernel) -> None:
    """out = input: what the scatter then writes into."""
    source, out = kernel.inputs[0], kernel.out

    def body(index: list[SSAValue], lanes: int) -> None:
        kernel.store(out, index, kernel.load(source, index, lanes))

    kernel.for_each(out.shape, body, is_vectorizable(out, source))


def scatter_elements(kernel: Kernel, op: graph.ScatterElementsOp) -> None:
    """out = input; then out[p with p[axis] = wrap(indices[p])] (op)=
    updates[p] for p in row-major order, skipped outside [-n, n)."""
    _copy_input(kernel)
    source, indices, updates = kernel.inputs
    axis = op.normalized_axis(len(source.shape))
    n = source.shape[axis]
    reduction = op.reduction_kind

    def body(index: list[SSAValue], lanes: int) -> None:
        position, inside = _position(kernel, kernel.load(indices, index), n)
        place = [*index[:axis], position, *index[axis + 1 :]]
        with _only_if(kernel, inside):
            _write(kernel, reduction, place, kernel.load(updates, index))

    kernel.for_each(updates.shape, body, vectorize=False, parallel=None if axis else False)


def scatter_nd(kernel: Kernel, op: graph.ScatterNDOp) -> None:
    """out = input; then out[wrap(indices[t]), s] (op)= updates[t, s] for
    the tuples t in row-major order, skipped when an index is outside."""
    _copy_input(kernel)
    source, indices, updates = kernel.inputs
    depth = indices.shape[-1]
    rest = source.shape[depth:]
    reduction = op.reduction_kind
    vectorize = is_vectorizable(kernel.out, updates)

    with kernel.loop_nest(indices.shape[:-1], parallel=False) as t:
        positions, inside = _tuple_position(kernel, indices, t, source.shape[:depth])

        def write(s: list, lanes: int) -> None:
            _write(kernel, reduction, [*positions, *s], kernel.load(updates, [*t, *s], lanes))

        with _only_if(kernel, inside):
            _for_each_in_slice(kernel, rest, write, vectorize)
