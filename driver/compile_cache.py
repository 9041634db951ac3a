"""The compile cache: a graph compiled once is not compiled again.

`graphcompiler.compile` keeps what the default pipeline produced for a
graph (the stage texts, the LLVM IR, the big constants set aside from it,
the arena size and the machine code) in memory and in a directory
(`~/.cache/graphcompiler`, or `$GC_CACHE_DIR`; `GC_DISABLE_CACHE=1` or
`compile(cache=False)` turn it off). Entries are keyed by everything the
result depends on: the graph with its bound constants, the entry, the
target (ISA, CPU, LLVM features, the kernel choices measured on this
machine: runtime/tuning.py), and a fingerprint of the compiler's own
source files (so an edited or upgraded compiler never reads an old entry).
When compile() read the source itself (an .onnx or .mlir path, or text),
the arguments as given key the entry instead (`source_key`: the file's
bytes, the entry, constants and input shapes, with the same compiler and
target parts): they determine the graph, which then is neither printed nor
its weights hashed for the key. A hit skips the pass pipeline, LLVM's optimization and code generation:
the machine code is loaded as it was made. A source alias
(`source-<hash>.json`, keyed by the compile's arguments as given) points
at an entry so that warm_start.py finds it without parsing the graph.

On disk an entry is JSON, one .npz of raw bytes (the machine code; no
pickle) and, when the graph has big constants, a .data file of them that a
hit memory-maps (a model's weights: read and copied three times from the
.npz, they were most of a hit). Writes go through a temporary file and a
rename, so concurrent compiles never see half an entry. The machine code is code this user's process made, read
back from this user's cache directory, as any JIT cache does.

Every file (entry, alias) is written and read through
runtime/object_cache.py, which verifies it by a content hash (the .data
file once per version of it).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphcompiler.runtime.brgemm_routines import KERNEL_KINDS, kind_of
from graphcompiler.runtime.content_digest import (
    content_digest,
    content_digests,
    content_name_digest,
)
from graphcompiler.runtime.microkernels import GeneratedKernel
from graphcompiler.runtime.object_cache import (
    map_verified,
    read_verified,
    write_mapped,
    write_verified,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from xdsl.dialects.builtin import ModuleOp


@dataclass
class CachedCompile:
    graph: str
    graph_dot: str
    tir: str
    llvm_ir: str
    microkernels: tuple[GeneratedKernel, ...]
    arena_bytes: int | None
    external_data: dict[str, bytes | memoryview]
    """From disk: views of the mapped .data file, alive while they are."""
    object_code: bytes


MEMORY_ENTRIES = 32
"""Entries kept in memory (most recently used), besides the directory."""

MEMORY_ENTRY_MAX_BYTES = 64 * 1024 * 1024
"""Bigger entries (a model's weights) are only kept on disk."""

_memory: OrderedDict[tuple[Path, str], CachedCompile] = OrderedDict()


TEXT_ELIDE_ABOVE = 4096
"""`compiled.graph` and `.tir` print constants of more elements as
`dense_resource<__elided__>` (as --mlir-elide-elementsattrs-if-larger):
printing a model's weights in full was a fifth of its compile time."""


def module_text(module: ModuleOp) -> str:
    """The module as `compiled.graph` and `.tir` show it, and as keys hash it."""
    from graphcompiler.ir.pass_manager import PrintOptions  # xDSL: not on a warm start

    return PrintOptions(elide_elements_above=TEXT_ELIDE_ABOVE).text(module)


def graph_texts(module: ModuleOp) -> tuple[str, str]:
    """A graph module as `compiled.graph` shows it, and its Graphviz DOT."""
    from graphcompiler.passes.view_op_graph import graph_dot

    return module_text(module), graph_dot(module)


UNPRINTED = ("// not printed: the process printing it failed", "")
"""`graph_texts` where the child printing them died."""


@functools.cache
def compiler_fingerprint() -> str:
    """A hash of the package's source files (names, sizes, mtimes), its
    tests, caches and hidden folders (.git, a .venv) left out, not even
    walked: a cache hit in a new process computes this first. (Sorting
    os.walk's generator walked them all before it could prune: 0.13 s.)"""
    root = Path(__file__).parents[1]  # the package
    digest = hashlib.sha256()
    folders = [""]
    while folders:
        relative = folders.pop()
        with os.scandir(root / relative) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        for entry in entries:
            path = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                skipped = entry.name.startswith(".") or entry.name == "__pycache__"
                if not skipped and path != "test":
                    folders.append(path)
            elif entry.name.endswith((".py", ".ll")):
                stat = entry.stat()
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cache_key(module: ModuleOp, entry: str) -> str:
    """A hash of what the compiled code depends on. The module is printed
    with big constants elided (printing a model's weights costs seconds)
    and their bytes are hashed directly, in the order they appear."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    digest = hashlib.sha256()
    for part in (*_machine_parts(), entry, module_text(module)):
        digest.update(part.encode())
        digest.update(b"\0")
    elided = [
        attribute.data.data
        for op in module.walk()
        for attribute in (*op.properties.values(), *op.attributes.values())
        if isinstance(attribute, DenseIntOrFPElementsAttr) and len(attribute) > TEXT_ELIDE_ABOVE
    ]
    for constant_digest in content_digests(elided):
        digest.update(constant_digest)
    return digest.hexdigest()


def _machine_parts() -> tuple[str, ...]:
    """The compiler and the target a key depends on besides the graph."""
    import llvmlite.binding as llvm

    from graphcompiler.runtime.amx_tiles import enable_amx
    from graphcompiler.runtime.jit.engine import machine_features
    from graphcompiler.runtime.tuning import tuning_digest
    from graphcompiler.target.description import get_target

    target = get_target().name
    return (
        compiler_fingerprint(),
        target,
        llvm.get_host_cpu_name(),
        machine_features(),
        tuning_digest() if target == "host" else "",  # the choices measured here
        # code on AMX tiles stops a process Linux did not lend them to
        "amx" if enable_amx() else "",
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
        digest.update(content_digest(array.view(np.uint8).reshape(-1)))
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
        object_code = blobs[OBJECT_CODE].tobytes()
    external: dict[str, bytes | memoryview] = {}
    if meta["external"]:
        data = map_verified(directory / f"{key}.data")
        if data is None:
            return None
        for name, (offset, length) in meta["external"].items():
            external[name] = data[offset : offset + length]
    entry = CachedCompile(
        meta["graph"], meta["graph_dot"], meta["tir"], meta["llvm_ir"],
        tuple(KERNEL_KINDS[kind].from_fields(fields) for kind, fields in meta["microkernels"]),
        meta["arena_bytes"],
        external, object_code,
    )  # fmt: skip
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


class EntryWriter:
    """Writes a compile's entry (best effort: a read-only or full disk only
    loses the cache). The .data file of its big constants is written on a
    thread from the moment they are known, while LLVM builds the machine
    code in its helper processes (BERT-base's: 1.2 s of hashing and writing
    440 MB, which compile() spent after LLVM). `finish` writes the machine
    code, then the JSON that makes it an entry: the entry is complete
    when compile() returns."""

    def __init__(self, directory: Path, key: str, external_data: dict[str, bytes | memoryview]):
        self.directory, self.key = directory, key
        self.names = sorted(external_data)
        self._offsets: list[int] | None = None  # None: the .data file could not be written
        blobs = [external_data[name] for name in self.names]
        self._sizes = [len(blob) for blob in blobs]
        self._thread = threading.Thread(
            target=self._write_data, args=(blobs,), name="gc-cache-data"
        )
        self._thread.start()

    def _write_data(self, blobs: list[bytes | memoryview]) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / f"{self.key}.data"
            digests = [content_name_digest(name) for name in self.names]
            self._offsets = write_mapped(path, blobs, digests) if blobs else []
        except OSError:
            pass

    def mapped_data(self) -> dict[str, memoryview] | None:
        """The constants as the .data file holds them, memory-mapped, once it
        is written (None if it could not be): the JIT binds them where they
        lie, instead of copying the compiler's bytes to aligned memory, and
        the process keeps them as evictable pages of the page cache."""
        self._thread.join()
        if not self._offsets:
            return None
        data = map_verified(self.directory / f"{self.key}.data")
        if data is None:
            return None
        return {
            name: data[offset : offset + size]
            for name, offset, size in zip(self.names, self._offsets, self._sizes, strict=True)
        }

    def finish(self, entry: CachedCompile) -> None:
        """Keep `entry` (of the constants given) in memory and on disk."""
        self._thread.join()
        _remember(self.directory, self.key, entry)
        if self._offsets is None:
            return
        archive = io.BytesIO()
        np.savez(archive, **{OBJECT_CODE: np.frombuffer(entry.object_code, np.uint8)})
        meta = {
            "graph": entry.graph,
            "graph_dot": entry.graph_dot,
            "tir": entry.tir,
            "llvm_ir": entry.llvm_ir,
            "microkernels": [[kind_of(kernel), kernel.fields()] for kernel in entry.microkernels],
            "arena_bytes": entry.arena_bytes,
            "external": {
                name: [offset, len(entry.external_data[name])]
                for name, offset in zip(self.names, self._offsets, strict=True)
            },
        }
        try:
            write_verified(self.directory / f"{self.key}.npz", archive.getbuffer())
            write_verified(self.directory / f"{self.key}.json", json.dumps(meta).encode())
        except OSError:
            pass
