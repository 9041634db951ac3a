"""The common call of a compiled graph, in numpy and ctypes only.

Arrays of exactly the entry's dtypes and shapes (C-contiguous, aligned) go
straight to the machine code as addresses, outputs are allocated 64-byte
aligned (and recycled), and the intermediates' arena comes from a free
list. `CompiledGraph` takes this path first (inputs by position or by
name, put in order) and falls back to its general one (conversions, bf16,
rank 0, messages); a compile-cache
hit serves calls with it before anything of the compiler is imported.
"""

from __future__ import annotations

import ctypes
import functools
import math
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

Spec = tuple[tuple[int, ...], np.dtype]
"""An argument as the machine code takes it: (shape, numpy dtype)."""

KEPT_OUTPUTS = 2
"""Outputs allocated aligned (ALIGN_FROM_BYTES on): the last KEPT_OUTPUTS
results per output are kept, and one no longer referenced elsewhere is
handed out again (see new_output)."""


class DirectCall:
    """`entry` of `engine` called with array addresses. `inputs`/`outputs`:
    the plain signature, or None when some argument does not travel as is
    (bf16 bits, a rank-0 buffer): then `try_call` always declines."""

    def __init__(
        self,
        engine: Any,
        entry: str,
        inputs: list[Spec] | None,
        outputs: list[Spec] | None,
        arena_bytes: int | None,
    ):
        self.inputs, self.outputs, self.arena_bytes = inputs, outputs, arena_bytes
        self._engine = engine  # keeps the machine code alive
        self._entry = entry
        self.free_arenas: list[np.ndarray] = []
        self._arena_lock = threading.Lock()
        self._kept_outputs: dict[int, list[tuple[np.ndarray, int]]] = {}
        self._outputs_lock = threading.Lock()  # concurrent calls never share a kept one

    @functools.cached_property
    def _call(self) -> Any:
        """The entry as a ctypes function of one pointer per array (and the arena)."""
        count = len(self.inputs or ()) + len(self.outputs or ()) + (self.arena_bytes is not None)
        prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * count)
        return prototype(self._engine.function_address(self._entry))

    def try_call(self, inputs: tuple, out: Any) -> Any:
        """The outputs (one array or a tuple), or None when any argument is
        not exactly what the code takes (the caller's general path then
        converts or explains). Every microsecond here is a small graph's:
        outputs this call allocates are not checked again."""
        if self.inputs is None or len(inputs) != len(self.inputs):
            return None
        addresses = []
        for array, (shape, dtype) in zip(inputs, self.inputs, strict=True):
            address = _checked_address(array, shape, dtype)
            if address is None:
                return None
            addresses.append(address)
        if out is None:
            outputs = []
            for index, (shape, dtype) in enumerate(self.outputs):
                array, address = self.new_output(index, shape, dtype)
                outputs.append(array)
                addresses.append(address)
        else:
            outputs = [out] if isinstance(out, np.ndarray) else list(out)
            if len(outputs) != len(self.outputs):
                return None
            for array, (shape, dtype) in zip(outputs, self.outputs, strict=True):
                address = _checked_address(array, shape, dtype, writeable=True)
                if address is None:
                    return None
                addresses.append(address)
        if self.arena_bytes is None:
            self._call(*addresses)
        else:
            arena = self.take_arena()
            try:
                self._call(*addresses, address_of(arena))
            finally:
                self.free_arenas.append(arena)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def take_arena(self) -> np.ndarray:
        """A free arena (64-byte aligned), or a new one when all are in use
        (concurrent calls from several Python threads); give it back with
        give_arena."""
        with self._arena_lock:
            if self.free_arenas:
                return self.free_arenas.pop()
        return aligned_bytes(self.arena_bytes)

    def give_arena(self, arena: np.ndarray) -> None:
        self.free_arenas.append(arena)

    def new_output(self, index: int, shape: tuple, dtype: np.dtype) -> tuple[np.ndarray, int]:
        """A fresh output array and its address; an aligned one reuses the
        memory of an earlier result nobody holds any more (no view, no
        reference: its reference count is ours alone), as a caching
        allocator would: a new 64 MiB array costs ~16k page faults, a third
        of a bandwidth-bound call, and a new aligned 8 KiB one 7 us, a third
        of a small graph's call."""
        if math.prod(shape) * dtype.itemsize < ALIGN_FROM_BYTES:
            return _aligned_empty_at(shape, dtype)
        with self._outputs_lock:
            kept = self._kept_outputs.setdefault(index, [])
            for position in range(len(kept)):
                # references to the array: the list's tuple, `array` and the
                # argument; to the aligned memory it views: the array's and the
                # argument (a user's views refer to that memory)
                array, address = kept[position]
                if sys.getrefcount(array) == 3 and sys.getrefcount(array.base) == 2:
                    kept.append(kept.pop(position))  # most recently used last
                    return array, address
            fresh = _aligned_empty_at(shape, dtype)
            kept.append(fresh)
            if len(kept) > KEPT_OUTPUTS:
                kept.pop(0)
            return fresh


