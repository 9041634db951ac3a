"""`#tir.blob`: a big compile-time constant (packed weights) held as the
buffer the JIT binds, not as bytes in an attribute.

A packed weight used to be a `dense<...>` initializer: its bytes object was
made from the packed array (one copy of the weights), then copied again to
a 64-byte boundary when the JIT bound it (runtime/jit/shared_data.py): 0.9 s
of CPU, and twice the weights' memory, in BERT-base's 3.2 s compile. A blob
holds the packed array itself, contiguous, read-only and DATA_ALIGNMENT-
aligned: the LLVM program declares it as an external global, and the JIT
binds that global to the blob's memory as it lies (as MLIR's
`dense_resource` keeps big constants out of the IR, in blobs the context
owns).

Its text names the buffer (`#tir.blob<"blob3">`); the text parses back in
the process that holds the blob, and elsewhere is an error saying so, since
the bytes are not in it. Two blobs are equal when they are the same buffer.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

DATA_ALIGNMENT = 64
"""Bytes: a cache line, and as aligned as any global the lowering emits
(the JIT binds data aligned so in place, else copies it)."""

BLOB_MIN_BYTES = 1 << 20
"""Packed constants from this size on are blobs; smaller ones stay dense
initializers, printed in the IR text (every test's small weights): the
copies saved are the big tensors' (the weights of a model's layers)."""


def aligned_zeros(shape: Sequence[int], dtype: np.dtype | type) -> np.ndarray:
    """np.zeros(shape, dtype), its first byte on a DATA_ALIGNMENT boundary:
    a packing routine fills it, and a blob then holds it without a copy."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(count + DATA_ALIGNMENT, np.uint8)
    offset = -raw.ctypes.data % DATA_ALIGNMENT
    return raw[offset : offset + count].view(dtype).reshape(shape)


class ConstantBlob:
    """A read-only, aligned, contiguous array under a name unique in the process."""

    _names = itertools.count()
    _live: weakref.WeakValueDictionary[str, ConstantBlob] = weakref.WeakValueDictionary()

    def __init__(self, values: np.ndarray):
        """`values` (any layout) as a blob: held where it lies when it is
        contiguous and aligned (aligned_zeros' arrays), else copied once
        into such an array. The caller no longer writes to it."""
        if not values.flags.c_contiguous or values.ctypes.data % DATA_ALIGNMENT:
            copy = aligned_zeros(values.shape, values.dtype)
            copy[...] = values
            values = copy
        self.array = values.view()
        self.array.flags.writeable = False
        self.name = f"blob{next(self._names)}"
        self._live[self.name] = self

    @property
    def data(self) -> memoryview:
        """The bytes, as a flat memoryview of the array (no copy)."""
        return memoryview(self.array.reshape(-1).view(np.uint8))

    @classmethod
    def named(cls, name: str) -> ConstantBlob | None:
        """The live blob of that name, if this process holds one."""
        return cls._live.get(name)


@irdl_attr_definition
class BlobAttr(Data[ConstantBlob]):
    """A tensor global's initial value held as a ConstantBlob."""

    name = "tir.blob"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlobAttr) and other.data is self.data

    def __hash__(self) -> int:
        return id(self.data)

    @property
    def array(self) -> np.ndarray:
        return self.data.array

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ConstantBlob:
        with parser.in_angle_brackets():
            position = parser.pos
            name = parser.parse_str_literal()
        blob = ConstantBlob.named(name)
        if blob is None:
            parser.raise_error(
                f'#tir.blob<"{name}">: no such constant in this process (a blob\'s bytes '
                "are not in the text; lower from the graph again)",
                position,
                parser.pos,
            )
        return blob

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.data.name)
