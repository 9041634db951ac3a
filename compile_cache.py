"""The compile cache: a graph compiled once is not compiled again.

`graphcompiler.compile` keeps what the default pipeline produced for a
graph (the stage texts, the LLVM IR, the big constants set aside from it,
the arena size and the machine code) in memory and in a directory
(`~/.cache/graphcompiler`, or `$GC_CACHE_DIR`; `GC_DISABLE_CACHE=1` or
`compile(cache=False)` turn it off). Entries are keyed by everything the
result depends on: the graph with its bound constants, the entry, the
target (ISA, CPU, LLVM features), and a fingerprint of the compiler's own
source files (so an edited or upgraded compiler never reads an old entry).
A hit skips the pass pipeline, LLVM's optimization and code generation:
the machine code is loaded as it was made. A source alias
(`source-<hash>.json`, keyed by the compile's arguments as given) points
at an entry so that warm_start.py finds it without parsing the graph.

Machine code that does not depend on a graph (the thread pool's) is kept
in the same directory by `cached_object`, keyed by its source and target.

On disk an entry is JSON plus one .npz of raw bytes (no pickle). Writes go
through a temporary file and a rename, so concurrent compiles never see
half an entry. The machine code is code this user's process made, read
back from this user's cache directory, as any JIT cache does.

Every file (entry, alias, object) is a header, then its payload: a magic
naming the layout, the payload's length and a SHA-256 of the file's name
and payload. `read_verified` checks it before JSON, NumPy or LLVM see a
byte: LLVM's object loader trusts its input (one zeroed block of the
pool's object crashed every later process), and a valid file copied over
another name would be another graph's code. A damaged file is deleted,
so that what is built again replaces it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import struct
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from xdsl.dialects.builtin import ModuleOp

DEFAULT_DIRECTORY = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "graphcompiler"


@dataclass
class CachedCompile:
    graph: str
    graph_dot: str
    tir: str
    llvm_ir: str
    arena_bytes: int | None
    external_data: dict[str, bytes]
    object_code: bytes


MEMORY_ENTRIES = 32
"""Entries kept in memory (most recently used), besides the directory."""

MEMORY_ENTRY_MAX_BYTES = 64 * 1024 * 1024
"""Bigger entries (a model's weights) are only kept on disk."""

_memory: OrderedDict[tuple[Path, str], CachedCompile] = OrderedDict()


def cache_directory(cache: bool | str | Path | None) -> Path | None:
    """Where `compile(cache=...)` keeps entries: a path; True for
    $GC_CACHE_DIR or the default; False for none; None (the default) as
    True unless GC_DISABLE_CACHE is set (to anything but 0)."""
    if cache is None:
        cache = os.environ.get("GC_DISABLE_CACHE", "0") in ("", "0")
    if cache is False:
        return None
    if cache is True:
        return Path(os.environ.get("GC_CACHE_DIR") or DEFAULT_DIRECTORY)
    return Path(cache)


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the package's source files (names, sizes, mtimes), its
    tests, caches and hidden folders (.git) left out (not even walked: a
    cache hit in a new process computes this first)."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for folder, subfolders, files in sorted(os.walk(root)):
        relative = Path(folder).relative_to(root)
        subfolders[:] = [
            name for name in subfolders
            if not name.startswith(".") and name != "__pycache__" and not (relative == Path() and name == "test")
        ]  # fmt: skip
        for name in sorted(files):
            if name.endswith((".py", ".ll")):
                stat = os.stat(os.path.join(folder, name))
                path = (relative / name).as_posix()
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cache_key(module: ModuleOp, entry: str) -> str:
    """A hash of what the compiled code depends on. The module is printed
    with big constants elided (printing a model's weights costs seconds)
    and their bytes are hashed directly, in the order they appear."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    from graphcompiler.compiler import TEXT_ELIDE_ABOVE, _text

    digest = hashlib.sha256()
    for part in (*_machine_parts(), entry, _text(module)):
        digest.update(part.encode())
        digest.update(b"\0")
    for op in module.walk():
        for attribute in (*op.properties.values(), *op.attributes.values()):
            if (
                isinstance(attribute, DenseIntOrFPElementsAttr)
                and len(attribute) > TEXT_ELIDE_ABOVE
            ):
                digest.update(hashlib.sha256(attribute.data.data).digest())
    return digest.hexdigest()


def _machine_parts() -> tuple[str, ...]:
    """The compiler and the target a key depends on besides the graph."""
    import llvmlite.binding as llvm

    from graphcompiler.runtime.jit import _machine_features
    from graphcompiler.target import get_target

    return (
        compiler_fingerprint(),
        get_target().name,
        llvm.get_host_cpu_name(),
        _machine_features(),
    )


def source_key(text: str, entry: str, constants: Mapping[str, Any] | None) -> str:
    """A hash of a compile's arguments as given: the .mlir text, the entry
    and the bound constants (names, dtypes, shapes, bytes), with the
    compiler and target. It finds a source alias (see store_alias) without
    parsing anything."""
    digest = hashlib.sha256()
    for part in (*_machine_parts(), entry, text):
        digest.update(part.encode())
        digest.update(b"\0")
    for name, value in sorted((constants or {}).items()):
        array = np.ascontiguousarray(value)
        digest.update(f"{name}:{array.dtype.str}:{array.shape}\0".encode())
        digest.update(hashlib.sha256(array.view(np.uint8).reshape(-1)).digest())
    return digest.hexdigest()


def store_alias(directory: Path, source: str, record: dict) -> None:
    """Remember, for the source key `source`, the entry's key and the
    compiled entry's signature (JSON-able): a later compile of the same
    arguments loads the machine code without the compiler (warm_start.py)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_verified(directory / f"source-{source}.json", json.dumps(record).encode())
    except OSError:
        pass


def load_alias(directory: Path, source: str) -> dict | None:
    data = read_verified(directory / f"source-{source}.json")
    return None if data is None else json.loads(data)


def load(directory: Path, key: str) -> CachedCompile | None:
    """The entry for `key`, from memory or the directory, or None
    (missing or unreadable: compile again)."""
    if (directory, key) in _memory:
        _memory.move_to_end((directory, key))
        return _memory[directory, key]
    text = read_verified(directory / f"{key}.json")
    archive = read_verified(directory / f"{key}.npz") if text is not None else None
    if archive is None:
        return None
    meta = json.loads(text)
    with np.load(io.BytesIO(archive)) as blobs:
        external = {name: blobs[name].tobytes() for name in meta["external"]}
        object_code = blobs[OBJECT_CODE].tobytes()
    entry = CachedCompile(
        meta["graph"], meta["graph_dot"], meta["tir"], meta["llvm_ir"], meta["arena_bytes"],
        external, object_code,
    )  # fmt: skip
    _remember(directory, key, entry)
    return entry


OBJECT_CODE = "__object_code__"
"""The .npz member holding the machine code (global names never start with __)."""

_OBJECTS_MAGIC = b"GCOBJ3\0\0"
_LENGTH = struct.Struct("<Q")


def pack_objects(objects: list[bytes]) -> bytes:
    """A compiled graph's machine code as one blob: the objects of its
    program's parts and of its runtime (runtime/jit.py builds them apart,
    at once), each after its length, after their count."""
    lengths = b"".join(_LENGTH.pack(len(code)) for code in objects)
    return _OBJECTS_MAGIC + _LENGTH.pack(len(objects)) + lengths + b"".join(objects)


def unpack_objects(blob: bytes) -> list[bytes]:
    """The objects of `pack_objects`; ValueError for anything else."""
    if not blob.startswith(_OBJECTS_MAGIC) or len(blob) < len(_OBJECTS_MAGIC) + _LENGTH.size:
        raise ValueError("not graphcompiler's object code")
    (count,) = _LENGTH.unpack_from(blob, len(_OBJECTS_MAGIC))
    offset = len(_OBJECTS_MAGIC) + _LENGTH.size
    if len(blob) < offset + count * _LENGTH.size:
        raise ValueError("truncated object code")
    lengths = [_LENGTH.unpack_from(blob, offset + i * _LENGTH.size)[0] for i in range(count)]
    offset += count * _LENGTH.size
    if len(blob) != offset + sum(lengths):
        raise ValueError("truncated object code")
    objects = []
    for length in lengths:
        objects.append(blob[offset : offset + length])
        offset += length
    return objects


def cached_object(name: str, key: Sequence[str], build: Callable[[], bytes]) -> bytes:
    """Machine code that depends only on `key` (source text, CPU, LLVM...)
    rather than on a graph, such as the thread pool's: read back from the
    cache directory (GC_CACHE_DIR, on unless GC_DISABLE_CACHE), else built
    and kept there as `<name>-<hash of key>.o`."""
    directory = cache_directory(None)
    if directory is None:
        return build()
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:32]
    path = directory / f"{name}-{digest}.o"
    code = read_verified(path)
    if code is not None:
        return code
    code = build()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_verified(path, code)
    except OSError:
        pass
    return code


