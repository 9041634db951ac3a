"""Outlining: building a graph function (a graph.loop's step) with the same
converters that build the main graph.

The body is built by the usual `node.make` calls while the importer's
block is the function's. What it reads from the main graph is captured
afterwards: a value computed from constants alone (a weight transposed,
sliced per direction) is cloned into the function, so that graph passes
there see a constant (a matmul packs its weights at compile time); any
other value becomes one more argument, an invariant the loop passes in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import NameLoc, NoneAttr, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.importer import name_hint


def outline(
    importer,
    name: str,
    argument_types: Sequence[TensorType],
    build: Callable[[list[SSAValue]], Sequence[SSAValue]],
    argument_names: Sequence[str] = (),
) -> tuple[str, list[SSAValue]]:
    """Build private function `name` (a unique variant of it) from
    `build(arguments)`, which returns its results; the function's symbol,
    and the main graph's values it reads (the arguments after
    `argument_types`, in order)."""
    outer, block = importer.block, Block(arg_types=list(argument_types))
    for argument, argument_name in zip(block.args, argument_names, strict=False):
        argument.name_hint = name_hint(argument_name)
    importer.block = block
    names = _Names(importer)
    try:
        results = list(build(list(block.args)))
    finally:
        importer.block = outer
        names.restore()
    block.add_op(func.ReturnOp(*results))
    invariants = _capture(block)
    symbol = importer.unique_function_name(name)
    importer.functions.append(
        func.FuncOp(
            symbol,
            ([a.type for a in block.args], [r.type for r in results]),
            Region(block),
            visibility="private",
        )
    )
    return symbol, invariants


def loop_over(
    node,
    states: Sequence[SSAValue],
    sequences: Sequence[SSAValue],
    build: Callable[[list[SSAValue]], Sequence[SSAValue]],
    argument_names: Sequence[str] = (),
    reverse: bool = False,
) -> list[SSAValue]:
    """A graph.loop at `node` whose step function `build` makes (from the
    states, then a row of each sequence; it returns the new states, then a
    row of each output): its final states, then the output sequences."""
    argument_types = [
        *(s.type for s in states),
        *(TensorType(s.type.element_type, s.type.get_shape()[1:]) for s in sequences),
    ]
    symbol, invariants = outline(
        node.importer, f"{node.label}_step", argument_types, build, argument_names
    )
    rows = node.importer.functions[-1].function_type.outputs.data[len(states) :]
    steps = sequences[0].type.get_shape()[0]
    result_types = [
        *(s.type for s in states),
        *(TensorType(r.element_type, [steps, *r.get_shape()]) for r in rows),
    ]
    loop = graph.LoopOp.build(symbol, states, sequences, invariants, result_types, reverse)
    loop.location = NameLoc(StringAttr(node.label), NoneAttr())
    node.importer.block.add_op(loop)
    return list(loop.results)


class _Names:
    """The importer's name bindings before a function is built, put back
    after it: names bound inside (a body's values, a constant first used
    there) are the function's, not the main graph's."""

    def __init__(self, importer):
        self.importer = importer
        self.values = dict(importer.values)
        self.bound = len(importer.values.bound)
        self.containers = dict(importer.containers)

    def restore(self) -> None:
        values = self.importer.values
        for name in list(values):
            if name not in self.values:
                dict.__delitem__(values, name)
            elif values[name] is not self.values[name]:
                dict.__setitem__(values, name, self.values[name])
        del values.bound[self.bound :]
        self.importer.containers.clear()
        self.importer.containers.update(self.containers)


def _capture(block: Block) -> list[SSAValue]:
    """Point the block's reads of values defined outside it at clones of
    constant computations or at new arguments; the outside values the
    arguments stand for."""
    first = block.first_op
    replacement: dict[SSAValue, SSAValue] = {}
    invariants: list[SSAValue] = []
    from_constants: dict[Operation, bool] = {}

    def inside(value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            return value.block is block
        return value.owner.parent_block() is block

    def capture(value: SSAValue) -> SSAValue:
        if value in replacement:
            return replacement[value]
        owner = value.owner
        if isinstance(owner, Operation) and _from_constants(owner, from_constants):
            clone = owner.clone_without_regions()
            for index, operand in enumerate(owner.operands):
                clone.operands[index] = capture(operand)
            block.insert_op_before(clone, first)
            for result, cloned in zip(owner.results, clone.results, strict=True):
                replacement[result] = cloned
        else:
            replacement[value] = block.insert_arg(value.type, len(block.args))
            invariants.append(value)
        return replacement[value]

    for op in list(block.ops):
        for index, operand in enumerate(op.operands):
            if not inside(operand):
                op.operands[index] = capture(operand)
    return invariants


def _from_constants(op: Operation, known: dict[Operation, bool]) -> bool:
    """Is `op` a graph op computed from constants alone (itself one)?"""
    if op not in known:
        known[op] = (
            op.dialect_name() == "graph"
            and not op.regions
            and all(
                isinstance(v.owner, Operation) and _from_constants(v.owner, known)
                for v in op.operands
            )
            and (isinstance(op, graph.ConstantOp) or bool(op.operands))
        )
    return known[op]
