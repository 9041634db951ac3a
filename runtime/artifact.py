"""Loading an ahead-of-time artifact (driver/artifact.py builds them): a
compiled graph as a shared library, opened with ctypes and called like the
`CompiledGraph` it was saved from, in a process with only numpy and the
standard library (no xDSL, no llvmlite, no compiler).

After its ELF image an artifact carries a footer, which the loader reads
before it opens the library, so that a damaged, truncated or foreign file
is an `ArtifactError` rather than a crash:

    metadata (JSON) | metadata length u32 | CRC-32 of the image u32 |
    image length u64 | MAGIC (16 bytes)

The metadata holds the entry's signature and the /proc/cpuinfo flags the
code was compiled for; a host that lacks one is refused, naming it.
Artifacts pickle to their bytes, so compiled graphs pass to
multiprocessing, concurrent.futures and distributed engines; unpickled, the
bytes are opened from memory (memfd) or a temporary file.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import tempfile
import threading
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from graphcompiler.ir.bf16 import bf16_bits, from_bf16_bits
from graphcompiler.ir.narrow_floats import FORMATS
from graphcompiler.runtime.direct_call import DirectCall, aligned_empty, inputs_in_order

FORMAT = "graphcompiler-artifact/2"
MAGIC = b"\x7fGCARTIFACT\x00v1\x00\x00"
_TAIL = struct.Struct("<IIQ16s")  # metadata length, CRC-32, image length, MAGIC
_CHUNK = 1 << 22


class ArtifactError(ValueError):
    """A file that is not a loadable artifact for this host, or one that
    could not be built."""


def _crc32(path: Path, length: int) -> int:
    crc = 0
    with path.open("rb") as file:
        while length > 0:
            chunk = file.read(min(_CHUNK, length))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            length -= len(chunk)
    return crc


def footer(image: Path, info: Mapping[str, Any]) -> bytes:
    """The footer to append to the linked library `image`."""
    size = image.stat().st_size
    text = json.dumps(info).encode()
    return text + _TAIL.pack(len(text), _crc32(image, size), size, MAGIC)


def read_metadata(path: Path, verify: bool = True) -> dict[str, Any]:
    """The metadata of the artifact at `path`, after checking its footer,
    length and (with `verify`) checksum."""
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            if size < _TAIL.size:
                raise ArtifactError(f"{path}: not a graphcompiler artifact (too short)")
            file.seek(size - _TAIL.size)
            text_length, crc, image_length, magic = _TAIL.unpack(file.read(_TAIL.size))
            if magic != MAGIC:
                file.seek(0)
                if file.read(4) == b"\x7fELF":
                    raise ArtifactError(
                        f"{path}: no artifact footer: a truncated artifact, or a library "
                        "graphcompiler did not save"
                    )
                raise ArtifactError(f"{path}: not a graphcompiler artifact (not a shared library)")
            if image_length + text_length + _TAIL.size != size:
                raise ArtifactError(f"{path}: truncated or damaged artifact (its sizes disagree)")
            file.seek(image_length)
            text = file.read(text_length)
    except OSError as error:
        raise ArtifactError(f"{path}: cannot read the artifact: {error.strerror}") from None
    if verify and _crc32(path, image_length) != crc:
        raise ArtifactError(f"{path}: damaged artifact (checksum mismatch)")
    try:
        info = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise ArtifactError(f"{path}: damaged artifact (unreadable metadata)") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        found = info.get("format") if isinstance(info, dict) else None
        raise ArtifactError(f"{path}: artifact format {found!r}, this loader reads {FORMAT!r}")
    return info


def host_cpu_flags() -> set[str]:
    """The CPU's flags as /proc/cpuinfo lists them (empty where it does not)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


class _Library:
    """The opened library, as DirectCall looks an entry up."""

    def __init__(self, path: str):
        self.cdll = ctypes.CDLL(path, mode=os.RTLD_LOCAL)

    def function_address(self, name: str) -> int:
        return ctypes.cast(getattr(self.cdll, name), ctypes.c_void_p).value