_FILE_MAGIC = b"GCFILE1\0"
"""The layout of a cache file's header; a file of another layout is damaged."""

_HEADER = struct.Struct("<8sQ32s")
"""Magic, payload length, SHA-256 of the file's name and payload."""


def _digest(path: Path, payload: bytes | memoryview) -> bytes:
    """The name is hashed too: a valid file under another name (another
    graph's entry, another kind of file) does not verify."""
    digest = hashlib.sha256(path.name.encode() + b"\0")
    digest.update(payload)
    return digest.digest()


def write_verified(path: Path, payload: bytes | memoryview) -> None:
    """`payload` under the header `read_verified` checks, atomically."""
    header = _HEADER.pack(_FILE_MAGIC, len(payload), _digest(path, payload))
    _write_atomically(path, lambda f: f.writelines((header, payload)))


def read_verified(path: Path) -> bytes | None:
    """The payload `write_verified` put in `path`, or None: missing, or
    damaged (any other layout, length or hash), then deleted."""
    try:
        with open(path, "rb") as file:
            header, payload = file.read(_HEADER.size), file.read()
            identity = os.fstat(file.fileno())
    except OSError:
        return None
    if len(header) == _HEADER.size:
        magic, length, digest = _HEADER.unpack(header)
        if magic == _FILE_MAGIC and length == len(payload) and digest == _digest(path, payload):
            return payload
    try:  # unless another process has renamed a good one over it meanwhile
        now = os.stat(path)
        if (now.st_dev, now.st_ino) == (identity.st_dev, identity.st_ino):
            path.unlink()
    except OSError:
        pass
    return None


def _remember(directory: Path, key: str, entry: CachedCompile) -> None:
    size = len(entry.object_code) + sum(map(len, entry.external_data.values()))
    if size > MEMORY_ENTRY_MAX_BYTES:
        return
    _memory[directory, key] = entry
    while len(_memory) > MEMORY_ENTRIES:
        _memory.popitem(last=False)


def store(directory: Path, key: str, entry: CachedCompile) -> None:
    """Write the entry (best effort: a read-only or full disk only loses the cache)."""
    meta = {
        "graph": entry.graph,
        "graph_dot": entry.graph_dot,
        "tir": entry.tir,
        "llvm_ir": entry.llvm_ir,
        "arena_bytes": entry.arena_bytes,
        "external": sorted(entry.external_data),
    }
    blobs = {name: np.frombuffer(data, np.uint8) for name, data in entry.external_data.items()}
    blobs[OBJECT_CODE] = np.frombuffer(entry.object_code, np.uint8)
    _remember(directory, key, entry)
    archive = io.BytesIO()
    np.savez(archive, **blobs)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_verified(directory / f"{key}.npz", archive.getbuffer())
        write_verified(directory / f"{key}.json", json.dumps(meta).encode())
    except OSError:
        pass


def _write_atomically(path: Path, write) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
