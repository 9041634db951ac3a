"""The compile cache: a graph compiled once is not compiled again.

`graphcompiler.compile(..., cache=True)` (or the `GC_CACHE_DIR`
environment variable) keeps what the default pipeline produced for a graph
(the stage texts, the LLVM IR, the big constants set aside from it and the
arena size) in a directory, keyed by everything the result depends on: the
graph with its bound constants, the entry, the target (ISA, CPU, LLVM
features), and a fingerprint of the compiler's own source files (so an
edited or upgraded compiler never reads an old entry). A hit skips the
pass pipeline (the bulk of compiling a large graph); the JIT still runs.

Entries are JSON plus one .npz of raw bytes: nothing executable is read
back. Writes go through a temporary file and a rename, so concurrent
compiles never see half an entry.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_DIRECTORY = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "graphcompiler"


@dataclass
class CachedCompile:
    graph: str
    graph_dot: str
    tir: str
    llvm_ir: str
    arena_bytes: int | None
    external_data: dict[str, bytes]


def cache_directory(cache: bool | str | Path | None) -> Path | None:
    """Where `compile(cache=...)` keeps entries: None means GC_CACHE_DIR
    (no cache when it is unset or empty), True the default directory."""
    if cache is None:
        cache = os.environ.get("GC_CACHE_DIR") or False
    if cache is False:
        return None
    return DEFAULT_DIRECTORY if cache is True else Path(cache)


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the package's source files (names, sizes, mtimes)."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".ll") and "test" not in path.relative_to(root).parts[:1]:
            stat = path.stat()
            digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cache_key(module_text: str, entry: str) -> str:
    import llvmlite.binding as llvm

    from graphcompiler.runtime.jit import _machine_features
    from graphcompiler.target import get_target

    digest = hashlib.sha256()
    for part in (
        compiler_fingerprint(),
        get_target().name,
        llvm.get_host_cpu_name(),
        _machine_features(),
        entry,
        module_text,
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def load(directory: Path, key: str) -> CachedCompile | None:
    """The entry for `key`, or None (missing or unreadable: compile again)."""
    try:
        meta = json.loads((directory / f"{key}.json").read_text())
        with np.load(directory / f"{key}.npz") as blobs:
            external = {name: blobs[name].tobytes() for name in meta["external"]}
        return CachedCompile(
            meta["graph"],
            meta["graph_dot"],
            meta["tir"],
            meta["llvm_ir"],
            meta["arena_bytes"],
            external,
        )
    except (OSError, ValueError, KeyError):
        return None


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
