"""graphcompiler's dialects: one module per dialect (graph, tir, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphcompiler.registry import Registry


def register_dialects(registry: Registry) -> None:
    """Register graphcompiler's own dialects (lazily imported) with the tools."""
