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
the machine code is loaded as it was made.

On disk an entry is JSON plus one .npz of raw bytes (no pickle). Writes go
through a temporary file and a rename, so concurrent compiles never see
half an entry. The machine code is code this user's process made, read
back from this user's cache directory, as any JIT cache does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp

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
    tests and hidden folders (.git) left out."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for pattern in ("*.py", "*.ll"):
        for path in sorted(root.rglob(pattern)):
            parts = path.relative_to(root).parts
            if parts[0] == "test" or any(part.startswith(".") for part in parts):
                continue
            stat = path.stat()
            digest.update(f"{'/'.join(parts)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cache_key(module: ModuleOp, entry: str) -> str:
    """A hash of what the compiled code depends on. The module is printed
    with big constants elided (printing a model's weights costs seconds)
    and their bytes are hashed directly, in the order they appear."""
    import llvmlite.binding as llvm

    from graphcompiler.compiler import TEXT_ELIDE_ABOVE, _text
    from graphcompiler.runtime.jit import _machine_features
    from graphcompiler.target import get_target

    digest = hashlib.sha256()
    for part in (
        compiler_fingerprint(),
        get_target().name,
        llvm.get_host_cpu_name(),
        _machine_features(),
        entry,
        _text(module),
    ):
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


def load(directory: Path, key: str) -> CachedCompile | None:
    """The entry for `key`, from memory or the directory, or None
    (missing or unreadable: compile again)."""
    if (directory, key) in _memory:
        _memory.move_to_end((directory, key))
        return _memory[directory, key]
    try:
        meta = json.loads((directory / f"{key}.json").read_text())
        with np.load(directory / f"{key}.npz") as blobs:
            external = {name: blobs[name].tobytes() for name in meta["external"]}
            object_code = blobs[OBJECT_CODE].tobytes()
        entry = CachedCompile(
            meta["graph"], meta["graph_dot"], meta["tir"], meta["llvm_ir"], meta["arena_bytes"],
            external, object_code,
        )  # fmt: skip
    except (OSError, ValueError, KeyError):
        return None
    _remember(directory, key, entry)
    return entry


OBJECT_CODE = "__object_code__"
"""The .npz member holding the machine code (global names never start with __)."""


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
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _write_atomically(directory / f"{key}.npz", lambda f: np.savez(f, **blobs))
        _write_atomically(directory / f"{key}.json", lambda f: f.write(json.dumps(meta).encode()))
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
