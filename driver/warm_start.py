"""A compile the cache already holds, without importing the compiler.

Importing xDSL and our dialects takes ~0.3 s, most of a cache hit in a new
process; reading and importing an ONNX model took seconds more (2.6 s for
ResNet-50). `graphcompiler.compile` therefore first keys its arguments as
given (`SourceAlias`: the .mlir text, or an .onnx file's bytes by their
SHA-256, with the entry, constants and input shapes) and, when an earlier
compile stored an alias for them, loads that entry's machine code straight
away. The `WarmGraph` it returns serves the common call
(runtime/direct_call.py); anything else (bf16 or rank-0 arguments, named
inputs, conversions, `signature`, `input_types`, ...) builds the full
CompiledGraph on first use, from the same cache entry, and hands over to it.
An ONNX model with symbolic dims is remembered by its dims: the
SpecializingGraph it gives looks each set of input shapes up the same way,
and reads the model only for a set the cache lacks. A file the cache never
hashed (object_cache.hashed_before) cannot have an alias yet: its compile
starts at once, and its digest, taken meanwhile, keys what it stores.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from graphcompiler.driver import compile_cache
from graphcompiler.driver.specializing import SpecializingGraph
from graphcompiler.runtime.direct_call import DirectCall, inputs_in_order
from graphcompiler.runtime.object_cache import (
    cache_directory,
    file_digest,
    file_digest_soon,
    file_identity,
    hashed_before,
    remembered_file_digest,
)


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


@dataclasses.dataclass
class SourceAlias:
    """A compile's arguments as given, which name its cache entry."""

    directory: Path
    source: object
    given_identity: str | Future[str]
    """The .mlir text, or "onnx <SHA-256 of the file's bytes>"; for a file
    never hashed before, the future digest (taken beside the compile)."""
    entry: str
    constants: Mapping[str, Any] | None
    input_shapes: Mapping[str, Sequence[int]] | None
    """For an ONNX model only: the shapes given (loading ignores them otherwise)."""
    file_stat: list[int] | None = None
    """With a future digest: the file's identity when the alias was made."""

    @classmethod
    def of(
        cls,
        source: object,
        entry: str,
        constants: Mapping[str, Any] | None,
        input_shapes: Mapping[str, Sequence[int]] | None,
        cache: object,
    ) -> SourceAlias | None:
        """None when the cache is off, or for a module, an onnx.ModelProto or a missing file."""
        directory = cache_directory(cache)
        if directory is None:
            return None
        if isinstance(source, str | Path) and str(source).endswith(".onnx"):
            path, shapes = Path(source), dict(input_shapes or {})
            try:  # the bytes, not the protobuf: remembered by the file's identity
                digest = remembered_file_digest(path, directory)
                if digest is None and not hashed_before(path, directory):
                    stat = file_identity(path)
                    pending = file_digest_soon(path, directory)
                    return cls(directory, source, pending, entry, constants, shapes, stat)
                identity = f"onnx {digest or file_digest(path, directory)}"
            except OSError:
                return None  # the compiler reports it
            return cls(directory, source, identity, entry, constants, shapes)
        text = source_text(source)
        return None if text is None else cls(directory, source, text, entry, constants, None)

    @property
    def identity(self) -> str:
        given = self.given_identity
        return given if isinstance(given, str) else f"onnx {given.result()}"

    @property
    def digest_pending(self) -> bool:
        """A new file's digest is still being taken: nothing in the cache can
        be keyed by it yet, so there is nothing to look up."""
        given = self.given_identity
        return isinstance(given, Future) and not given.done()

    def key_when_hashed(self) -> str | None:
        """`key`, once the file's digest is taken; None if the file changed
        meanwhile (or could not be read): then no entry is stored under it."""
        try:
            key = self.key
        except OSError:
            return None
        return key if self.unchanged() else None

    @functools.cached_property
    def key(self) -> str:
        identity = self.identity
        if self.input_shapes is not None:
            shapes = sorted((n, [int(s) for s in shape]) for n, shape in self.input_shapes.items())
            identity = f"{identity} {json.dumps(shapes)}"
        return compile_cache.source_key(identity, self.entry, self.constants)

    def with_shapes(self, shapes: Mapping[str, Sequence[int]]) -> SourceAlias:
        """The alias of one specialization of an ONNX model with symbolic
        dims: the shapes it is called with, then those given to compile."""
        return dataclasses.replace(self, input_shapes={**shapes, **(self.input_shapes or {})})

    def remember(self, compiled: Any) -> None:
        """After a compile through the default pipeline: store this alias of
        its cache entry, when every argument travels as is (so that a
        WarmGraph can serve calls) and the source did not change meanwhile."""
        plain = compiled._plain_signature
        if plain is None or not compiled.cache_key or not self.unchanged():
            return
        inputs, outputs = ([[list(shape), dtype.str] for shape, dtype in specs] for specs in plain)
        record = {
            "key": compiled.cache_key,
            "entry": self.entry,
            "input_names": compiled.input_names,
            "inputs": inputs,
            "outputs": outputs,
            "arena_bytes": compiled.arena_bytes,
        }
        compile_cache.store_alias(self.directory, self.key, record)

    def remember_dims(self, dims: Mapping[str, Sequence[int | str] | None]) -> None:
        """For an ONNX model with symbolic dims: its inputs' dims, from which
        a later compile builds the SpecializingGraph without reading it."""
        if self.unchanged():
            plain = {
                name: None if d is None else [s if isinstance(s, str) else int(s) for s in d]
                for name, d in dims.items()
            }  # fmt: skip
            compile_cache.store_alias(self.directory, self.key, {"dims": plain})

    def unchanged(self) -> bool:
        """The source still is what the key was computed from: an alias
        stored for a file rewritten during the compile would name the wrong code."""
        if self.file_stat is not None:  # hashed after the alias was made: from then on
            try:
                return file_identity(Path(self.source)) == self.file_stat  # type: ignore[arg-type]
            except OSError:
                return False
        again = SourceAlias.of(self.source, self.entry, None, None, self.directory)
        return again is not None and again.identity == self.identity


