"""The seed's Python API for Graph IR, as a thin layer over xDSL (seed 004).

- `GraphBuilder`: `make_input`, `make("relu", [x])` with inferred results,
  `make_output`, then `function` / `module`.
- mutation: `replace_input`, `replace_uses_with_and_remove`, `replace_with`.
- `OpVisitor(selector, updater)`: the seed's generic traversal loop
  `while to_visit: op = select(); visit(op); update(op)`, with `dfs()`,
  `bfs()` and `dfs_topology_sort()`, and room for a user's own selector.
- `print_graph`: the seed's textual form (`[v3: f32[4, 8]] = relu(v0)`).

A graph's "ops" are the ops of the function's block, `func.return` included
(it plays the seed's `output_op`); its "tensors" are SSA values.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from xdsl.builder import InsertPoint
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph import ops as graph
from graphcompiler.ir import element_types
from graphcompiler.ir.element_types import dense_elements


def element_type(name_or_type: str | Attribute) -> Attribute:
    """An element type given by name ('f32', 'bf16', 'ui8', ...) or as itself."""
    if isinstance(name_or_type, Attribute):
        return name_or_type
    return element_types.by_name(name_or_type)


def tensor_type(
    shape: Sequence[int], dtype: str | Attribute = "f32", format: graph.FormatAttr | None = None
) -> TensorType:
    if format is None:
        return TensorType(element_type(dtype), list(shape))
    return TensorType(element_type(dtype), list(shape), format)


def dense_constant(
    array: np.ndarray, dtype: str | Attribute | None = None
) -> DenseIntOrFPElementsAttr:
    """A numpy array as a `dense<...>` attribute (dtype inferred if not given)."""
    array = np.asarray(array)
    if dtype is None:
        dtype = {"f": "f32", "b": "i1"}.get(array.dtype.kind, "i64")
        dtype = "f16" if array.dtype == np.float16 else dtype
    return dense_elements(array, element_type(dtype))


def create_op(
    op_name: str,
    inputs: Sequence[SSAValue],
    result_type: TensorType | None = None,
    **params: Any,
) -> Operation:
    """A verified, detached `graph.<op_name>` with its result type inferred;
    Python values for the properties (ints, floats, bools, int lists, str).
    The op's class builds it (`GraphOp.build_from`); here the name is looked
    up, a numpy `value` of a constant becomes a dense attribute, and a
    rejected op is a ValueError naming it."""
    op_class = graph.OPS_BY_NAME.get(op_name)
    if op_class is None:
        close = difflib.get_close_matches(op_name, graph.OPS_BY_NAME, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown graph op '{op_name}'{hint}")
    if op_class is graph.ConstantOp and isinstance(params.get("value"), np.ndarray | list):
        params["value"] = dense_constant(params["value"], params.pop("dtype", None))
    properties = {name: graph.property_attribute(name, value) for name, value in params.items()}
    try:
        return op_class.build_from(inputs, result_type, **properties)
    except (VerifyException, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"graph.{op_name}: {error}") from None


class GraphBuilder:
    """Builds one graph function: inputs, ops with inferred outputs, outputs."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.block = Block()
        self.outputs: list[SSAValue] = []
        self._function: func.FuncOp | None = None

    def make_input(
        self,
        shape: Sequence[int],
        dtype: str | Attribute = "f32",
        format: graph.FormatAttr | None = None,
    ) -> SSAValue:
        return self.block.insert_arg(tensor_type(shape, dtype, format), len(self.block.args))

    def make_inputs(self, *types: TensorType) -> list[SSAValue]:
        return [self.block.insert_arg(t, len(self.block.args)) for t in types]

    def make(
        self,
        op_name: str,
        inputs: Sequence[SSAValue],
        result_type: TensorType | None = None,
        **params: Any,
    ) -> Operation:
        """Create `graph.<op_name>` on `inputs` at the end of the graph; its
        result type is inferred (give `result_type` for reshape, broadcast_to
        and cast)."""
        op = create_op(op_name, inputs, result_type, **params)
        self._insert(op)
        return op

    def make_output(self, values: Iterable[SSAValue] | SSAValue) -> None:
        self.outputs.extend([values] if isinstance(values, SSAValue) else values)

    def _insert(self, op: Operation) -> None:
        terminator = self.block.last_op
        if isinstance(terminator, func.ReturnOp):
            self.block.insert_op_before(op, terminator)
        else:
            self.block.add_op(op)

    def function(self) -> func.FuncOp:
        """The `func.func` of the graph (built once; later calls return it)."""
        if self._function is None:
            self.block.add_op(func.ReturnOp(*self.outputs))
            input_types = [arg.type for arg in self.block.args]
            output_types = [value.type for value in self.outputs]
            self._function = func.FuncOp(self.name, (input_types, output_types), Region(self.block))
        return self._function

    def module(self) -> ModuleOp:
        function = self.function()
        if function.parent is None:
            return ModuleOp([function])
        return function.parent_op()


