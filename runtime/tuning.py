"""Kernel choices measured on this machine, kept in the cache directory.

Some choices cannot be derived from the target description: which of three
convolution kernels runs a layer fastest flips between an AVX2 Zen 3 and an
AVX-512 Skylake for the same shapes (the transposed GEMM won 1.6x on one
and lost 1.5x on the other). As ATLAS does at install time and oneDNN with
its heuristics tables, `graphcompiler.tune` (`gc-run --tune`) times the
candidates of a model's layers once per machine and records the fastest
here: `<cache>/tuning/<machine>.json`, the machine being the CPU's name,
LLVM's features, the cache sizes and the cores this process may use.

Lowering for the host target consults the table; a fixed named target
(`GC_TARGET=avx2`, the lit tests') never does, so tests give the same code
on every host. Without an entry, lowering keeps its derived rule. The
table's contents are part of every compile-cache key, so a new choice is
compiled, never served stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from contextvars import ContextVar
from pathlib import Path

from graphcompiler.runtime.object_cache import cache_directory
from graphcompiler.target.description import Target, host_target

_VERSION = 1


@functools.cache
def machine_id() -> str:
    """What the measurements depend on: CPU, features, caches, cores."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    target = host_target()
    parts = (
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
        f"{target.l1_bytes}/{target.l2_bytes}/{target.l3_bytes}",
        str(target.cores),
    )
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]


class TuningTable:
    """Choices by kind ("conv2d") and signature (the op's shapes and
    window), each with the milliseconds measured for every candidate."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            return  # absent or damaged: no choices (tuning again rewrites it)
        if isinstance(stored, dict) and stored.get("version") == _VERSION:
            entries = stored.get("entries")
            self.entries = entries if isinstance(entries, dict) else {}

    def choice(self, kind: str, signature: str) -> str | None:
        entry = self.entries.get(f"{kind}:{signature}")
        choice = entry.get("choice") if isinstance(entry, dict) else None
        return choice if isinstance(choice, str) else None

    def record(self, kind: str, signature: str, milliseconds: dict[str, float]) -> str:
        """Keep the fastest candidate of `milliseconds`; returns it."""
        choice = min(milliseconds, key=milliseconds.__getitem__)
        rounded = {name: round(ms, 4) for name, ms in milliseconds.items()}
        self.entries[f"{kind}:{signature}"] = {"choice": choice, "ms": rounded}
        return choice

    def save(self) -> None:
        """Written through a temporary file and a rename (concurrent
        readers never see half a table)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": _VERSION, "entries": self.entries}, indent=1, sort_keys=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(temporary, self.path)
        _loaded.pop(self.path, None)

    def digest(self) -> str:
        """A hash of the choices (what the compiled code depends on)."""
        choices = sorted((key, entry.get("choice")) for key, entry in self.entries.items()
                         if isinstance(entry, dict))  # fmt: skip
        return hashlib.sha256(json.dumps(choices).encode()).hexdigest() if choices else ""


_loaded: dict[Path, tuple[int, TuningTable]] = {}


def table_path(directory: Path | None = None) -> Path | None:
    """This machine's table in `directory` (default: the cache directory;
    None when the cache is off)."""
    directory = directory if directory is not None else cache_directory(None)
    return None if directory is None else directory / "tuning" / f"{machine_id()}.json"


def host_table() -> TuningTable | None:
    """This machine's table, read again when the file changed."""
    path = table_path()
    if path is None:
        return None
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    cached = _loaded.get(path)
    if cached is None or cached[0] != stamp:
        cached = (stamp, TuningTable(path))
        _loaded[path] = cached
    return cached[1]


forced_conv_path: ContextVar[str | None] = ContextVar("forced_conv_path", default=None)
"""Tuning's override while it measures a candidate: every convolution that
can takes this path (conv_gemm.py), and none is channel-blocked
(graph-block-layout), because the ones tuning meets are plain in their model.
Alone, a 1x1 convolution with whole blocks of channels was blocked, every
candidate ran that kernel, and MobileNet-v2 tuned by that noise ran 1.3x
slower."""


def tuned_choice(target: Target, kind: str, signature: str) -> str | None:
    """The measured choice for the host target, else None (derive it)."""
    if target.name != "host":
        return None
    table = host_table()
    return table.choice(kind, signature) if table else None


def tuning_digest() -> str:
    """The host table's digest ("" without one): part of cache keys."""
    table = host_table()
    return table.digest() if table else ""