class LoadedGraph:
    """A saved compiled graph, called as the CompiledGraph was: inputs by
    position or by name, `out=` to write into given arrays, and
    `set_num_threads`. Pickles to the artifact's bytes."""

    def __init__(self, path: str | Path, *, verify: bool = True, _bytes: bytes | None = None):
        self.path = Path(path)
        info = read_metadata(self.path, verify)
        if info.get("machine") not in (None, os.uname().machine):
            raise ArtifactError(
                f"{self.path}: built for {info['machine']}, this host is {os.uname().machine}"
            )
        self._bytes = _bytes
        self.entry: str = info["entry"]
        self.input_names = [a["name"] for a in info["inputs"]]
        self._inputs, self._outputs = info["inputs"], info["outputs"]
        self.arena_bytes: int | None = info["arena_bytes"]
        self.metadata = info
        try:
            self._library = _Library(os.path.abspath(self.path))  # dlopen searches for bare names
        except OSError as error:
            raise ArtifactError(f"{self.path}: cannot open the library: {error}") from None
        missing_features = self._library.cdll.gc_model_missing_cpu_features
        missing_features.restype = ctypes.c_char_p
        missing = missing_features().decode()
        if missing:
            raise ArtifactError(
                f"{self.path}: this CPU lacks {missing}, which the artifact was compiled for "
                f"(cpu {info['cpu']})"
            )
        self._library.cdll.gc_model_init()
        self._set_threads = self._library.cdll.gc_model_set_num_threads
        plain = all(not a["encoding"] and a["shape"] for a in (*self._inputs, *self._outputs))
        specs = [
            [(tuple(a["shape"]), np.dtype(a["dtype"])) for a in side]
            for side in (self._inputs, self._outputs)
        ]
        self._direct = DirectCall(
            self._library, "gc_model_entry", *(specs if plain else (None, None)), self.arena_bytes
        )
        self._threads_lock = threading.Lock()
        count = len(self._inputs) + len(self._outputs) + (self.arena_bytes is not None)
        prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * count)
        self._entry = prototype(self._library.function_address("gc_model_entry"))

    def __call__(self, *inputs: Any, out: Any = None, **named: Any) -> Any:
        bound = self._bind(inputs, named)
        fast = self._direct.try_call(tuple(bound), out)
        if fast is not None:
            return fast
        arrays = [
            self._native(a, spec, "input") for a, spec in zip(bound, self._inputs, strict=True)
        ]
        given = self._given_outputs(out)
        outputs = [
            self._native(array, spec, "out= array") if array is not None and not spec["encoding"]
            else aligned_empty(tuple(spec["shape"]) or (1,), buffer_dtype(spec))
            for array, spec in zip(given, self._outputs, strict=True)
        ]  # fmt: skip
        addresses = [a.ctypes.data for a in (*arrays, *outputs)]
        if self.arena_bytes is None:
            self._entry(*addresses)
        else:
            arena = self._direct.take_arena()
            try:
                self._entry(*addresses, arena.ctypes.data)
            finally:
                self._direct.give_arena(arena)
        results = []
        for array, result, spec in zip(given, outputs, self._outputs, strict=True):
            value = _CODECS[spec["encoding"]][1](result) if spec["encoding"] else result
            value = value.reshape(spec["shape"])
            if array is not None:
                np.copyto(array, value)
                value = array
            results.append(value)
        return results[0] if len(results) == 1 else tuple(results)

    def _bind(self, positional: tuple, named: Mapping[str, Any]) -> list[Any]:
        inputs = inputs_in_order(self.entry, self.input_names, positional, named)
        if len(inputs) != len(self._inputs):
            raise ValueError(f"@{self.entry} takes {len(self._inputs)} inputs, got {len(inputs)}")
        return inputs

    def _given_outputs(self, out: Any) -> list[Any]:
        if out is None:
            return [None] * len(self._outputs)
        arrays = [out] if isinstance(out, np.ndarray) else list(out)
        if len(arrays) != len(self._outputs):
            raise ValueError(
                f"out= gives {len(arrays)} arrays, @{self.entry} has {len(self._outputs)} outputs"
            )
        for array, spec in zip(arrays, self._outputs, strict=True):
            self._check(array, spec, "out= array", writable=True)
        return arrays

    def _check(self, array: Any, spec: dict, what: str, writable: bool = False) -> None:
        label = f"{what} {spec['name']!r} of @{self.entry}"
        if not isinstance(array, np.ndarray):
            raise ValueError(f"{label} must be a numpy array, got {type(array).__name__}")
        accepted = {spec["dtype"]}
        if spec["encoding"] and not writable:
            accepted.add(buffer_dtype(spec).name)
        if array.dtype.name not in accepted:
            raise ValueError(f"{label} has dtype {array.dtype}, expected {spec['dtype']}")
        if list(array.shape) != spec["shape"]:
            raise ValueError(f"{label} has shape {list(array.shape)}, expected {spec['shape']}")
        if writable and not (array.flags.writeable and array.flags.c_contiguous):
            raise ValueError(f"{label} must be writable and C-contiguous")

    def _native(self, array: Any, spec: dict, what: str) -> np.ndarray:
        """The buffer the code reads: C-contiguous, bf16 as its bits, a float8
        as its code, rank 0 as one element."""
        self._check(array, spec, what, writable=what != "input")
        if spec["encoding"] and array.dtype != buffer_dtype(spec):
            array = _CODECS[spec["encoding"]][0](array)
        return np.ascontiguousarray(array).reshape(tuple(spec["shape"]) or (1,))

    def set_num_threads(self, count: int) -> None:
        """Threads for parallel loops: 1..4096, or 0 for all cores (ValueError otherwise)."""
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 4096:
            raise ValueError(
                f"num_threads must be an integer from 1 to 4096, or 0 for all cores; got {count!r}"
            )
        with self._threads_lock:
            self._set_threads(count)

    def to_bytes(self) -> bytes:
        """The artifact's bytes (what it pickles to)."""
        if self._bytes is None:
            self._bytes = self.path.read_bytes()
        return self._bytes

    def __reduce__(self) -> tuple:
        return loads, (self.to_bytes(),)

    def __repr__(self) -> str:
        return f"<LoadedGraph @{self.entry} from {self.path}>"


