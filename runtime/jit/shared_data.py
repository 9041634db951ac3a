"""Constant tensors the JIT'd code reads, one copy per process.

The compiler leaves big constants (weights, packed weights) out of the
machine code as external globals named by their content (`gc.data.<digest>`,
lowering/llvm/translate.py). Each engine binds those names to the buffers
kept here before it links its code: every compiled program that holds the
same bytes, such as the specializations of one model for several input
shapes, reads the same memory. A buffer lives while an engine using it does.
"""

from __future__ import annotations

import threading
import weakref

import llvmlite.binding as llvm
import numpy as np

DATA_ALIGNMENT = 64
"""Bytes: a cache line, and as aligned as any global the lowering emits."""

_buffers: weakref.WeakValueDictionary[str, np.ndarray] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def bind(external_data: dict[str, bytes | memoryview]) -> list[np.ndarray]:
    """Make each name resolve to a buffer holding its bytes (reused when the
    process has one already); the buffers, which the caller keeps alive
    for as long as its code may read them. Read-only data already on a
    DATA_ALIGNMENT boundary (the compile cache's memory-mapped .data file)
    is used where it lies: copying a model's weights was most of a cache hit."""
    kept = []
    with _lock:
        for name, data in external_data.items():
            buffer = _buffers.get(name)
            if buffer is None or buffer.nbytes != len(data):
                buffer = _aligned(data)
                _buffers[name] = buffer
            llvm.add_symbol(name, buffer.ctypes.data)
            kept.append(buffer)
    return kept


def resident_bytes() -> int:
    """The bytes of constant data the process holds now (for tests and reports)."""
    with _lock:
        return sum(buffer.nbytes for buffer in _buffers.values())


def _aligned(data: bytes | memoryview) -> np.ndarray:
    given = np.frombuffer(data, np.uint8)
    if not given.flags.writeable and given.ctypes.data % DATA_ALIGNMENT == 0:
        return given
    raw = np.empty(len(given) + DATA_ALIGNMENT, np.uint8)
    offset = -raw.ctypes.data % DATA_ALIGNMENT
    buffer = raw[offset : offset + len(given)]
    buffer[:] = given
    buffer.flags.writeable = False
    return buffer
