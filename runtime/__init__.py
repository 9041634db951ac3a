"""JIT engine, runtime symbols, parallel call and memory for generated code,
and the loader of saved artifacts: `graphcompiler.runtime.load("model.so")`
(runtime/artifact.py, numpy and the standard library only)."""

from typing import Any


def __getattr__(name: str) -> Any:
    """`load` and `loads`, imported on first use (the JIT's modules do not need them)."""
    if name in ("load", "loads"):
        from graphcompiler.runtime import artifact

        return getattr(artifact, name)
    raise AttributeError(f"module 'graphcompiler.runtime' has no attribute {name!r}")
