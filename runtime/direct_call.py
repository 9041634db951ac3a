"""The common call of a compiled graph, in numpy and ctypes only.

Arrays of exactly the entry's dtypes and shapes (C-contiguous, aligned) go
straight to the machine code as addresses, outputs are allocated 64-byte
aligned (big ones recycled), and the intermediates' arena comes from a free
list. `CompiledGraph` takes this path first and falls back to its general
one (conversions, bf16, rank 0, named inputs, messages); a compile-cache
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

RECYCLE_OUTPUTS_FROM_BYTES = 1 << 20
KEPT_OUTPUTS = 2
"""Big outputs: the last KEPT_OUTPUTS results per output are kept, and one
no longer referenced elsewhere is handed out again (see new_output)."""


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
        self._kept_outputs: dict[int, list[np.ndarray]] = {}

    @functools.cached_property
    def _call(self) -> Any:
        """The entry as a ctypes function of one pointer per array (and the arena)."""
        count = len(self.inputs or ()) + len(self.outputs or ()) + (self.arena_bytes is not None)
        prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * count)
        return prototype(self._engine.function_address(self._entry))

    def try_call(self, inputs: tuple, out: Any) -> Any:
        """The outputs (one array or a tuple), or None when any argument is
        not exactly what the code takes (the caller's general path then
        converts or explains)."""
        if self.inputs is None or len(inputs) != len(self.inputs):
            return None
        if out is None:
            outputs = [self.new_output(i, *spec) for i, spec in enumerate(self.outputs)]
        else:
            outputs = [out] if isinstance(out, np.ndarray) else list(out)
            if len(outputs) != len(self.outputs) or not all(
                isinstance(o, np.ndarray) and o.flags.writeable for o in outputs
            ):
                return None
        addresses = []
        for array, (shape, dtype) in zip(
            [*inputs, *outputs], [*self.inputs, *self.outputs], strict=True
        ):
            if not (
                type(array) is np.ndarray
                and array.dtype == dtype
                and array.shape == shape
                and array.flags.c_contiguous
            ):
                return None
            address = array.__array_interface__["data"][0]
            if address % dtype.alignment:
                return None
            addresses.append(address)
        if self.arena_bytes is None:
            self._call(*addresses)
        else:
            arena = self.take_arena()
            try:
                self._call(*addresses, arena.ctypes.data)
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

    def new_output(self, index: int, shape: tuple, dtype: np.dtype) -> np.ndarray:
        """A fresh output array; a big one reuses the memory of an earlier
        result nobody holds any more (no view, no reference: its reference
        count is ours alone), as a caching allocator would: a new 64 MiB
        array costs ~16k page faults, a third of a bandwidth-bound call."""
        if math.prod(shape) * dtype.itemsize < RECYCLE_OUTPUTS_FROM_BYTES:
            return aligned_empty(shape, dtype)
        kept = self._kept_outputs.setdefault(index, [])
        for position in range(len(kept)):
            # the list's and the argument's references, to the array and to the
            # aligned memory it views (a user's views refer to that memory)
            if sys.getrefcount(kept[position]) == 2 and sys.getrefcount(kept[position].base) == 2:
                array = kept.pop(position)
                kept.append(array)  # most recently used last
                return array
        array = aligned_empty(shape, dtype)
        kept.append(array)
        if len(kept) > KEPT_OUTPUTS:
            kept.pop(0)
        return array


ALIGN_FROM_BYTES = 4096
"""Smaller outputs take numpy's 16-byte alignment: aligning costs ~2 us a
call, more than the straddling stores of a few cache lines."""


def aligned_empty(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """np.empty on a 64-byte boundary: numpy gives 16, and a kernel's vector
    stores into a 16-byte-aligned output each straddle two cache lines
    (measured 5-7% on matmuls, varying with where the array landed)."""
    dtype = np.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    if size < ALIGN_FROM_BYTES:
        return np.empty(shape, dtype)
    return aligned_bytes(size).view(dtype).reshape(shape)


def aligned_bytes(count: int) -> np.ndarray:
    """`count` bytes starting on a 64-byte boundary (what the planner assumes)."""
    raw = np.empty(count + 64, np.int8)
    offset = -raw.ctypes.data % 64
    return raw[offset : offset + count]


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
