"""graphcompiler's dialects: one module per dialect (graph, tir, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.ir import Dialect

    from graphcompiler.registry import Registry


def _graph() -> Dialect:
    from graphcompiler.dialects.graph import Graph

    return Graph


def register_dialects(registry: Registry) -> None:
    """Register graphcompiler's own dialects (imported when first used)."""
    registry.register_dialect(_graph, "graph")
