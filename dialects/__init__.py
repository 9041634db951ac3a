"""graphcompiler's dialects: one module per dialect (graph, tir, ...)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.ir import Dialect

    from graphcompiler.registry import Registry

# dialect name -> (module, Dialect object name); imported when first used.
DIALECTS = {"graph": ("graph", "Graph"), "tir": ("tir", "Tir")}


def _loader(module: str, attribute: str) -> Callable[[], Dialect]:
    return lambda: getattr(importlib.import_module(f"graphcompiler.dialects.{module}"), attribute)


def register_dialects(registry: Registry) -> None:
    """Register graphcompiler's own dialects with the tools."""
    for name, (module, attribute) in DIALECTS.items():
        registry.register_dialect(_loader(module, attribute), name)
