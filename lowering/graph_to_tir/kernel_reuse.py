"""One kernel for every op of the same structure, generated once.

A model repeats its layers: BERT's twelve encoder layers are twelve copies
of the same ops on tensors of the same types, with other weights. Building
each copy's Tensor IR and then finding the copies equal (dedupe.py) cost
most of the lowering. Here an op is looked up by its structure before its
kernel is built: its template, its ops (a fused op's region included) with
their properties, attributes and types, its operands' types and which of
them are constants. The first op of a structure builds the kernel; the
others call it.

A kernel reads a constant operand through its parameter, except where it
packs the constant's values at compile time into a global of its own
(Kernel.packed_constant, packed weights). The kernel then takes those
globals as trailing parameters instead: each call packs its own op's
constants with the same function and passes the globals it made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue

from graphcompiler.dialects import tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.lowering.graph_to_tir.dedupe import hashable
from graphcompiler.lowering.graph_to_tir.kernel import (
    Kernel,
    Packing,
    constant_values,
    packed_global,
)


def structure_key(template, op: Operation, params: list[Attribute], constants: list) -> tuple:
    """What the kernel of `op` depends on: the template, the op's nested ops
    (name, operands as positions, properties, attributes, result and block
    argument types), the kernel's parameter types, and which inputs are
    constants (dense ones are packed, others read in place)."""
    position: dict[SSAValue, int] = {}

    def define(values) -> tuple:
        for value in values:
            position.setdefault(value, len(position))
        return tuple(value.type for value in values)

    define(op.operands)
    parts: list = [template, tuple(params)]
    parts.append(tuple(isinstance(c, DenseIntOrFPElementsAttr) for c in constants))
    for inner in op.walk():
        parts.append((
            inner.name,
            tuple(position.get(operand, -1) for operand in inner.operands),
            hashable(inner.properties),
            hashable(inner.attributes),
            define(inner.results),
            tuple(define(block.args) for region in inner.regions for block in region.blocks),
        ))  # fmt: skip
    return tuple(parts)


@dataclass
class _Built:
    """A kernel built once: its function, where each of its packings found
    its constant among the inputs, and the calls not yet given globals."""

    function: tir.FuncOp
    packings: list[tuple[int, Packing]]
    first_call: tir.CallOp | None
    globals_of_first_call: list[tuple[str, Attribute]] = field(default_factory=list)


class KernelReuse:
    """The kernels built so far, by structure_key."""

    def __init__(self, builder: TirBuilder):
        self.builder = builder
        self.built: dict[tuple, _Built | None] = {}
        self.count = 0

    def remember(self, key: tuple, function: tir.FuncOp, kernel: Kernel, call: tir.CallOp) -> None:
        """Keep the kernel just built for `key`, unless one of its packed
        constants cannot be told apart among its inputs (the same array
        given twice): then ops of this structure are each built."""
        packings = []
        for packing in kernel.packings:
            sources = [i for i, o in enumerate(kernel.inputs) if o.constant is packing.constant]
            if len(sources) != 1:
                self.built[key] = None
                return
            packings.append((sources[0], packing))
        names = [(p.ref.owner.global_name.root_reference.data, p.ref.type) for _, p in packings]
        self.built[key] = _Built(function, packings, call, names)

    def call(self, key: tuple, args: list[SSAValue], constants: list) -> bool:
        """Call the kernel built for `key` with `args`, packing this op's
        `constants` (one per input) into globals of its own; False when
        there is none to reuse."""
        built = self.built.get(key)
        if built is None:
            return False
        if built.first_call is not None:
            self._take_globals_as_parameters(built)
        b = self.builder
        made = []
        for source, packing in built.packings:
            values = packing.pack(constant_values(constants[source], packing.shape))
            self.count += 1
            name = f"{built.function.sym_name.data}_{packing.suffix}_{self.count}"
            made.append(packed_global(b, name, values))
        refs = [b.insert(_reference(g.sym_name.data, g.type)).results[0] for g in made]
        b.make_evaluate(b.make_call(built.function, [*args, *refs]))
        return True

    def _take_globals_as_parameters(self, built: _Built) -> None:
        """The kernel's packed globals become its trailing parameters; its
        first call passes the globals it was built with."""
        block = built.function.body.block
        for _, packing in built.packings:
            parameter = block.insert_arg(packing.ref.type, len(block.args))
            parameter.name_hint = packing.suffix
            packing.ref.replace_all_uses_with(parameter)
            reference = packing.ref.owner
            reference.detach()
            reference.erase()
        built.function.function_type = FunctionType.from_lists(
            [a.type for a in block.args], built.function.function_type.outputs.data
        )
        call = built.first_call
        refs = []
        for name, type_ in built.globals_of_first_call:
            reference = _reference(name, type_)
            call.parent_block().insert_op_before(reference, call)
            refs.append(reference.results[0])
        call.operands = [*call.operands, *refs]
        built.first_call = None


def _reference(name: str, type_: Attribute) -> tir.GlobalRefOp:
    return tir.GlobalRefOp.create(
        properties={"global_name": SymbolRefAttr(StringAttr(name))}, result_types=[type_]
    )
