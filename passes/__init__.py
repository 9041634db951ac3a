"""graphcompiler's graph-level and tir-level passes, one module per pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphcompiler.registry import Registry


def register_passes(registry: Registry) -> None:
    """Register graphcompiler's own passes and named pipelines with the tools."""
