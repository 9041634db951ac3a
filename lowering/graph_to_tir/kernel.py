"""The loop-nest, index and broadcasting helpers every lowering template uses.

A `Kernel` is one Tensor IR function implementing one graph op: its
parameters are the op's outputs, then its inputs (the seed's calling
convention), each a `!tir.tensor` of the graph tensor's physical shape.
Templates describe *what* to compute per element; the kernel decides the
loops: `for_each` walks a shape with the outermost loop parallel when the
work is large enough and the innermost dimension vectorized (the target's
f32 lanes) with a scalar tail; `for_each_flat` walks contiguous operands as
one range cut into parallel chunks; `load`/`store` apply numpy broadcasting
and turn blocked memory formats into index arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    TensorType,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.ir.element_types import NARROW_FLOAT_TYPES, dense_values
from graphcompiler.target.description import Target, get_target
from graphcompiler.target.schedules import PARALLEL_MIN_ELEMENTS

f32 = Float32Type()
i32 = IntegerType(32)


def tir_tensor_type(type_: TensorType) -> tir.TirTensorType:
    """The buffer type of a graph tensor: its physical (blocked) shape."""
    shape = list(type_.get_shape()) or [1]
    if isinstance(type_.encoding, graph.FormatAttr):
        shape = type_.encoding.physical_shape(shape)
    return tir.TirTensorType(shape, type_.element_type)


def constant_values(attr: DenseIntOrFPElementsAttr, shape: Sequence[int]) -> np.ndarray:
    """A dense constant as an f32 array of `shape` (f32 data is read in place)."""
    values = dense_values(attr).astype(np.float32, copy=False)
    if values.size == 1:
        return np.full(shape, values[0], np.float32)
    return values.reshape(shape)


def packed_global(builder: TirBuilder, name: str, values: np.ndarray) -> tir.GlobalOp:
    """A module global `name` holding `values`, placed first in the module:
    i32 for int32 values (integer packed weights), f32 for any other; a
    blob from BLOB_MIN_BYTES on where the builder makes blobs (held as it
    is when it is an aligned_zeros array the caller no longer writes)."""
    element, dtype = (i32, "<i4") if values.dtype == np.int32 else (f32, "<f4")
    values = values.astype(dtype, copy=False)
    if builder.blob_constants and values.nbytes >= tir.BLOB_MIN_BYTES:  # bound in place
        attr = tir.BlobAttr(tir.ConstantBlob(values))
    else:
        data = BytesAttr(np.ascontiguousarray(values).tobytes())
        attr = DenseIntOrFPElementsAttr(TensorType(element, list(values.shape)), data)
    module_block = builder.module.body.block
    with builder.at_end_of(module_block):
        global_op = builder.make_global(name, tir.TirTensorType(list(values.shape), element), attr)
    module_block.detach_op(global_op)
    module_block.insert_op_before(global_op, module_block.first_op)
    return global_op


def global_constant(builder: TirBuilder, suffix: str, values: np.ndarray) -> SSAValue:
    """A module global holding `values` (packed at compile time), named
    after the kernel using it; its handle in the current function."""
    name = f"{builder.current_function.sym_name.data}_{suffix}"
    return builder.global_ref(packed_global(builder, name, values))


def compute_type(element: Attribute) -> Attribute:
    """f16, bf16 and the 8- and 4-bit floats are computed in f32; other types as they are."""
    return f32 if isinstance(element, (Float16Type, BFloat16Type, *NARROW_FLOAT_TYPES)) else element


@dataclass
class Operand:
    """A kernel parameter: the tir tensor and the graph type it stands for."""

    value: SSAValue
    type: TensorType
    constant: Attribute | None = None
    """The value when the operand is a compile-time constant (packed once)."""

    @property
    def shape(self) -> list[int]:
        return list(self.type.get_shape())

    @property
    def element(self) -> Attribute:
        return self.type.element_type

    @property
    def blocked(self) -> bool:
        return isinstance(self.type.encoding, graph.FormatAttr)


def view(kernel: Kernel, operand: Operand, shape: list[int]) -> Operand:
    """The operand's dense buffer seen with `shape` (the same element
    count; a constant keeps its value, which PackedMatmul packs)."""
    value = operand.value
    seen = kernel.b.tensor_ptr(value, [0] * len(value.type.get_shape()), shape)
    return Operand(seen, TensorType(operand.element, shape), operand.constant)


@dataclass(frozen=True)
class Packing:
    """A global a kernel made at compile time from a constant operand:
    `pack` maps the constant's values (viewed as `shape`) to the global's,
    and `ref` is the global's handle in the kernel. Another op of the same
    structure reuses the kernel with its own constants packed the same way
    (kernel_reuse.py)."""

    constant: Attribute
    shape: tuple[int, ...]
    suffix: str
    pack: Callable[[np.ndarray], np.ndarray]
    ref: SSAValue


class Kernel:
    def __init__(
        self,
        builder: TirBuilder,
        outputs: list[Operand],
        inputs: list[Operand],
        target: Target | None = None,
    ):
        self.b = builder
        self.outputs = outputs
        self.inputs = inputs
        self.target = target or get_target()
        self.packings: list[Packing] = []

    def packed_constant(
        self, operand: Operand, suffix: str, pack: Callable[[np.ndarray], np.ndarray]
    ) -> SSAValue:
        """A global holding `pack` of the constant `operand`'s values, made
        at compile time (packed weights). Templates read a constant's values
        only through here: `pack` must depend on nothing but the values and
        the op's structure, so that the kernel can serve ops of the same
        structure with other constants."""
        ref = global_constant(
            self.b, suffix, pack(constant_values(operand.constant, operand.shape))
        )
        self.packings.append(Packing(operand.constant, tuple(operand.shape), suffix, pack, ref))
        return ref

    @property
    def lanes(self) -> int:
        """Vector lanes of the target (f32 elements per register)."""
        return self.target.f32_lanes

    @property
    def out(self) -> Operand:
        return self.outputs[0]

    # --- loops ---------------------------------------------------------------

    @contextmanager
    def loop_nest(
        self, shape: Sequence[int], parallel: bool | None = None
    ) -> Iterator[list[SSAValue]]:
        """Loops over `shape` (rank 0 -> no loop); the outermost is parallel
        when asked, or by default when the nest holds enough work."""
        if parallel is None:
            parallel = worth_parallel(shape)
        indices: list[SSAValue] = []
        with _nest(self.b, list(shape), indices, parallel):
            yield indices

    def for_each(
        self,
        shape: Sequence[int],
        body: Callable[[list[SSAValue], int], None],
        vectorize: bool = True,
        origin: Sequence[SSAValue | int] | None = None,
        parallel: bool | None = None,
    ) -> None:
        """Call `body(indices, lanes)` for every element of `shape` (offset by
        `origin` when given): lanes is `self.lanes` over the vectorized part of
        the innermost dimension and 1 for the scalar tail (and everywhere when
        not vectorizing). Leading dims of size 1 (a batch of one) take no
        loop: the parallel loop is the first that has iterations to share."""
        shape = list(shape) or [1]
        inner = shape[-1]
        lanes = self.lanes
        vector_end = inner // lanes * lanes if vectorize else 0
        ones = next((d for d, size in enumerate(shape[:-1]) if size != 1), len(shape) - 1)
        if parallel is None:
            parallel = worth_parallel(shape[ones:]) and len(shape) - ones > 1

        def shifted(local: list[SSAValue]) -> list[SSAValue]:
            if origin is None:
                return local
            return [
                self.b.add(i, o) if not (isinstance(o, int) and o == 0) else i
                for i, o in zip(local, origin, strict=True)
            ]

        with self.loop_nest(shape[ones:-1], parallel) as loops:
            zero = [self.b.value(0, IndexType())] if ones else []
            outer = zero * ones + loops
            if vector_end:
                with self.b.make_for(0, vector_end, lanes) as j:
                    body(shifted([*outer, j]), lanes)
            if vector_end < inner:
                with self.b.make_for(vector_end, inner, 1) as j:
                    body(shifted([*outer, j]), 1)

    def for_each_flat(
        self,
        count: int,
        body: Callable[[list[SSAValue], int], None],
        vectorize: bool = True,
        lanes: int | None = None,
    ) -> None:
        """`for_each` over a 1-D range of `count` elements (an element-wise
        op on contiguous operands): when parallel, the range is split into
        `flat_chunks(count)` chunks of whole vectors, so every thread gets
        work whatever the tensor's outer dimension; the few elements after
        the last chunk run after it, vectors then a scalar tail. `lanes`
        overrides the target's f32 lanes (a byte kernel takes more)."""
        lanes = (lanes or self.lanes) if vectorize else 1
        chunks, chunk = flat_chunks(count, lanes)
        done = 0
        if chunks > 1:
            with self.b.make_for(0, chunks, 1, parallel=True) as c:
                start = self.b.mul(c, chunk)
                with self.b.make_for(0, chunk, lanes) as j:
                    body([self.b.add(start, j)], lanes)
            done = chunks * chunk
        vector_end = done + (count - done) // lanes * lanes
        if vector_end > done:
            with self.b.make_for(done, vector_end, lanes) as j:
                body([j], lanes)
        if vector_end < count:
            with self.b.make_for(vector_end, count, 1) as j:
                body([j], 1)

    # --- element access ------------------------------------------------------------

    def load(
        self,
        operand: Operand,
        indices: Sequence[SSAValue | int],
        lanes: int = 1,
        out_shape: Sequence[int] | None = None,
    ) -> SSAValue:
        """operand[indices] in the compute type. With `out_shape`, `indices`
        address that (broadcast) shape and are mapped numpy-style; a lane
        run along a broadcast dimension is a splatted scalar."""
        if out_shape is not None:
            indices = broadcast_indices(indices, out_shape, operand.shape)
        splat = lanes > 1 and (not operand.shape or operand.shape[-1] == 1)
        load_lanes = 1 if splat else lanes
        value = self.b.make_load(operand.value, self.physical(operand, indices), load_lanes)
        value = self.to_compute(value, operand.element)
        if splat:
            value = self.b.unary(tir.BroadcastOp, value, VectorType(value.type, [lanes]))
        return value

    def store(self, operand: Operand, indices: Sequence[SSAValue | int], value: SSAValue) -> None:
        lanes = tir.lanes_of(value.type)
        value = self.from_compute(value, operand.element)
        self.b.make_store(value, operand.value, self.physical(operand, indices), lanes)

    def physical(self, operand: Operand, indices: Sequence[SSAValue | int]) -> list[SSAValue]:
        """Logical indices -> indices of the buffer (blocked formats: div/mod)."""
        indices = self.b.indices(indices) if indices else [self.b.value(0, IndexType())]
        fmt = operand.type.encoding
        if not isinstance(fmt, graph.FormatAttr):
            return indices
        blocks = fmt.blocks()
        seen: dict[int, int] = {}
        physical = []
        for letter, size in graph.parse_layout(fmt.layout.data):
            dim = fmt.plain.data.index(letter.upper())
            sizes = blocks[dim]
            if size is None:  # outer: index // (product of all its blocks)
                physical.append(self.b.div(indices[dim], math.prod(sizes)))
            else:  # the n-th block: (index // product of the inner blocks) % size
                position = seen.get(dim, 0)
                seen[dim] = position + 1
                inner = math.prod(sizes[position + 1 :])
                physical.append(self.b.mod(self.b.div(indices[dim], inner), size))
        return physical

    # --- values ------------------------------------------------------------------------

    def to_compute(self, value: SSAValue, element: Attribute) -> SSAValue:
        target = compute_type(element)
        if target == element:
            return value
        return self.b.cast(value, tir.with_element(value.type, target))

    def from_compute(self, value: SSAValue, element: Attribute) -> SSAValue:
        if tir.element_of(value.type) == element:
            return value
        return self.b.cast(value, tir.with_element(value.type, element))

    def const(self, number: float | int, like: SSAValue) -> SSAValue:
        """A constant of `like`'s type (splatted for vectors)."""
        return self.b.const(number, like.type)

    def var(self, element: Attribute, initial: float | int) -> SSAValue:
        return self.b.make_var(element, self.b.const(initial, element))