def cached_graph(
    source: object,
    entry: str,
    num_threads: int | None,
    constants: Mapping[str, Any] | None,
    cache: object,
    full_compile: Callable[[], Any],
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> WarmGraph | SpecializingGraph | None:
    """The compiled graph from the cache by its source alias, or None.
    `full_compile()` compiles the same arguments with the compiler: what a
    WarmGraph hands over to, and the SpecializingGraph for new shapes."""
    try:
        alias = SourceAlias.of(source, entry, constants, input_shapes, cache)
        if alias is None or alias.digest_pending:
            return None
        record = compile_cache.load_alias(alias.directory, alias.key)
        if record is not None and "dims" in record:
            return _specializing(alias, record["dims"], num_threads, full_compile)
        return _warm(alias, record, num_threads, full_compile) if record else None
    except (KeyError, TypeError, ValueError):
        return None  # odd constants, an alias of another version: the compiler says or does it


def _warm(alias: SourceAlias, record: dict, num_threads: int | None, full) -> WarmGraph | None:
    cached = compile_cache.load(alias.directory, record["key"])
    return None if cached is None else WarmGraph(record, cached, num_threads, full)


def _specializing(
    alias: SourceAlias, dims: dict, num_threads: int | None, full_compile: Callable[[], Any]
) -> SpecializingGraph:
    """The model's SpecializingGraph, each set of shapes looked up by its
    own alias; the compiler's (`full_compile()`, which reads the model) is
    built for the first set the cache lacks, and compiles it."""
    full = functools.cache(full_compile)

    def compile_for(shapes: Mapping[str, Sequence[int]], constants: dict) -> Any:
        def compiled() -> Any:
            return full().specialization(shapes, constants)

        if constants:  # specialized on input values: the compiler's own (its cache has it)
            return compiled()
        shaped = alias.with_shapes(shapes)
        try:
            record = compile_cache.load_alias(shaped.directory, shaped.key)
            warm = _warm(shaped, record, num_threads, compiled) if record else None
        except (KeyError, TypeError, ValueError):
            warm = None
        return warm if warm is not None else compiled()

    return SpecializingGraph(dims, compile_for, num_threads)


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
        ordered = inputs_in_order(self.entry, self.input_names, inputs, named)
        result = self._direct.try_call(tuple(ordered), out)
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

    def __reduce__(self) -> tuple:
        """Pickles as the full graph does, to its artifact's bytes (the
        default would pickle the engine's ctypes handles, and fail)."""
        return self._full.__reduce__()

    @property
    def asm(self) -> str:
        from graphcompiler.runtime.jit.engine import assembly

        return assembly(self.llvm_ir, self.microkernels)