_CODECS = {"bf16": (bf16_bits, from_bf16_bits)} | {
    name: (fmt.encode, fmt.decode) for name, fmt in FORMATS.items()
}
"""An encoded element type's (encode, decode): float32 values <-> buffer contents."""


def buffer_dtype(spec: dict) -> np.dtype:
    """The dtype of an argument's buffer (float32 outside, codes inside for an encoded one)."""
    if not spec["encoding"]:
        return np.dtype(spec["dtype"])
    return np.dtype(np.uint16) if spec["encoding"] == "bf16" else np.dtype(np.uint8)


def load(path: str | Path, *, verify: bool = True) -> LoadedGraph:
    """The artifact at `path` as a callable graph; `verify=False` skips the
    checksum (reading the whole file once) for a file known to be intact."""
    return LoadedGraph(path, verify=verify)


def loads(data: bytes) -> LoadedGraph:
    """An artifact from its bytes (an unpickled graph): opened from an
    anonymous in-memory file where the OS has them, else a temporary file
    removed once opened."""
    if hasattr(os, "memfd_create"):
        descriptor = os.memfd_create("graphcompiler-artifact")
        with open(descriptor, "wb", closefd=False) as file:
            file.write(data)
        # the descriptor stays open: the path names it for as long as the process lives
        return LoadedGraph(f"/proc/self/fd/{descriptor}", _bytes=data)
    with tempfile.NamedTemporaryFile(suffix=".so", delete=False) as file:
        file.write(data)
    try:
        return LoadedGraph(file.name, _bytes=data)
    finally:
        os.unlink(file.name)
