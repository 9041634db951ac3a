"""A compile the cache already holds, without importing the compiler.

Importing xDSL and our dialects takes ~0.3 s, most of a cache hit in a new
process. `graphcompiler.compile` therefore first hashes its arguments as
given (the .mlir text, entry, constants: compile_cache.source_key) and,
when an earlier compile stored an alias for them, loads that entry's
machine code straight away. The `WarmGraph` it returns serves the common
call (runtime/direct_call.py); anything else (bf16 or rank-0 arguments,
named inputs, conversions, `signature`, `input_types`, ...) builds the full
CompiledGraph on first use, from the same cache entry, and hands over to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from graphcompiler.driver import compile_cache
from graphcompiler.runtime.direct_call import DirectCall
from graphcompiler.runtime.object_cache import cache_directory


def source_text(source: object) -> str | None:
    """The .mlir text `source` stands for (as loading.load_module reads
    it), or None for a module, an ONNX model or a missing file."""
    if not isinstance(source, str | Path) or str(source).endswith(".onnx"):
        return None
    text = str(source)
    if isinstance(source, Path) or ("\n" not in text and text.endswith(".mlir")):
        try:
            return Path(source).read_text()
        except OSError:
            return None  # the compiler reports it
    return text


def cached_graph(
    source: object,
    entry: str,
    num_threads: int | None,
    constants: Mapping[str, Any] | None,
    cache: object,
    full_compile: Callable[[], Any],
) -> WarmGraph | None:
    """The compiled graph from the cache by its source alias, or None.
    `full_compile()` builds the CompiledGraph a WarmGraph hands over to."""
    directory = cache_directory(cache)
    text = source_text(source) if directory else None
    if text is None:
        return None
    try:
        source_key = compile_cache.source_key(text, entry, constants)
        record = compile_cache.load_alias(directory, source_key)
        cached = compile_cache.load(directory, record["key"]) if record else None
        if cached is None:
            return None
        return WarmGraph(record, cached, num_threads, full_compile)
    except (KeyError, TypeError, ValueError):
        return None  # odd constants, an alias of another version: the compiler says or does it


def remember(
    compiled: Any, source: object, entry: str, constants: Mapping | None, cache: object
) -> None:
    """After a compile through the default pipeline: store the source alias
    of its cache entry (when the cache is on and every argument travels as
    is, so that a WarmGraph can serve calls)."""
    directory = cache_directory(cache)
    text = source_text(source) if directory else None
    plain = compiled._plain_signature
    if text is None or plain is None or not compiled.cache_key:
        return
    inputs, outputs = ([[list(shape), dtype.str] for shape, dtype in specs] for specs in plain)
    record = {
        "key": compiled.cache_key,
        "entry": entry,
        "input_names": compiled.input_names,
        "inputs": inputs,
        "outputs": outputs,
        "arena_bytes": compiled.arena_bytes,
    }
    compile_cache.store_alias(directory, compile_cache.source_key(text, entry, constants), record)


class WarmGraph:
    """A cached compiled graph: the stage texts, the machine code, the plain
    call; every other CompiledGraph attribute comes from the full one,
    built on first use."""

    cache_hit = True
    cast_inputs = False

    def __init__(self, record: dict, cached: compile_cache.CachedCompile, num_threads, full):
        from graphcompiler.runtime.jit.engine import JitEngine

        self.entry: str = record["entry"]
        self.input_names: list[str] = list(record["input_names"])
        self.arena_bytes: int | None = cached.arena_bytes
        self.graph, self.tir, self.llvm_ir = cached.graph, cached.tir, cached.llvm_ir
        self.microkernels = cached.microkernels
        self._graph_dot = cached.graph_dot
        self.engine = JitEngine(self.llvm_ir, num_threads, cached.external_data, cached.object_code)
        inputs, outputs = (
            [(tuple(shape), np.dtype(dtype)) for shape, dtype in record[side]]
            for side in ("inputs", "outputs")
        )
        self._direct = DirectCall(self.engine, self.entry, inputs, outputs, self.arena_bytes)
        self._make_full = full
        self._threads: int | None = None

    def __call__(self, *inputs: Any, out: Any = None, **named: Any) -> Any:
        if not named:
            result = self._direct.try_call(inputs, out)
            if result is not None:
                return result
        return self._full(*inputs, out=out, **named)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._full, name)

    @property
    def _full(self) -> Any:
        full = self.__dict__.get("_full_graph")
        if full is None:
            full = self.__dict__["_full_graph"] = self._make_full()
            if self._threads is not None:
                full.set_num_threads(self._threads)
        return full

    def set_num_threads(self, count: int) -> None:
        """Threads for parallel loops: 1..4096, or 0 for all cores (ValueError otherwise)."""
        self.engine.set_num_threads(count)
        self._threads = count
        if "_full_graph" in self.__dict__:
            self.__dict__["_full_graph"].set_num_threads(count)

    def graph_dot(self) -> str:
        return self._graph_dot

    @property
    def asm(self) -> str:
        from graphcompiler.runtime.jit.engine import assembly

        return assembly(self.llvm_ir, self.microkernels)
