"""Converters of ONNX's control flow (registered in `ops.CONVERTERS`): If,
Scan and Loop.

The graph dialect's one control flow op is graph.loop, whose number of
steps is known at compile time, so what decides a branch or a loop's end
must be known at import time:
- If: the condition picks the branch that is inlined. A constant, or a
  graph input bound to its value (optimum's merged decoders take
  `use_cache_branch` so): `graphcompiler.compile` binds such an input from
  the call, as it fixes symbolic dims, and compiles once per value it sees;
  `import_onnx(..., constants={name: value})` binds it by hand. A
  condition computed from the inputs' values computes both branches and
  selects each output (their types must agree).
- Scan: a graph.loop over the body, built once as a function (outline.py)
  that reads a slice of each scanned input and the states; the scanned
  inputs' axes are moved first (and reversed when read backward), the
  scan outputs stacked and moved back. A Scan that carries sequences or
  optionals, or runs no step, is written out instead: one copy of the
  body per step.
- Loop: the trip count and the conditions (the loop's, then each
  iteration's output) must be constants, as an If's. A loop of a known
  count whose body's condition is a constant true is a graph.loop over
  the body, the iteration number a sequence it walks; otherwise (a
  condition or a shape computed from the iteration number) it is written
  out, one copy per iteration while the condition stays true. One that
  runs no iteration gives its scan outputs empty, shaped as the body
  declares them.

A body is converted as the graph's own nodes (it reads the outer graph's
values by name) after its own names, nested graphs' included, are given
a suffix per copy, so that each copy defines new values (If, Loop, and a
Scan written out).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import onnx
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.containers import Container
from graphcompiler.frontends.onnx.element_types import element_type
from graphcompiler.frontends.onnx.errors import OnnxImportError
from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import converter, reshape
from graphcompiler.frontends.onnx.ops_window import _slice_axis
from graphcompiler.frontends.onnx.outline import loop_over
from graphcompiler.frontends.onnx.weights_in_file import initializer_array

MAX_LOOP_COPIES = 4096
"""The most copies of a Loop's body written out (a guard against a
condition that never turns false)."""

Value = SSAValue | np.ndarray | Container
"""A graph value, one known at import time, or a sequence or optional (containers.py)."""


@converter("If")
def _if(node: Node) -> list:
    name = node.proto.input[0]
    importer = node.importer
    if name not in importer.constants and name not in importer.arguments:
        if importer.small_input_behind(name) is None:  # from values, not from sizes
            return _both_branches(node)
    condition = node.constant(0, "the condition")
    if condition.size != 1:
        raise node.error(f"the condition must hold one value, got shape {list(condition.shape)}")
    taken, other = ("then_branch", "else_branch")
    if not bool(condition.reshape(-1)[0]):
        taken, other = other, taken
    node.attr(other)  # read: the branch not taken is left out
    return inline(node, node.attr(taken), [], "")


def _both_branches(node: Node) -> list:
    """An If whose condition is computed from the inputs' values: both
    branches are computed and each output selected (the graph has no side
    effects, so the branch not taken costs time only); their outputs must
    agree in type and shape."""
    condition = node.value(0)
    if math.prod(condition.type.get_shape()) != 1:
        raise node.error(
            f"the condition must hold one value, got shape {list(condition.type.get_shape())}"
        )
    branches = [
        [
            _as_value(node, v)
            for v in inline(node, node.attr(branch), [], f"__{node.label}_{branch}")
        ]
        for branch in ("then_branch", "else_branch")
    ]
    results = []
    for index, (taken, other) in enumerate(zip(*branches, strict=True)):
        if taken.type != other.type:
            raise node.error(
                f"output #{index} is {taken.type} in then_branch and {other.type} in "
                "else_branch: with a condition computed at run time both must agree"
            )
        flag = reshape(node, condition, [1] * len(taken.type.get_shape()))
        results.append(node.make("select", [flag, taken, other]))
    return results


def _as_value(node: Node, value: Value) -> SSAValue:
    if isinstance(value, Container):
        raise node.error(
            "a branch gives a sequence or an optional: the condition must be known at import time"
        )
    if isinstance(value, np.ndarray):
        return node.importer.constant_value(value, _array_type(node, value), node.label)
    return value


@converter("Scan")
def _scan(node: Node) -> list:
    body = node.attr("body")
    scanned = int(node.attr("num_scan_inputs"))
    states = node.num_inputs - scanned
    if states < 0 or len(body.input) != node.num_inputs:
        raise node.error(f"the body takes {len(body.input)} inputs, the node has {node.num_inputs}")
    inputs = [_input(node, i) for i in range(node.num_inputs)]
    sources = [node.value(states + j) for j in range(scanned)]
    axes = _axes(node, "scan_input_axes", "scan_input_directions", sources)
    lengths = {s.type.get_shape()[axis] for s, (axis, _) in zip(sources, axes, strict=True)}
    if len(lengths) != 1:
        raise node.error(f"the scanned inputs have different lengths {sorted(lengths)}")
    (length,) = lengths
    out_axes = _axes(
        node, "scan_output_axes", "scan_output_directions", [None] * (len(body.output) - states)
    )
    looped = _scan_as_loop(node, body, inputs[:states], sources, axes, length, out_axes)
    if looped is not None:
        return looped
    carried, stacks = inputs[:states], []
    for step in range(length):
        sliced = []
        for source, (axis, backward) in zip(sources, axes, strict=True):
            at = length - 1 - step if backward else step
            shape = list(source.type.get_shape())
            piece = _slice_axis(node, source, axis, at, 1)
            sliced.append(reshape(node, piece, shape[:axis] + shape[axis + 1 :]))
        results = inline(node, body, [*carried, *sliced], f"__{node.label}_{step}")
        carried = results[:states]
        stacks.append(results[states:])
    outputs = len(body.output) - states
    return [*carried, *(stack(node, [s[k] for s in stacks], *out_axes[k]) for k in range(outputs))]


def _scan_as_loop(
    node: Node,
    body: onnx.GraphProto,
    states: list[Value],
    sources: list[SSAValue],
    axes: list[tuple[int, bool]],
    length: int,
    out_axes: list[tuple[int, bool]],
) -> list | None:
    """The Scan as a graph.loop over its body, built once (outline.py):
    each scanned input with its axis moved first (and reversed if read
    backward), each scan output stacked along the first axis, then moved
    and reversed as asked. None where the body is written out instead:
    no steps, sequences or optionals carried, or a body that outlining
    cannot build (it is then converted per step, which reports why)."""
    if length == 0 or any(isinstance(s, Container) for s in states):
        return None
    states = [_as_value(node, s) for s in states]
    sequences = [
        _axis_first(node, source, axis, backward)
        for source, (axis, backward) in zip(sources, axes, strict=True)
    ]
    names = [i.name for i in body.input]

    def step(arguments: list[SSAValue]) -> list[Value]:
        return inline(node, body, arguments, f"__{node.label}_step")

    results = _loop_over_body(node, states, sequences, step, names)
    if results is None:
        return None
    finals, stacked = results[: len(states)], results[len(states) :]
    outputs = [
        _axis_from_first(node, value, axis, backward)
        for value, (axis, backward) in zip(stacked, out_axes, strict=True)
    ]
    return [*finals, *outputs]


def _loop_over_body(
    node: Node,
    states: list[SSAValue],
    sequences: list[SSAValue],
    body: Callable[[list[SSAValue]], list[Value]],
    names: list[str],
) -> list[SSAValue] | None:
    """A graph.loop whose step function `body(arguments)` builds (the
    states, then a row of each sequence; `names` name them): its final
    states and stacked outputs, or None where the body cannot be built
    once (a sequence or an optional out, a state changing type, or what
    the conversion refuses)."""

    def step(arguments: list[SSAValue]) -> list[SSAValue]:
        results = body(arguments)
        if any(isinstance(r, Container) for r in results):
            raise node.error("the body gives a sequence or an optional")
        results = [_as_value(node, r) for r in results]
        for state, result in zip(states, results, strict=False):
            if state.type != result.type:
                raise node.error(f"a state is {state.type} in and {result.type} out")
        return results

    try:
        return loop_over(node, states, sequences, step, names)
    except OnnxImportError:
        return None


def _axis_first(node: Node, value: SSAValue, axis: int, backward: bool) -> SSAValue:
    """`value` with `axis` moved first, its order reversed if `backward`."""
    rank = len(value.type.get_shape())
    if axis != 0:
        value = node.make("transpose", [value], perm=[axis, *(d for d in range(rank) if d != axis)])
    return _reversed_first(node, value) if backward else value


def _axis_from_first(node: Node, value: SSAValue, axis: int, backward: bool) -> SSAValue:
    """A stacked output [S, ...] reversed if `backward`, its first axis moved to `axis`."""
    if backward:
        value = _reversed_first(node, value)
    rank = len(value.type.get_shape())
    axis = axis % rank
    if axis == 0:
        return value
    order = [d for d in range(1, rank)]
    order.insert(axis, 0)
    return node.make("transpose", [value], perm=order)


def _reversed_first(node: Node, value: SSAValue) -> SSAValue:
    count = value.type.get_shape()[0]
    indices = node.importer.constant_value(np.arange(count - 1, -1, -1), i64, node.label)
    return node.make("gather", [value, indices], axis=0)


@converter("Loop")
def _loop(node: Node) -> list:
    body = node.attr("body")
    trip = node.optional_constant(0, "the trip count")
    condition = node.optional_constant(1, "the condition")
    count = None if trip is None else int(np.asarray(trip).reshape(-1)[0])
    going = True if condition is None else bool(np.asarray(condition).reshape(-1)[0])
    carried = [_input(node, i) for i in range(2, node.num_inputs)]
    if going and count is not None:
        looped = _loop_as_loop(node, body, carried, count)
        if looped is not None:
            return looped
    stacks = []
    step = 0
    while going and (count is None or step < count):
        if step == MAX_LOOP_COPIES:
            raise node.error(f"the loop runs past {MAX_LOOP_COPIES} iterations")
        index, flag = np.array(step, np.int64), np.array(True)
        results = inline(node, body, [index, flag, *carried], f"__{node.label}_{step}")
        if not isinstance(results[0], np.ndarray):
            raise node.error("the loop's condition is computed at run time (a static loop only)")
        going = bool(results[0].reshape(-1)[0])
        carried = results[1 : 1 + len(carried)]
        stacks.append(results[1 + len(carried) :])
        step += 1
    scans = body.output[1 + len(carried) :]
    if not stacks:
        return [*carried, *(_no_steps(node, output) for output in scans)]
    return [*carried, *(stack(node, [s[k] for s in stacks], 0, False) for k in range(len(scans)))]


def _loop_as_loop(
    node: Node, body: onnx.GraphProto, carried: list[Value], count: int
) -> list | None:
    """A Loop of a known count as a graph.loop over its body built once:
    the iteration number is a sequence [count] the loop walks, and the
    body's condition must come out a constant true. None where it is
    written out per iteration instead (no iterations, sequences or
    optionals carried, a condition or a shape computed from the iteration
    number: each copy then knows its number)."""
    if count == 0 or any(isinstance(c, Container) for c in carried):
        return None
    states = [_as_value(node, c) for c in carried]
    numbers = node.importer.constant_value(np.arange(count), i64, node.label)

    def step(arguments: list[SSAValue]) -> list[Value]:
        *values, number = arguments
        results = inline(node, body, [number, np.array(True), *values], f"__{node.label}_step")
        condition, *results = results
        if not isinstance(condition, np.ndarray) or not bool(condition.reshape(-1)[0]):
            raise node.error("the body's condition is not a constant true")
        return results

    names = [*(i.name for i in body.input[2:]), body.input[0].name]
    return _loop_over_body(node, states, [numbers], step, names)


def _no_steps(node: Node, output: onnx.ValueInfoProto) -> SSAValue:
    """A scan output of a loop that ran no iteration: empty, [0, *the shape
    the body declares for it] (onnxruntime's result)."""
    tensor = output.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    if not output.type.HasField("tensor_type") or not tensor.HasField("shape") or None in dims:
        raise node.error(
            f"the loop runs no iteration and its body does not declare the static shape of "
            f"its scan output '{output.name}'"
        )
    element = element_type(tensor.elem_type, node.where)
    return node.importer.constant_value(np.zeros([0, *dims]), element, node.label)


def _input(node: Node, index: int) -> Value:
    """Input `index`: its array where it is known at import time, its
    sequence or optional where it is one."""
    name = node.proto.input[index]
    importer = node.importer
    if name in importer.containers:
        return importer.containers[name]
    return importer.constants[name] if name in importer.constants else node.value(index)


def _axes(node: Node, axes_name: str, directions_name: str, values: list) -> list[tuple[int, bool]]:
    """(axis, backward) per value from the attributes (axis 0, forward by default)."""
    axes = list(node.attr(axes_name, [0] * len(values)) or [0] * len(values))
    directions = list(node.attr(directions_name, [0] * len(values)) or [0] * len(values))
    result = []
    for value, axis, direction in zip(values, axes, directions, strict=True):
        rank = len(value.type.get_shape()) if isinstance(value, SSAValue) else None
        result.append((axis % rank if rank and axis < 0 else axis, bool(direction)))
    return result


def stack(node: Node, values: list[Value], axis: int, backward: bool) -> SSAValue:
    """The per-step values stacked along a new `axis` (last step first if backward)."""
    tensors = []
    for value in reversed(values) if backward else values:
        if isinstance(value, np.ndarray):
            value = node.importer.constant_value(value, _array_type(node, value), node.label)
        shape = list(value.type.get_shape())
        axis = axis % (len(shape) + 1)
        tensors.append(reshape(node, value, [*shape[:axis], 1, *shape[axis:]]))
    return tensors[0] if len(tensors) == 1 else node.make("concat", tensors, axis=axis)


def _array_type(node: Node, array: np.ndarray):
    if array.dtype == np.bool_:
        return i1
    if array.dtype == np.int64:
        return i64
    return element_type(onnx.helper.np_dtype_to_tensor_dtype(array.dtype), node.where)


def inline(node: Node, graph: onnx.GraphProto, bindings: list[Value], suffix: str) -> list[Value]:
    """Convert `graph`'s nodes where `node` stands, its inputs bound to
    `bindings`, its own names given `suffix`; its outputs (arrays where known)."""
    importer = node.importer
    if suffix:
        graph = _renamed(graph, suffix)
    for info, value in zip(graph.input, bindings, strict=True):
        if isinstance(value, Container):
            importer.containers[info.name] = value
        elif isinstance(value, np.ndarray):
            type_ = (
                importer.inferred[info.name].element_type
                if info.name in importer.inferred
                else None
            )
            importer.define_constant(info.name, value, type_ or _array_type(node, value))
        else:
            importer.values[info.name] = value
    for tensor in graph.initializer:
        where = f"initializer '{tensor.name}' of node '{node.label}'"
        type_ = element_type(tensor.data_type, where)
        importer.define_constant(tensor.name, initializer_array(tensor), type_)
    for proto in graph.node:
        importer.convert(proto)
    return [
        importer.containers.get(o.name)
        or (importer.constants[o.name] if o.name in importer.constants else importer.tensor(o.name))
        for o in graph.output
    ]


def _renamed(graph: onnx.GraphProto, suffix: str) -> onnx.GraphProto:
    """A copy of `graph` with every name it defines (inputs, initializers,
    node outputs, in nested graphs too) and each use of them suffixed;
    names of the outer graph it reads stay."""
    copy = onnx.GraphProto()
    copy.CopyFrom(graph)
    names = _defined(copy)

    def rename(g: onnx.GraphProto) -> None:
        for info in [*g.input, *g.output, *g.value_info]:
            if info.name in names:
                info.name += suffix
        for tensor in g.initializer:
            tensor.name += suffix
        for n in g.node:
            n.input[:] = [name + suffix if name in names else name for name in n.input]
            n.output[:] = [name + suffix if name in names else name for name in n.output]
            if n.name:
                n.name += suffix
            for attribute in n.attribute:
                for sub in (
                    [attribute.g, *attribute.graphs]
                    if attribute.HasField("g")
                    else attribute.graphs
                ):
                    rename(sub)

    rename(copy)
    return copy


def _defined(graph: onnx.GraphProto) -> set[str]:
    names = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    for n in graph.node:
        names.update(o for o in n.output if o)
        for attribute in n.attribute:
            for sub in (
                [attribute.g, *attribute.graphs] if attribute.HasField("g") else attribute.graphs
            ):
                names |= _defined(sub)
    return names