@contextmanager
def _nest(
    b: TirBuilder, shape: list[int], indices: list[SSAValue], parallel: bool
) -> Iterator[None]:
    if not shape:
        yield
        return
    with b.make_for(0, shape[0], 1, parallel=parallel) as index:
        indices.append(index)
        with _nest(b, shape[1:], indices, False):
            yield


def worth_parallel(shape: Sequence[int]) -> bool:
    return bool(shape) and shape[0] > 1 and math.prod(shape) >= PARALLEL_MIN_ELEMENTS


PARALLEL_CHUNKS = 256
"""A flat parallel range is cut into up to this many chunks: the runtime
gives each thread a contiguous share (static schedule), so even 64 threads
get 4 chunks each and the imbalance stays under a chunk."""


def flat_chunks(count: int, lanes: int) -> tuple[int, int]:
    """(chunks, elements per chunk) for a parallel 1-D range: chunks of
    whole vectors, at least PARALLEL_MIN_ELEMENTS / 4 elements each (so a
    chunk outweighs its call), (1, count) when not worth parallelizing."""
    if count < PARALLEL_MIN_ELEMENTS:
        return 1, count
    chunk = max(PARALLEL_MIN_ELEMENTS // 4, -(-count // PARALLEL_CHUNKS))
    chunk = -(-chunk // lanes) * lanes
    return max(1, count // chunk), chunk


def worth_parallel_work(iterations: int, work: int) -> bool:
    """A parallel loop of `iterations` pays off when the whole nest under it
    touches `work` elements (a reduction reads far more than it writes)."""
    return iterations > 1 and work >= PARALLEL_MIN_ELEMENTS


def broadcast_indices(
    indices: Sequence[SSAValue | int], out_shape: Sequence[int], shape: Sequence[int]
) -> list:
    """Indices into `shape` for an element at `indices` of the numpy
    broadcast `out_shape`: right-aligned, size-1 dimensions pinned to 0."""
    offset = len(out_shape) - len(shape)
    return [0 if dim == 1 else indices[offset + d] for d, dim in enumerate(shape)]


def is_vectorizable(*operands: Operand) -> bool:
    """Vector loads/stores need plain layouts, and no i1 (LLVM packs i1 vectors in memory)."""
    return all(not o.blocked and o.element != i1 for o in operands)


def is_float_element(element: Attribute) -> bool:
    return tir.is_float(element)


def is_integer_element(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element != i1
