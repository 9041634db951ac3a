"""Converters of ONNX's sequence and optional ops (registered in
`ops.CONVERTERS`), resolved at import time (containers.py).

A sequence's length and the positions that insert or erase must be known
at import time (constants, or graph inputs bound to their values); a
position that only reads (SequenceAt) may be computed at run time when the
sequence's tensors share one shape: they are stacked and the position
gathered. A tensor known at import time stays known through a sequence,
so shapes that an exporter collects in a list still fold.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.containers import Item, OptionalValue, TensorSequence
from graphcompiler.frontends.onnx.element_types import array_type, element_type
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, reshape
from graphcompiler.frontends.onnx.ops_control import inline, stack


def _sequence(node: Node, index: int) -> TensorSequence:
    name = node.proto.input[index] if node.has_input(index) else ""
    sequence = node.importer.containers.get(name)
    if not isinstance(sequence, TensorSequence):
        raise node.error(f"input #{index} ('{name}') must be a sequence")
    return sequence


def _item(node: Node, index: int) -> Item:
    """Input `index` as a sequence holds it: its array where known."""
    name = node.proto.input[index] if node.has_input(index) else ""
    known = node.importer.constants.get(name)
    if known is not None and not graph.is_storage_only(node.importer.constant_types[name]):
        return known  # (a storage-only type's array holds its values in another dtype)
    return node.value(index)


def _item_type(node: Node, item: Item):
    return array_type(item, node.where) if isinstance(item, np.ndarray) else item.type.element_type


def _item_shape(item: Item) -> tuple[int, ...]:
    return tuple(item.shape if isinstance(item, np.ndarray) else item.type.get_shape())


def _as_value(node: Node, item: Item, sequence: TensorSequence) -> SSAValue:
    if isinstance(item, np.ndarray):
        return node.importer.constant_value(item, sequence.element_type, node.label)
    return item


def _position(node: Node, index: int, length: int, past_end: bool) -> int:
    """Constant input `index`, a position in [-length, length), or up to
    `length` itself where `past_end` (an insertion at the back)."""
    position = node.constant(index, "the position")
    if position.size != 1:
        raise node.error(f"the position must be a scalar, got shape {list(position.shape)}")
    position = int(position.reshape(-1)[0])
    upper = length + 1 if past_end else length
    if not -length <= position < upper:
        raise node.error(f"position {position} is out of range for a sequence of {length}")
    return position + length if position < 0 else position


def _checked(node: Node, items: list[Item], type_) -> TensorSequence:
    for item in items:
        if _item_type(node, item) != type_:
            raise node.error(f"a sequence of {type_} cannot hold a {_item_type(node, item)} tensor")
    return TensorSequence(tuple(items), type_)


@converter("SequenceEmpty")
def _sequence_empty(node: Node) -> list:
    dtype = node.attr("dtype", onnx.TensorProto.FLOAT)
    return [TensorSequence((), element_type(dtype, node.where))]


@converter("SequenceConstruct")
def _sequence_construct(node: Node) -> list:
    items = [_item(node, i) for i in range(node.num_inputs)]
    if not items:
        raise node.error("SequenceConstruct takes at least one tensor")
    return [_checked(node, items, _item_type(node, items[0]))]


@converter("SequenceInsert")
def _sequence_insert(node: Node) -> list:
    sequence = _sequence(node, 0)
    items = list(sequence.items)
    at = _position(node, 2, len(items), past_end=True) if node.has_input(2) else len(items)
    items.insert(at, _item(node, 1))
    return [_checked(node, items, sequence.element_type)]


@converter("SequenceErase")
def _sequence_erase(node: Node) -> list:
    sequence = _sequence(node, 0)
    items = list(sequence.items)
    if not items:
        raise node.error("the sequence is empty: there is nothing to erase")
    del items[_position(node, 1, len(items), past_end=False) if node.has_input(1) else -1]
    return [TensorSequence(tuple(items), sequence.element_type)]


@converter("SequenceLength")
def _sequence_length(node: Node) -> list:
    return [np.array(len(_sequence(node, 0).items), np.int64)]


@converter("SequenceAt")
def _sequence_at(node: Node) -> list:
    sequence = _sequence(node, 0)
    items = sequence.items
    name = node.proto.input[1]
    if not items:
        raise node.error("the sequence is empty: there is no tensor to read")
    if name in node.importer.constants or len({_item_shape(i) for i in items}) > 1:
        # (tensors of different shapes: which one is read must be known)
        return [items[_position(node, 1, len(items), past_end=False)]]
    position = node.value(1)
    if position.type.get_shape():
        raise node.error(
            f"the position must be a scalar, got shape {list(position.type.get_shape())}"
        )
    stacked = stack(node, [_as_value(node, i, sequence) for i in items], 0, False)
    return [node.make("gather", [stacked, position], axis=0)]


@converter("ConcatFromSequence")
def _concat_from_sequence(node: Node) -> list:
    sequence = _sequence(node, 0)
    if not sequence.items:
        raise node.error("the sequence is empty: there is nothing to concatenate")
    new_axis = bool(node.attr("new_axis", 0))
    axis = int(node.attr("axis"))
    rank = len(_item_shape(sequence.items[0])) + new_axis
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if all(isinstance(item, np.ndarray) for item in sequence.items):
        join = np.stack if new_axis else np.concatenate
        return [join(sequence.items, axis=axis)]
    values = [_as_value(node, item, sequence) for item in sequence.items]
    if new_axis:
        return [stack(node, values, axis, False)]
    return [values[0] if len(values) == 1 else node.make("concat", values, axis=axis)]


@converter("SplitToSequence")
def _split_to_sequence(node: Node) -> list:
    """Slices along the axis: of the sizes given, of one size (a scalar
    `split`, the last slice smaller), or (no `split`) of size 1, with the
    axis dropped unless keepdims (which a `split` overrides)."""
    x = _item(node, 0)
    shape = list(_item_shape(x))
    rank = len(shape)
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    length = shape[axis]
    split = node.optional_constant(1, "the split sizes")
    keep = bool(node.attr("keepdims", 1)) or split is not None
    if split is None:
        sizes = [1] * length
    elif split.ndim == 0:
        if int(split) <= 0:
            raise node.error(f"split size {int(split)} must be positive")
        sizes = [min(int(split), length - start) for start in range(0, length, int(split))]
    else:
        sizes = [int(s) for s in split.reshape(-1)]
        if min(sizes, default=0) < 0 or sum(sizes) != length:
            raise node.error(f"split sizes {sizes} do not cut axis {axis} of size {length}")
    items, start = [], 0
    for size in sizes:
        if isinstance(x, np.ndarray):
            piece = np.take(x, range(start, start + size), axis=axis)
            items.append(piece if keep else piece.squeeze(axis))
        else:
            starts = [start if d == axis else 0 for d in range(rank)]
            ends = [start + size if d == axis else s for d, s in enumerate(shape)]
            piece = node.make("slice", [x], starts=starts, ends=ends) if size != length else x
            items.append(piece if keep else reshape(node, piece, shape[:axis] + shape[axis + 1 :]))
        start += size
    return [TensorSequence(tuple(items), _item_type(node, x))]


@converter("SequenceMap")
def _sequence_map(node: Node) -> list:
    """The body inlined once per element of the input sequence; each further
    input is a sequence of the same length (its element) or a tensor (the same)."""
    body = node.attr("body")
    length = len(_sequence(node, 0).items)
    given = [
        node.importer.containers.get(n) or _item(node, i) for i, n in enumerate(node.proto.input)
    ]
    for index, value in enumerate(given):
        if isinstance(value, TensorSequence) and len(value.items) != length:
            raise node.error(f"input #{index} holds {len(value.items)} tensors, input #0 {length}")
    outputs: list[list[Item]] = [[] for _ in body.output]
    for step in range(length):
        bindings = [v.items[step] if isinstance(v, TensorSequence) else v for v in given]
        for k, result in enumerate(inline(node, body, bindings, f"__{node.label}_{step}")):
            outputs[k].append(result)
    types = [
        _item_type(node, items[0])
        if items
        else element_type(o.type.tensor_type.elem_type, node.where)
        for items, o in zip(outputs, body.output, strict=True)
    ]
    return [_checked(node, items, t) for items, t in zip(outputs, types, strict=True)]


@converter("Optional")
def _optional(node: Node) -> list:
    node.attr("type")  # an empty optional's type: nothing reads it
    if not node.has_input(0):
        return [OptionalValue(None)]
    name = node.proto.input[0]
    return [OptionalValue(node.importer.containers.get(name) or _item(node, 0))]


@converter("OptionalHasElement")
def _optional_has_element(node: Node) -> list:
    if not node.has_input(0):
        return [np.array(False)]
    held = node.importer.containers.get(node.proto.input[0])
    return [np.array(not isinstance(held, OptionalValue) or held.value is not None)]


@converter("OptionalGetElement")
def _optional_get_element(node: Node) -> list:
    held = node.importer.containers.get(node.proto.input[0])
    if not isinstance(held, OptionalValue):  # a tensor or a sequence: itself
        return [held or _item(node, 0)]
    if held.value is None:
        raise node.error(f"optional '{node.proto.input[0]}' is empty")
    return [held.value]
