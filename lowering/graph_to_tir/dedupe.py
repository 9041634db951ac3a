"""Kernels that differ only in the globals they read are kept once.

A model repeats its layers: twelve encoder layers give twelve matmul
kernels with the same shapes, schedule and epilogue, each reading its own
packed weights from its own global. Every later stage (tir-to-llvm, the
LLVM IR text, LLVM's optimizer and code generator) would process each copy.
Here such kernels are grouped by their structure with the global names
blanked out (compared only where their types and op sequences match, and
without printing them); the first of a group takes the globals it reads as
trailing tensor arguments, every call passes its own, and the other copies
are deleted.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import SSAValue

from graphcompiler.dialects import tir


def dedupe_kernels(module: ModuleOp, entry_names: set[str]) -> None:
    """Merge the kernels (functions other than `entry_names`) of `module`
    that are identical but for the tensor globals they refer to."""
    globals_ = {op.sym_name.data: op for op in module.ops if isinstance(op, tir.GlobalOp)}
    similar: dict[tuple, list[tuple[tir.FuncOp, list[str]]]] = {}
    for function in [op for op in module.ops if isinstance(op, tir.FuncOp)]:
        if function.is_declaration or function.sym_name.data in entry_names:
            continue
        read = _globals_read(function, globals_)
        if read is not None:
            similar.setdefault(_outline(function), []).append((function, read))
    calls: dict[str, list[tir.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, tir.CallOp):
            calls.setdefault(op.callee.root_reference.data, []).append(op)
    for candidates in similar.values():
        if len(candidates) < 2:
            continue  # most kernels: building their structure to compare would be wasted
        groups: dict[tuple, list[tuple[tir.FuncOp, list[str]]]] = {}
        for function, read in candidates:
            groups.setdefault(_shape_of(function, read), []).append((function, read))
        for members in groups.values():
            if len(members) > 1:
                _merge(members, globals_, calls)


def _outline(function: tir.FuncOp) -> tuple:
    """What kernels of the same text have in common, found without printing
    them: their type and the names of their ops, in order."""
    return function.function_type, tuple(op.name for op in function.body.walk())


def _globals_read(function: tir.FuncOp, globals_: dict) -> list[str] | None:
    """The tensor globals `function` refers to, in order of first reference
    (None when it refers to a var global, which cannot be an argument)."""
    read: list[str] = []
    for op in function.body.walk():
        if isinstance(op, tir.GlobalRefOp):
            name = op.global_name.root_reference.data
            if not isinstance(globals_[name].type, tir.TirTensorType):
                return None
            if name not in read:
                read.append(name)
    return read


def _shape_of(function: tir.FuncOp, read: list[str]) -> tuple:
    """The function's structure with its name and the globals it reads
    blanked: per op, its name, properties and attributes, result types, its
    regions' blocks and argument types, and its operands as positions in
    definition order. Equal for kernels that print the same but for those
    names (and SSA name hints), and built without printing them (the
    printer was 1.9 s of ResNet-50's compile)."""
    position: dict[SSAValue, int] = {}

    def define(values) -> tuple:
        for value in values:
            position[value] = len(position)
        return tuple(value.type for value in values)

    parts: list = [function.function_type, define(function.body.block.args)]
    for op in function.body.walk():
        properties = dict(op.properties)
        if isinstance(op, tir.GlobalRefOp):
            properties["global_name"] = read.index(op.global_name.root_reference.data)
        parts.append((
            op.name,
            tuple(position[operand] for operand in op.operands),
            hashable(properties),
            hashable(op.attributes),
            len(op.successors),
            define(op.results),
            tuple(define(block.args) for region in op.regions for block in region.blocks),
            tuple(len(region.blocks) for region in op.regions),
        ))  # fmt: skip
    return tuple(parts)


def hashable(attributes: dict) -> tuple:
    """(name, value) pairs, sorted; a value xDSL cannot hash by its text."""
    items = []
    for name, value in sorted(attributes.items()):
        try:
            hash(value)
        except TypeError:
            value = str(value)
        items.append((name, value))
    return tuple(items)


def _merge(members: list, globals_: dict, calls: dict) -> None:
    (keeper, keeper_read), others = members[0], members[1:]
    block = keeper.body.block
    parameters = [block.insert_arg(globals_[name].type, len(block.args)) for name in keeper_read]
    for index, parameter in enumerate(parameters):
        parameter.name_hint = f"global{index}"
    for op in list(keeper.body.walk()):
        if isinstance(op, tir.GlobalRefOp):
            name = op.global_name.root_reference.data
            op.result.replace_all_uses_with(parameters[keeper_read.index(name)])
            op.detach()
            op.erase()
    keeper.function_type = FunctionType.from_lists(
        [a.type for a in block.args], keeper.function_type.outputs.data
    )
    for function, read in members:
        for call in calls.get(function.sym_name.data, []):
            references = []
            for name in read:
                reference = tir.GlobalRefOp.create(
                    properties={"global_name": SymbolRefAttr(StringAttr(name))},
                    result_types=[globals_[name].type],
                )
                call.parent_block().insert_op_before(reference, call)
                references.append(reference.result)
            call.operands = [*call.args, *references]
            call.properties["callee"] = SymbolRefAttr(keeper.sym_name)
    for function, _ in others:
        function.detach()
        function.erase()
