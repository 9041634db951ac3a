"""graphcompiler's graph-level and tir-level passes, one module per pass."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.passes import ModulePass

    from graphcompiler.registry import Registry

# pass name -> (module under graphcompiler.passes, class); imported when used.
PASSES = {
    "tir-outline-parallel": ("tir_outline_parallel", "TirOutlineParallelPass"),
}


def _loader(module: str, attribute: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(f"graphcompiler.passes.{module}"), attribute)


def register_passes(registry: Registry) -> None:
    """Register graphcompiler's own passes and named pipelines with the tools."""
    for name, (module, attribute) in PASSES.items():
        registry.register_pass(_loader(module, attribute), name)
