"""tir-outline-parallel: each parallel `tir.for` becomes a function called
through the runtime's thread pool (seed 002).

    tir.for %i = %c0 to %c100 step %c1 parallel { A[i] = value + i }

becomes

    tir.func @for_body(%i: index, %value: f32, %A: !tir.tensor<100xf32>) { ... }
    %fn = tir.func_addr @for_body : !tir.ptr
    %0 = tir.call @sc_parallel_call_cpu(%fn, %c0, %c100, %c1, %value, %A) ...
    tir.evaluate %0 : none

Captures are the values the body uses but does not define, in order of first
use. Constants, global handles and function addresses are cloned into the
body instead (they cost nothing to recompute). A local var is captured by
value, read just before the call: the verifier guarantees a parallel body
only reads outer locals. How the captures reach the body at run time is the
LLVM lowering's business (`sc_parallel_call_cpu` is variadic here). The
runtime's bounds and loop var are index: a loop over i32, i16, ... passes its
bounds cast to index, and the body casts its index parameter back.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler.dialects import tir
from graphcompiler.runtime import symbols
from graphcompiler.runtime.symbols import PARALLEL_CALL

BODY_NAME = "for_body"

_CLONED_DEFINITIONS = (tir.ConstOp, tir.GlobalRefOp, tir.FuncAddrOp)


def _defined_inside(value: SSAValue, loop: tir.ForOp) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op()
    return False


def _captures(loop: tir.ForOp) -> list[SSAValue]:
    """Values used in the body but defined outside it, in order of first use."""
    captured: dict[SSAValue, None] = {}
    for op in loop.body.walk():
        for operand in op.operands:
            if not _defined_inside(operand, loop):
                captured.setdefault(operand, None)
    return list(captured)


class FreshNames:
    """Unused symbol names `base`, `base_1`, ...: the module's names are
    read once (a symbol lookup per candidate made outlining quadratic:
    7 of 13 s compiling a 200-op graph)."""

    def __init__(self, module: ModuleOp):
        self.taken = {
            op.sym_name.data
            for op in module.ops
            if isinstance(getattr(op, "sym_name", None), StringAttr)
        }
        self.next: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        counter = self.next.get(base, 0)
        name = base if counter == 0 else f"{base}_{counter}"
        while name in self.taken:
            counter += 1
            name = f"{base}_{counter}"
        self.next[base] = counter + 1
        self.taken.add(name)
        return name


def _as_index(value: SSAValue, before: Operation) -> SSAValue:
    if isinstance(value.type, IndexType):
        return value
    cast = tir.CastOp.create(operands=[value], result_types=[IndexType()])
    Rewriter.insert_op(cast, InsertPoint.before(before))
    return cast.result


def outline(
    loop: tir.ForOp, module: ModuleOp, function: tir.FuncOp, fresh_name: FreshNames
) -> tir.FuncOp:
    """Move `loop`'s body into a new function and call it in parallel."""
    captures = _captures(loop)
    cloned = [c for c in captures if isinstance(c.owner, _CLONED_DEFINITIONS)]
    by_value = [c for c in captures if isinstance(c.owner, tir.DefineVarOp)]
    passed = [c for c in captures if c not in cloned]

    # The call site: read captured vars, pass everything else as is.
    arguments = []
    for value in passed:
        if value in by_value:
            read = tir.ReadOp.create(operands=[value], result_types=[value.type.element_type])
            Rewriter.insert_op(read, InsertPoint.before(loop))
            arguments.append(read.result)
        else:
            arguments.append(value)

    # The outlined function: loop var (an index) first, then the passed captures.
    body = loop.body.block
    parameter_types = [a.type for a in arguments]
    entry = Block(arg_types=[IndexType(), *parameter_types])
    for op in [c.owner for c in cloned]:
        entry.add_op(op.clone())
    clones = dict(zip(cloned, [op.results[0] for op in entry.ops], strict=True))
    loop_var = entry.args[0]
    if not isinstance(loop.loop_var.type, IndexType):
        narrow = tir.CastOp.create(operands=[loop_var], result_types=[loop.loop_var.type])
        entry.add_op(narrow)
        loop_var = narrow.result
    for op in list(body.ops):
        op.detach()
        entry.add_op(op)
    entry.add_op(tir.ReturnOp.create())
    inside = {op for op in entry.walk()}

    def used_inside(use) -> bool:
        return use.operation in inside

    entry.args[0].name_hint = loop.loop_var.name_hint
    loop.loop_var.replace_all_uses_with(loop_var)
    for value, clone in clones.items():
        value.replace_uses_with_if(clone, used_inside)
    for value, parameter in zip(passed, entry.args[1:], strict=True):
        if value in by_value:
            for use in list(value.uses):
                if use.operation in inside and isinstance(use.operation, tir.ReadOp):
                    use.operation.result.replace_all_uses_with(parameter)
                    Rewriter.erase_op(use.operation)
        else:
            value.replace_uses_with_if(parameter, used_inside)
        parameter.name_hint = value.name_hint  # `value: f32`, as the seed prints it

    name = fresh_name(BODY_NAME)
    outlined = tir.FuncOp(name, [IndexType(), *parameter_types], None, Region(entry))
    module.body.block.insert_op_before(outlined, function)

    declaration = symbols.declared_in(module, PARALLEL_CALL)
    address = tir.FuncAddrOp.create(
        properties={"callee": SymbolRefAttr(StringAttr(name))}, result_types=[tir.PtrType()]
    )
    Rewriter.insert_op(address, InsertPoint.before(loop))
    bounds = [_as_index(b, loop) for b in (loop.start, loop.end, loop.step)]
    call = tir.CallOp.create(
        operands=[address.result, *bounds, *arguments],
        properties={"callee": SymbolRefAttr(declaration.sym_name)},
        result_types=[declaration.return_type],
    )
    evaluate = tir.EvaluateOp.create(operands=[call.result])
    Rewriter.replace_op(loop, [call, evaluate], new_results=[])
    return outlined


@dataclass(frozen=True)
class TirOutlineParallelPass(ModulePass):
    """Outline each parallel tir.for into a function run by sc_parallel_call_cpu."""

    name = "tir-outline-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Outlined bodies are new functions, visited in turn, so nested
        # parallel loops are outlined too (outermost first).
        functions = [f for f in op.body.block.ops if isinstance(f, tir.FuncOp)]
        fresh_name = FreshNames(op)
        while functions:
            function = functions.pop(0)
            loops = [
                loop
                for loop in function.body.walk()
                if isinstance(loop, tir.ForOp)
                and loop.parallel
                and not any(
                    isinstance(parent, tir.ForOp) and parent.parallel
                    for parent in _ancestors(loop, function)
                )
            ]
            for loop in loops:
                functions.append(outline(loop, op, function, fresh_name))


def _ancestors(op: Operation, stop: Operation):
    parent = op.parent_op()
    while parent is not None and parent is not stop:
        yield parent
        parent = parent.parent_op()