ALIGN_FROM_BYTES = 4096
"""Smaller outputs take numpy's 16-byte alignment: aligning costs ~2 us a
call, more than the straddling stores of a few cache lines."""


def aligned_empty(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """np.empty on a 64-byte boundary: numpy gives 16, and a kernel's vector
    stores into a 16-byte-aligned output each straddle two cache lines
    (measured 5-7% on matmuls, varying with where the array landed)."""
    return _aligned_empty_at(shape, np.dtype(dtype))[0]


def _aligned_empty_at(
    shape: tuple, dtype: np.dtype, smallest: int = ALIGN_FROM_BYTES
) -> tuple[np.ndarray, int]:
    """aligned_empty's array and its address (aligned from `smallest` bytes)."""
    size = math.prod(shape) * dtype.itemsize
    if size < smallest:
        array = np.empty(shape, dtype)
        return array, address_of(array)
    raw = np.empty(size + 64, np.uint8)
    start = address_of(raw)
    offset = -start % 64
    return np.ndarray(shape, dtype, raw, offset), start + offset


def aligned_bytes(count: int) -> np.ndarray:
    """`count` bytes starting on a 64-byte boundary (what the planner assumes)."""
    return _aligned_empty_at((count,), np.dtype(np.int8), smallest=0)[0]


_BYTE = ctypes.c_char


def address_of(array: np.ndarray) -> int:
    """Where a C-contiguous array's data starts: ctypes' view of the buffer
    numpy lends (about 1 us), else, for a read-only or empty array, numpy's
    array interface (about 5 us: it builds a dict of every attribute)."""
    try:
        return ctypes.addressof(_BYTE.from_buffer(array))
    except (TypeError, ValueError):
        return array.__array_interface__["data"][0]


def _checked_address(
    array: Any, shape: tuple, dtype: np.dtype, writeable: bool = False
) -> int | None:
    """The address of `array` if it is exactly an argument of `shape` and
    `dtype` (an ndarray, C-contiguous, aligned for its type; `writeable`
    for an output), else None."""
    if not (
        type(array) is np.ndarray
        and array.dtype == dtype
        and array.shape == shape
        and array.flags.c_contiguous
        and (array.flags.writeable or not writeable)
    ):
        return None
    address = address_of(array)
    return None if address % dtype.alignment else address


def inputs_in_order(
    entry: str, input_names: Sequence[str], positional: tuple, named: Mapping[str, Any]
) -> list[Any]:
    """A call's inputs in argument order: positional ones first, then those
    given by argument name; an unknown name, an input given twice or one
    missing after a name is a ValueError (the count is the caller's check)."""
    inputs = list(positional)
    if not named:
        return inputs
    unknown = sorted(set(named) - set(input_names))
    if unknown:
        raise ValueError(
            f"@{entry} has no input {', '.join(map(repr, unknown))} "
            f"(inputs: {', '.join(input_names)})"
        )
    twice = [n for n in input_names[: len(inputs)] if n in named]
    if twice:
        raise ValueError(f"input {twice[0]!r} is given both by position and by name")
    missing = [n for n in input_names[len(inputs) :] if n not in named]
    if missing:
        raise ValueError(f"@{entry} is missing inputs: {', '.join(missing)}")
    return inputs + [named[n] for n in input_names[len(inputs) :]]