# --- mutation -------------------------------------------------------------------


def replace_input(op: Operation, index: int, new_value: SSAValue) -> None:
    """Make operand `index` of `op` use `new_value`."""
    if not 0 <= index < len(op.operands):
        raise ValueError(f"'{op.name}' has {len(op.operands)} inputs, no input #{index}")
    op.operands = [new_value if i == index else v for i, v in enumerate(op.operands)]


def replace_uses_with_and_remove(op: Operation, replacer: Operation) -> None:
    """Every user of `op`'s results now uses `replacer`'s results; then `op`
    is removed. A replacer placed after `op` moves to `op`'s place, so that
    it still comes before the users."""
    if len(op.results) != len(replacer.results):
        raise ValueError(
            f"'{replacer.name}' has {len(replacer.results)} results, '{op.name}' has "
            f"{len(op.results)}"
        )
    block = op.parent_block()
    if replacer.parent_block() is block and block.get_operation_index(
        replacer
    ) > block.get_operation_index(op):
        replacer.detach()
        Rewriter.insert_op(replacer, InsertPoint.before(op))
    for old, new in zip(op.results, replacer.results, strict=True):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(op)


def replace_with(value: SSAValue, new_value: SSAValue) -> None:
    """Every use of tensor `value` now uses `new_value`."""
    value.replace_all_uses_with(new_value)


def erase_if_unused(value: SSAValue) -> None:
    """Erase the op defining `value` if nothing uses its results, then the
    ops of its operands likewise (what a rewrite left without users)."""
    op = value.owner
    if not isinstance(op, Operation) or any(result.uses for result in op.results):
        return
    operands = list(op.operands)
    Rewriter.erase_op(op)
    for operand in operands:
        erase_if_unused(operand)


def substitute(op: Operation, ops: Sequence[Operation], value: SSAValue) -> None:
    """Insert `ops` before `op`, make `value` (their result) replace its
    result, erase it, then whatever its operands' ops fed only it: a
    rewrite's last step."""
    Rewriter.insert_op(list(ops), InsertPoint.before(op))
    op.results[0].replace_all_uses_with(value)
    operands = list(op.operands)
    Rewriter.erase_op(op)
    for operand in operands:
        erase_if_unused(operand)


def substitute_if_typed(op: Operation, ops: Sequence[Operation], value: SSAValue) -> bool:
    """`substitute` when `value` has `op`'s result type, else nothing
    (`ops` never inserted): whether it did."""
    if value.type != op.results[0].type:
        return False
    substitute(op, ops, value)
    return True


# --- traversal ------------------------------------------------------------------


def graph_ops(function: func.FuncOp) -> list[Operation]:
    return list(function.body.block.ops)


def _users(op: Operation, position: dict[Operation, int]) -> list[Operation]:
    """The ops of `op`'s block that use its results, in block order
    (`position`: each op's index in the block; the block's own lookup walks
    the block, which made ordering BERT's 700 ops take 0.4 s)."""
    block = op.parent_block()
    users = {
        block.find_ancestor_op_in_block(use.operation)
        for result in op.results
        for use in result.uses
    }
    users.discard(None)
    return sorted(users, key=position.__getitem__)


def _producers(op: Operation) -> set[Operation]:
    return {operand.owner for operand in op.operands if isinstance(operand.owner, Operation)}


Selector = Callable[["OpVisitor"], Operation | None]
Updater = Callable[["OpVisitor", Operation], None]


