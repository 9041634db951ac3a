"""ONNX's sequences and optionals, as the importer holds them.

The graph dialect has tensors only. A sequence or an optional that lives
inside a model (torch's exporter builds lists with SequenceConstruct and
SplitToSequence, reads them back with SequenceAt and ConcatFromSequence)
is resolved at import time instead: the importer keeps it under its ONNX
name as a Python object of the graph values (or known arrays) it holds,
and the ops that read it get those values. Its length and its optional's
presence are therefore known at import time; its elements' values need
not be. A graph input or output of such a type stays unsupported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import Attribute, SSAValue

Item = SSAValue | np.ndarray
"""A tensor of a sequence: a graph value, or its array where known at import time."""


@dataclass(frozen=True, eq=False)
class TensorSequence:
    """An ONNX sequence of tensors, all of `element_type`."""

    items: tuple[Item, ...]
    element_type: Attribute


@dataclass(frozen=True, eq=False)
class OptionalValue:
    """An ONNX optional: a tensor, a sequence, or nothing (`value` None)."""

    value: Item | TensorSequence | None


Container = TensorSequence | OptionalValue


Layout = str | tuple
"""How a graph output is rebuilt from the tensors it was flattened into:
"tensor"; ("sequence", n) for n tensors; ("optional", None) when empty,
("optional", inner) around an inner layout."""


def flattened(value: Item | Container) -> tuple[Layout, list[Item]]:
    """`value` as a layout and the tensors it holds, in order."""
    if isinstance(value, TensorSequence):
        return ("sequence", len(value.items)), list(value.items)
    if isinstance(value, OptionalValue):
        if value.value is None:
            return ("optional", None), []
        inner, items = flattened(value.value)
        return ("optional", inner), items
    return "tensor", [value]


def rebuilt(layout: Layout, tensors: Iterator[Any]) -> Any:
    """The value `layout` describes, its tensors taken from `tensors`:
    an array, a list of arrays, None or what the optional holds."""
    if layout == "tensor":
        return next(tensors)
    kind, inner = layout
    if kind == "sequence":
        return [next(tensors) for _ in range(inner)]
    return None if inner is None else rebuilt(inner, tensors)


def tensor_count(layout: Layout) -> int:
    """How many tensors an output of `layout` was flattened into."""
    if layout == "tensor":
        return 1
    kind, inner = layout
    if kind == "sequence":
        return inner
    return 0 if inner is None else tensor_count(inner)
