"""graph.loop in Tensor IR: a `tir.for` over the steps calling the step
function, which convert-graph-to-tir lowered like any graph function (its
inputs, then its outputs as out-parameters).

    copy initial states -> final states (A)        (the loop's results)
    for t in [0, S) by 2:                          (row S - 1 - t when reverse)
      call @step(A, &sequence[t]..., invariants..., B, &output[t]...)
      call @step(B, &sequence[t + 1]..., invariants..., A, &output[t + 1]...)
    if S is odd: the last step from A into B, and B copied into A

A step reads its states from one set of buffers and writes the new ones
to the other (a step may read a state after writing part of the new one:
an LSTM's cell), so the two alternate and nothing is copied per step. A
slice of a sequence, and of an output sequence, is a view at its row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Operation, SSAValue

from graphcompiler.dialects import graph, tir
from graphcompiler.dialects.tir.builder import TirBuilder
from graphcompiler.ir.diagnostics import DiagnosticError, op_diagnostic
from graphcompiler.lowering.graph_to_tir.kernel import tir_tensor_type

CopyCall = Callable[[SSAValue, SSAValue, TensorType], None]
"""Emits a copy kernel's call: (to, from, their type)."""


def lower_loop(
    builder: TirBuilder,
    op: graph.LoopOp,
    values: dict[SSAValue, SSAValue],
    targets: Sequence[SSAValue],
    copy: CopyCall,
) -> None:
    """Emit `op` into the current function: `values` holds its operands'
    buffers, `targets` its results' (final states, then output sequences)."""
    b = builder
    step = _step_function(b, op)
    count = len(op.states)
    finals, outputs = targets[:count], targets[count:]
    for state, final in zip(op.states, finals, strict=True):
        copy(final, values[state], state.type)
    other = []
    for state in op.states:
        buffer = b.make_tensor(tir_tensor_type(state.type).get_shape(), state.type.element_type)
        buffer.name_hint = "next_state"
        other.append(buffer)
    invariants = [values[v] for v in op.invariants]
    steps = op.steps

    def call_step(t: SSAValue, read: list[SSAValue], write: list[SSAValue]) -> None:
        index = b.sub(steps - 1, t) if op.is_reverse else t
        slices = [_row(b, values[s], s.type, index) for s in op.sequences]
        written = [
            _row(b, target, result.type, index)
            for target, result in zip(outputs, op.outputs[count:], strict=True)
        ]
        b.make_evaluate(b.make_call(step, [*read, *slices, *invariants, *write, *written]))

    if steps >= 2:
        with b.make_for(0, steps - steps % 2, 2) as t:
            call_step(t, finals, other)
            call_step(b.add(t, 1), other, finals)
    if steps % 2:
        call_step(b.const(steps - 1, IndexType()), finals, other)
        for state, final, buffer in zip(op.states, finals, other, strict=True):
            copy(final, buffer, state.type)


def _step_function(b: TirBuilder, op: graph.LoopOp) -> tir.FuncOp:
    name = op.body.root_reference.data
    for candidate in b.module.ops:
        if isinstance(candidate, tir.FuncOp) and candidate.sym_name.data == name:
            return candidate
    raise DiagnosticError(  # callees_first placed it later: it calls back here
        op_diagnostic(op, f"@{name} loops back into this function: recursion is not supported")
    )


def _row(b: TirBuilder, buffer: SSAValue, type_: TensorType, index: SSAValue) -> SSAValue:
    """Row `index` of a [S, ...] buffer, as a buffer of one step's shape."""
    shape = list(type_.get_shape())
    view = b.tensor_ptr(buffer, [index, *([0] * (len(shape) - 1))], shape[1:] or [1])
    view.name_hint = "step_slice"
    return view


def callees_first(functions: Sequence[Operation]) -> list[Operation]:
    """`functions` ordered so that a step function comes before the
    functions whose loops call it (depth first, in their order otherwise)."""
    by_name = {f.sym_name.data: f for f in functions}
    ordered: list[Operation] = []
    placed: set[str] = set()

    def place(function: Operation) -> None:
        name = function.sym_name.data
        if name in placed:
            return
        placed.add(name)
        for inner in function.walk():
            if isinstance(inner, graph.LoopOp):
                callee = by_name.get(inner.body.root_reference.data)
                if callee is not None:
                    place(callee)
        ordered.append(function)

    for function in functions:
        place(function)
    return ordered