class OpVisitor:
    """The seed's `op_visitor_t`: `to_visit` holds the ops that may be
    visited next; `selector` takes one out (or returns None to skip a stale
    entry); after the visit `updater` adds what became visitable."""

    def __init__(self, selector: Selector, updater: Updater):
        self.selector = selector
        self.updater = updater
        self.to_visit: list[Operation] = []
        self.visited: set[Operation] = set()
        self.position: dict[Operation, int] = {}

    def visit_graph(self, function: func.FuncOp, visit: Callable[[Operation], None]) -> None:
        """Visit every op reachable from the graph's sources (ops that use
        no other op's results), in the order the selector decides."""
        ops = graph_ops(function)
        self.position = {op: index for index, op in enumerate(ops)}
        self.to_visit = [op for op in ops if not _producers(op)]
        self.visited = set()
        while self.to_visit:
            op = self.selector(self)
            if op is None:
                continue
            visit(op)
            self.update_state_for_visited(op)

    def order(self, function: func.FuncOp) -> list[Operation]:
        """The ops in visiting order."""
        visited: list[Operation] = []
        self.visit_graph(function, visited.append)
        return visited

    def update_state_for_visited(self, op: Operation) -> None:
        self.visited.add(op)
        self.updater(self, op)

    # The seed's predefined selectors and updaters.

    @staticmethod
    def pop_back_selector(visitor: OpVisitor) -> Operation | None:
        op = visitor.to_visit.pop()
        return None if op in visitor.visited else op

    @staticmethod
    def dequeue_selector(visitor: OpVisitor) -> Operation | None:
        op = visitor.to_visit.pop(0)
        return None if op in visitor.visited else op

    @staticmethod
    def push_back_updater(visitor: OpVisitor, op: Operation) -> None:
        visitor.to_visit.extend(
            user for user in _users(op, visitor.position) if user not in visitor.visited
        )

    @staticmethod
    def create_dag_updater() -> Updater:
        """An updater for topological orders: an op becomes visitable once
        every op it depends on has been visited."""
        waiting: dict[Operation, int] = {}

        def update(visitor: OpVisitor, op: Operation) -> None:
            for user in _users(op, visitor.position):
                remaining = waiting.get(user, len(_producers(user))) - 1
                waiting[user] = remaining
                if remaining == 0:
                    visitor.to_visit.append(user)

        return update

    @classmethod
    def dfs(cls) -> OpVisitor:
        return cls(cls.pop_back_selector, cls.push_back_updater)

    @classmethod
    def bfs(cls) -> OpVisitor:
        return cls(cls.dequeue_selector, cls.push_back_updater)

    @classmethod
    def dfs_topology_sort(cls) -> OpVisitor:
        return cls(cls.pop_back_selector, cls.create_dag_updater())

    @classmethod
    def topology_sort(cls, selector: Selector) -> OpVisitor:
        """A topological order in which `selector` picks among the ready ops."""
        return cls(selector, cls.create_dag_updater())


# --- the seed's text form ---------------------------------------------------------


def _tensor_text(name: str, type_: TensorType) -> str:
    shape = ", ".join(str(d) for d in type_.get_shape())
    return f"{name}: {type_.element_type}[{shape}]"


def print_graph(function: func.FuncOp) -> str:
    """The seed's `print_graph(g, os, print_shape=true)`: inputs are v0.., then
    the outputs, then the other tensors in op order."""
    block = function.body.block
    names: dict[SSAValue, str] = {}
    outputs = block.last_op.operands if isinstance(block.last_op, func.ReturnOp) else ()
    for value in [*block.args, *outputs, *(r for op in block.ops for r in op.results)]:
        names.setdefault(value, f"v{len(names)}")
    inputs = ", ".join(_tensor_text(names[a], a.type) for a in block.args)
    results = ", ".join(_tensor_text(names[v], v.type) for v in outputs)
    lines = [f"graph({inputs}) -> [{results}] {{"]
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        defined = ", ".join(_tensor_text(names[r], r.type) for r in op.results)
        used = ", ".join(names[v] for v in op.operands)
        lines.append(f"  [{defined}] = {op.name.removeprefix('graph.')}({used})")
    return "\n".join([*lines, "}"]) + "\n"
