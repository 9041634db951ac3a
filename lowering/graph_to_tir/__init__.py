"""convert-graph-to-tir: each graph function becomes a Tensor IR module part
(seed 000).

    func.func @main(%in0, %in1) -> (...)      tir.func @main(%in0, %in1, %out0) {
      %0 = graph.matmul %in0, %in1       ->     %matmul_out = tir.define_tensor
      %1 = graph.add %0, %in1                   tir.call @matmul__1(%matmul_out, %in0, %in1)
      func.return %1                            tir.call @add__2(%out0, %matmul_out, %in1)
                                              }
                                              tir.func @matmul__1(...) { brgemm tiles }
                                              tir.func @add__2(...) { vectorized loops }

The entry takes the graph inputs, then the outputs as out-parameters; each
op becomes a kernel function (templates.py) called with its outputs first,
then its inputs; intermediate tensors are local tensors of the entry;
constants become globals. An op of the same structure as one lowered
before (a model's repeated layers) calls that op's kernel instead of
building its own (kernel_reuse.py); kernels still identical but for the
globals they read are kept once (dedupe.py). Ops are called in block order
(the scheduler decides that order). An output that is also an input, or returned twice,
is copied. Anything that is not a graph op (or func.return) is left for the
diagnostic: the graph dialect is illegal after this pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.ir.diagnostics import Diagnostic, DiagnosticError, Severity, op_diagnostic
from graphcompiler.ir.pipeline import pass_option
from graphcompiler.lowering.graph_to_tir.dedupe import dedupe_kernels
from graphcompiler.lowering.graph_to_tir.kernel import Kernel, Operand, tir_tensor_type
from graphcompiler.lowering.graph_to_tir.kernel_reuse import KernelReuse, structure_key
from graphcompiler.lowering.graph_to_tir.loop import callees_first, lower_loop
from graphcompiler.lowering.graph_to_tir.scalar_math import type_limit
from graphcompiler.lowering.graph_to_tir.templates import (
    BLOCKED_FORMAT_OPS,
    COPY,
    TEMPLATES,
    ZEROS,
    empty_contraction,
)
from graphcompiler.target.description import Target, get_target

_COPY_KEY_OP = graph.YieldOp.create()
"""What a loop's state copies are keyed by (kernel_reuse.py): one copy
kernel per type, whichever loop copies."""


def _fail(op: Operation, message: str) -> DiagnosticError:
    return DiagnosticError(op_diagnostic(op, message))


def _constant_value(builder: TirBuilder, value: SSAValue) -> Attribute | None:
    """The initial value of the global `value` refers to, if it is one."""
    owner = value.owner
    if not isinstance(owner, tir.GlobalRefOp):
        return None
    name = owner.global_name.root_reference.data
    target = builder.global_named(name) or SymbolTable.lookup_symbol(owner, owner.global_name)
    return target.initial_value if isinstance(target, tir.GlobalOp) else None


@dataclass
class _FunctionLowering:
    """Builds the entry and kernels of one graph function."""

    builder: TirBuilder
    function: func.FuncOp
    counter: list[int]
    target: Target
    reuse: KernelReuse
    reshaped_in_place: dict[Operation, SSAValue] = field(default_factory=dict)
    """Returned reshapes whose input was computed into their out-param."""

    def kernel_name(self, base: str) -> str:
        self.counter[0] += 1
        return f"{base}__{self.counter[0]}"

    def call_kernel(
        self,
        name: str,
        template,
        op: Operation,
        outputs: list[tuple[SSAValue, TensorType]],
        inputs: list[tuple[SSAValue, TensorType]],
    ) -> None:
        """Define kernel `name` with `template` and call it from the entry
        (no kernel when the outputs are empty: there is nothing to compute)."""
        if all(math.prod(t.get_shape()) == 0 for _, t in outputs):
            return
        b = self.builder
        params = [tir_tensor_type(t) for _, t in (*outputs, *inputs)]
        constants = [_constant_value(b, v) for v, _ in inputs]
        key = structure_key(template, op, params, constants)
        if self.reuse.call(key, [v for v, _ in (*outputs, *inputs)], constants):
            return
        with b.at_end_of(b.module.body.block), b.make_func(name, params) as args:
            for index, arg in enumerate(args):
                arg.name_hint = (
                    f"out{index}" if index < len(outputs) else f"in{index - len(outputs)}"
                )
            kernel = Kernel(
                b,
                [Operand(a, t) for a, (_, t) in zip(args, outputs, strict=False)],
                [
                    Operand(a, t, c)
                    for a, (_, t), c in zip(args[len(outputs) :], inputs, constants, strict=True)
                ],
                self.target,
            )
            template(kernel, op)
            b.make_return()
        callee = b.module.body.block.last_op
        call = b.make_call(callee, [v for v, _ in (*outputs, *inputs)])
        b.make_evaluate(call)
        self.reuse.remember(key, callee, kernel, call.owner)

    def lower(self) -> None:
        b = self.builder
        if not self.function.body.blocks:  # more than one: the verifier reports it
            raise _fail(self.function, "a graph function needs a body of exactly one block")
        block = self.function.body.block
        returned = block.last_op
        if not isinstance(returned, func.ReturnOp):
            raise _fail(self.function, "a graph function must end with func.return")
        input_types = [a.type for a in block.args]
        output_types = [v.type for v in returned.operands]
        for role, types in (("argument", input_types), ("result", output_types)):
            for index, type_ in enumerate(types):
                if not isinstance(type_, TensorType):
                    raise _fail(
                        self.function,
                        f"{role} #{index} has type {type_}: graph functions take and return tensors",
                    )
        params = [tir_tensor_type(t) for t in (*input_types, *output_types)]
        with b.make_func(self.function.sym_name.data, params) as args:
            values: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=False))
            out_params = args[len(input_types) :]
            for arg, graph_arg in zip(args, block.args, strict=False):
                arg.name_hint = graph_arg.name_hint
            for index, out in enumerate(out_params):
                out.name_hint = f"out{index}" if len(out_params) > 1 else "out"
            # Each returned op result is computed straight into its first out-param.
            destination: dict[SSAValue, SSAValue] = {}
            for value, out in zip(returned.operands, out_params, strict=True):
                if (
                    isinstance(value.owner, Operation)
                    and value not in destination
                    and not isinstance(value.owner, graph.ConstantOp)
                ):
                    destination[value] = out
            self._compute_reshaped_in_place(destination)
            for op in block.ops:
                if op is returned:
                    break
                self.lower_op(op, values, destination)
            for value, out in zip(returned.operands, out_params, strict=True):
                if values[value] is not out:
                    self.call_kernel(
                        self.kernel_name("copy"),
                        COPY,
                        returned,
                        [(out, value.type)],
                        [(values[value], value.type)],
                    )
            b.make_return()

    def _compute_reshaped_in_place(self, destination: dict[SSAValue, SSAValue]) -> None:
        """A returned reshape of a value only it reads: that value is
        computed into a view of the out-param with its own shape, and the
        reshape copies nothing (a depth-to-space's transpose writes the
        output itself)."""
        pending = list(destination.items())
        while pending:
            value, out = pending.pop()
            op = value.owner
            if not isinstance(op, graph.ReshapeOp) or len(list(op.operands[0].uses)) != 1:
                continue
            source = op.operands[0]
            types = (source.type, value.type)
            if (
                any(isinstance(t.encoding, graph.FormatAttr) for t in types)
                or not isinstance(source.owner, Operation)
                or isinstance(source.owner, graph.ConstantOp)
                or source in destination
            ):
                continue
            shape = tir_tensor_type(source.type).get_shape()
            view = self.builder.tensor_ptr(out, [0] * len(out.type.get_shape()), shape)
            view.name_hint = "out_view"
            destination[source] = view
            self.reshaped_in_place[op] = out
            pending.append((source, view))

    def lower_op(
        self, op: Operation, values: dict[SSAValue, SSAValue], destination: dict[SSAValue, SSAValue]
    ) -> None:
        b = self.builder
        if isinstance(op, graph.ConstantOp):
            name = f"{self.function.sym_name.data}_constant_{self.counter[0] + 1}"
            self.counter[0] += 1
            buffer_type = tir_tensor_type(op.result.type)
            with b.at_end_of(b.module.body.block):
                constant = b.make_global(name, buffer_type, _buffer_value(op.value, buffer_type))
            b.module.body.block.detach_op(constant)
            b.module.body.block.insert_op_before(constant, b.module.body.block.first_op)
            values[op.result] = b.global_ref(constant)
            return
        if self._as_view(op, values, destination):
            return
        if isinstance(op, graph.LoopOp):
            self._lower_loop(op, values, destination)
            return
        template = ZEROS if empty_contraction(op) else TEMPLATES.get(type(op))
        if template is None:
            raise _fail(
                op,
                "cannot be converted to Tensor IR: no lowering template (convert-graph-to-tir handles graph ops)",
            )
        members = op.body.block.ops if isinstance(op, graph.FusedOp) else []
        for member in (op, *members):
            if (reason := type_limit(member)) is not None:
                raise _fail(member, reason)
        operand_types = [*(o.type for o in op.operands), *(r.type for r in op.results)]
        if type(op) not in BLOCKED_FORMAT_OPS and any(
            isinstance(t.encoding, graph.FormatAttr) for t in operand_types
        ):
            raise _fail(op, "blocked memory formats are only supported by element-wise ops so far")
        base = op.name.removeprefix("graph.")
        outputs = []
        for result in op.results:
            target = destination.get(result)
            if target is None:
                target = b.make_tensor(
                    tir_tensor_type(result.type).get_shape(), result.type.element_type
                )
                target.name_hint = f"{base}_out"
            values[result] = target
            outputs.append((target, result.type))
        inputs = [(values[o], o.type) for o in op.operands]
        self.call_kernel(self.kernel_name(base), template, op, outputs, inputs)

    def _lower_loop(
        self,
        op: graph.LoopOp,
        values: dict[SSAValue, SSAValue],
        destination: dict[SSAValue, SSAValue],
    ) -> None:
        targets = []
        for result in op.results:
            target = destination.get(result)
            if target is None:
                target = self.builder.make_tensor(
                    tir_tensor_type(result.type).get_shape(), result.type.element_type
                )
                target.name_hint = "loop_out"
            values[result] = target
            targets.append(target)

        def copy(to: SSAValue, source: SSAValue, type_: TensorType) -> None:
            self.call_kernel(
                self.kernel_name("copy"), COPY, _COPY_KEY_OP, [(to, type_)], [(source, type_)]
            )

        lower_loop(self.builder, op, values, targets, copy)

    def _as_view(
        self, op: Operation, values: dict[SSAValue, SSAValue], destination: dict[SSAValue, SSAValue]
    ) -> bool:
        """A reshape of a plain buffer is a view of it (the same elements in
        the same order), not a copy; so is a slice that keeps one contiguous
        run of it (a time step of a recurrent layer's inputs, a chunk along
        the first dim). tir-plan-memory keeps the buffer live while the view
        is used. A returned slice is still copied into its out-param, and so
        is a returned reshape unless its input was computed into that
        out-param (_compute_reshaped_in_place)."""
        if op in self.reshaped_in_place:  # its input was computed into its destination
            values[op.result] = self.reshaped_in_place[op]
            return True
        if not isinstance(op, graph.ReshapeOp | graph.SliceOp) or op.result in destination:
            return False
        types = (op.operands[0].type, op.result.type)
        if any(isinstance(t.encoding, graph.FormatAttr) for t in types):
            return False
        source = values[op.operands[0]]
        start = [0] * len(source.type.get_shape())
        if isinstance(op, graph.SliceOp):
            start = _contiguous_start(op)
            if start is None:
                return False
        shape = tir_tensor_type(op.result.type).get_shape()
        view = self.builder.tensor_ptr(source, start, shape)
        view.name_hint = f"{op.name.removeprefix('graph.')}_view"
        values[op.result] = view
        return True


def _contiguous_start(op: graph.SliceOp) -> list[int] | None:
    """Where the slice starts, if what it keeps is one contiguous run of its
    input (unit steps; one index in each dim before some dim, every index
    in each dim after it), else None."""
    shape = list(op.input.type.get_shape())
    ranges = op.ranges(shape)
    if not shape or any(r.step != 1 for r in ranges) or 0 in [len(r) for r in ranges]:
        return None
    partial = [d for d, r in enumerate(ranges) if len(r) != shape[d]]
    first = partial[0] if partial else len(shape)
    if any(len(r) != 1 for r in ranges[:first]) or any(
        len(ranges[d]) != shape[d] for d in range(first + 1, len(shape))
    ):
        return None
    return [r.start for r in ranges]


def _buffer_value(
    value: DenseIntOrFPElementsAttr, buffer_type: tir.TirTensorType
) -> DenseIntOrFPElementsAttr:
    """A constant's value in its buffer's shape (a rank-0 tensor is a buffer of one element)."""
    if tuple(value.type.get_shape()) == buffer_type.get_shape():
        return value
    type_ = TensorType(value.get_element_type(), buffer_type.get_shape())
    return DenseIntOrFPElementsAttr.from_list(type_, list(value.get_values()))


def convert_graph_to_tir(
    module: ModuleOp, target: Target | None = None, blob_constants: bool = False
) -> None:
    """Replace every graph function of `module` by its Tensor IR, with
    kernels generated for `target` (default: GC_TARGET, else the host).
    `blob_constants`: big packed weights become #tir.blob values, bound in
    place by the JIT but not printable as parseable text (compile()'s
    choice; gc-opt keeps dense literals)."""
    functions = callees_first([op for op in module.ops if isinstance(op, func.FuncOp)])
    builder = TirBuilder(module)
    builder.blob_constants = blob_constants
    counter = [0]
    target = target or get_target()
    reuse = KernelReuse(builder)
    for function in functions:
        _FunctionLowering(builder, function, counter, target, reuse).lower()
        function.detach()
        function.erase()
    _drop_unread_constants(module)
    dedupe_kernels(module, {f.sym_name.data for f in functions})
    for op in module.walk():
        if op.dialect_name() == "graph":
            raise _fail(op, "is left after convert-graph-to-tir")


def _drop_unread_constants(module: ModuleOp) -> None:
    """A kernel that packed a constant at compile time (matmul, conv) never
    reads the argument carrying the constant: drop such parameters, then
    the globals nothing refers to any more. Each weight was otherwise
    emitted twice, unpacked and unread beside its packed copy."""
    kernels = {
        f.sym_name.data: f for f in module.ops if isinstance(f, tir.FuncOp) and not f.is_declaration
    }
    calls: dict[str, list[tir.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, tir.CallOp) and op.callee.root_reference.data in kernels:
            calls.setdefault(op.callee.root_reference.data, []).append(op)
    for name, kernel_calls in calls.items():
        kernel = kernels[name]
        block = kernel.body.block
        unread = {  # a kernel reused by several ops: unread in every call
            index
            for index, argument in enumerate(block.args)
            if not argument.uses
            and all(isinstance(call.args[index].owner, tir.GlobalRefOp) for call in kernel_calls)
        }
        if not unread:
            continue
        for index in sorted(unread, reverse=True):
            block.erase_arg(block.args[index])
        kernel.function_type = FunctionType.from_lists(
            [a.type for a in block.args], kernel.function_type.outputs.data
        )
        for call in kernel_calls:
            call.operands = [v for index, v in enumerate(call.args) if index not in unread]
    referenced = set()
    for op in list(module.walk()):
        if isinstance(op, tir.GlobalRefOp):
            if op.result.uses:
                referenced.add(op.global_name.root_reference.data)
            else:
                op.detach()
                op.erase()
    for op in list(module.ops):
        if isinstance(op, tir.GlobalOp) and op.sym_name.data not in referenced:
            op.detach()
            op.erase()


@dataclass(frozen=True)
class ConvertGraphToTirPass(ModulePass):
    """Lower graph functions to Tensor IR: an entry plus one kernel per op."""

    name = "convert-graph-to-tir"

    target: str = pass_option(
        "", "host, avx512, avx2 or generic (default: GC_TARGET, else the host)"
    )
    """host, avx512, avx2 or generic; empty: GC_TARGET, else the host."""
    blob_constants: bool = pass_option(
        False, "packed weights from 1 MiB on as #tir.blob (the JIT's buffers; text names them)"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = get_target(self.target)
        except ValueError as error:
            raise DiagnosticError(Diagnostic(Severity.ERROR, str(error))) from None
        convert_graph_to_tir(op, target, self.blob_constants)
