"""What the JIT links into every program: the native runtime's LLVM IR
(`native.ll`, the bodies of the symbol table in symbols.py) and the shared
libraries it calls. Kept apart from the symbol table so that loading
machine code (a compile-cache hit) needs neither xDSL nor the dialects."""

from __future__ import annotations

from importlib import resources

NATIVE_LIBRARIES = ("libgcc_s.so.1",)
"""Shared libraries the native runtime calls into: libgcc (__extendhfsf2 /
__truncsfhf2, which LLVM calls for f16 conversions on CPUs, or targets,
without F16C). The thread pool is our own (threadpool.ll): no libgomp."""

NUM_THREADS_GLOBAL = "sc_num_threads"
"""The i32 global of the native runtime holding the thread count (0 = all cores)."""


def native_source() -> str:
    """The LLVM IR implementing every symbol of the table."""
    return resources.files("graphcompiler.runtime").joinpath("native.ll").read_text()
