"""tir-plan-memory: all local tensors of a function in one arena.

Runs after convert-graph-to-tir, on each tir.func: the tensors defined in
the function body (the graph's intermediates) get compile-time offsets in
one 64-byte aligned byte arena, placed over the scheduled order so that a
tensor reuses the space of tensors whose last use has passed. Placement is
best fit among the free blocks, as TVM's planner: a free block is reused
only if it is at most `match-range` times larger than the request, else the
arena grows. Each `tir.define_tensor` becomes a `tir.tensor_ptr` view of the
arena; the arena itself is one `tir.define_tensor` (so one allocation).

With `arena-argument`, the arena of each function no other function calls
(the entry a caller runs) becomes its last argument `%arena`, so the caller
allocates it once and reuses it across calls (graphcompiler.compile does)
rather than the function allocating and freeing it on every call. So does
a graph.loop's step function (called, and calling kernels): its caller
passes a tensor of its own arena, not one allocated per step. The
function then carries `tir.arena_bytes`, the size of that argument, which
the compiler reads (`arena_argument_bytes`) to allocate it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, IndexType, IntegerAttr, IntegerType, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from graphcompiler.dialects import tir
from graphcompiler.ir import pass_statistics
from graphcompiler.ir.pipeline import pass_option

ALIGNMENT = 64
ARENA_BYTES_ATTRIBUTE = "tir.arena_bytes"
"""On a function whose last argument is its arena: the arena's size."""


def arena_argument_bytes(module: ModuleOp, entry: str) -> int | None:
    """The size of the arena argument of tir function `entry` of `module`,
    None if it takes none."""
    for op in module.ops:
        if isinstance(op, tir.FuncOp) and op.sym_name.data == entry:
            size = op.attributes.get(ARENA_BYTES_ATTRIBUTE)
            return size.value.data if isinstance(size, IntegerAttr) else None
    return None


def _aligned(size: int) -> int:
    return (size + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


@dataclass
class ArenaPlanner:
    """Best-fit placement of [start, end) lifetimes in one growing arena."""

    match_range: int = 16
    size: int = 0
    free: list[tuple[int, int]] = field(default_factory=list)  # (offset, size), by offset

    def allocate(self, request: int) -> int:
        request = _aligned(request)
        fits = [
            (size, offset)
            for offset, size in self.free
            if request <= size <= request * self.match_range
        ]
        if not fits:
            offset, self.size = self.size, self.size + request
            return offset
        size, offset = min(fits)
        self.free.remove((offset, size))
        if size > request:
            self._release(offset + request, size - request)
        return offset

    def release(self, offset: int, request: int) -> None:
        self._release(offset, _aligned(request))

    def _release(self, offset: int, size: int) -> None:
        """Return a block, merging it with free neighbours."""
        self.free.append((offset, size))
        self.free.sort()
        merged: list[tuple[int, int]] = []
        for block_offset, block_size in self.free:
            if merged and merged[-1][0] + merged[-1][1] == block_offset:
                merged[-1] = (merged[-1][0], merged[-1][1] + block_size)
            else:
                merged.append((block_offset, block_size))
        if merged and merged[-1][0] + merged[-1][1] == self.size:  # a free tail shrinks the arena
            self.size = merged.pop()[0]
        self.free = merged


def _lifetimes(function: tir.FuncOp) -> dict[tir.DefineTensorOp, tuple[int, int]]:
    """[first, last] top-level op positions using each top-level local tensor
    (directly or through views of it)."""
    ops = list(function.body.block.ops)
    position = {op: index for index, op in enumerate(ops)}

    def top_level(op: Operation) -> Operation:
        while op.parent_op() is not function:
            op = op.parent_op()
        return op

    def last_use(value) -> int:
        """The last top-level op using `value`, or a view of it (a
        top-level tir.tensor_ptr, such as a reshape's); -1 if none."""
        direct = [position[top_level(use.operation)] for use in value.uses]
        views = [
            use.operation.result
            for use in value.uses
            if isinstance(use.operation, tir.TensorPtrOp) and use.operation.parent_op() is function
        ]
        return max([*direct, *map(last_use, views)], default=-1)

    lifetimes = {}
    for op in ops:
        if isinstance(op, tir.DefineTensorOp):
            lifetimes[op] = (position[op], max(position[op], last_use(op.result)))
    return lifetimes


def plan_function(
    function: tir.FuncOp, match_range: int, as_argument: bool = False
) -> tuple[int, int]:
    """Place `function`'s local tensors in one arena (a new last argument
    with `as_argument`); (arena bytes, sum of the tensors' bytes)."""
    lifetimes = _lifetimes(function)
    if not lifetimes:
        return 0, 0
    planner = ArenaPlanner(match_range)
    offsets: dict[tir.DefineTensorOp, int] = {}
    # the live tensors by their last use: those ending before a start are
    # popped, not searched for (an unrolled recurrence keeps hundreds live),
    # and released in the order they were allocated
    live: list[tuple[int, int, tir.DefineTensorOp]] = []
    for index, define in enumerate(sorted(lifetimes, key=lambda d: lifetimes[d])):
        start = lifetimes[define][0]
        ended = []
        while live and live[0][0] < start:
            ended.append(heapq.heappop(live)[1:])
        for _, done in sorted(ended, key=lambda entry: entry[0]):
            planner.release(offsets[done], tir.tensor_bytes(done.result.type))
        offsets[define] = planner.allocate(tir.tensor_bytes(define.result.type))
        heapq.heappush(live, (lifetimes[define][1], index, define))
    arena_size = max(
        planner.size, max(o + _aligned(tir.tensor_bytes(d.result.type)) for d, o in offsets.items())
    )
    arena_type = tir.TirTensorType([arena_size], IntegerType(8))
    block = function.body.block
    if as_argument:
        arena = block.insert_arg(arena_type, len(block.args))
        function.function_type = FunctionType.from_lists(
            [a.type for a in block.args], function.function_type.outputs.data
        )
        function.attributes[ARENA_BYTES_ATTRIBUTE] = IntegerAttr(arena_size, i64)
    else:
        arena = tir.DefineTensorOp.create(result_types=[arena_type]).result
        Rewriter.insert_op(arena.owner, InsertPoint.at_start(block))
    arena.name_hint = "arena"
    for define, offset in offsets.items():
        offset_op = tir.ConstOp.create(
            properties={"value": tir.IntegerAttr(offset, IndexType())}, result_types=[IndexType()]
        )
        view = tir.TensorPtrOp.create(
            operands=[arena, offset_op.result], result_types=[define.result.type]
        )
        name = define.result.name_hint
        Rewriter.replace_op(define, [offset_op, view], [view.result])
        offset_op.result.name_hint, view.result.name_hint = None, name
    return arena_size, sum(tir.tensor_bytes(d.result.type) for d in offsets)


@dataclass(frozen=True)
class TirPlanMemoryPass(ModulePass):
    """Place each function's intermediate tensors in one reused arena."""

    name = "tir-plan-memory"
    match_range: int = pass_option(
        16, "reuse a free block only if at most this many times larger than the tensor"
    )
    arena_argument: bool = pass_option(
        False, "the arena of each function no other calls becomes its last argument"
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arena_total = tensors_total = 0
        calls: dict[str, list[tir.CallOp]] = {}
        for call in op.walk():
            if isinstance(call, tir.CallOp):
                calls.setdefault(call.callee.string_value(), []).append(call)
        functions = [f for f in op.ops if isinstance(f, tir.FuncOp) and not f.is_declaration]
        defined = {f.sym_name.data for f in functions}
        for function in _callees_first(functions):
            name = function.sym_name.data
            entry = name not in calls
            # a graph.loop's step (called, and calling kernels, not only declarations
            # as kernels do): its callers pass its arena
            step = not entry and any(
                isinstance(o, tir.CallOp) and o.callee.string_value() in defined
                for o in function.walk()
            )
            arena, tensors = plan_function(
                function, self.match_range, self.arena_argument and (entry or step)
            )
            if self.arena_argument and step and arena:
                _pass_arena(calls[name], arena)
            arena_total += arena
            tensors_total += tensors
        pass_statistics.record(self, "arena-bytes", arena_total, "bytes of the arenas")
        pass_statistics.record(
            self, "intermediate-bytes", tensors_total, "bytes of the tensors placed in them"
        )


def _callees_first(functions: list[tir.FuncOp]) -> list[tir.FuncOp]:
    """`functions` with each after the functions it calls (a step function's
    arena size is known before its callers are planned)."""
    by_name = {f.sym_name.data: f for f in functions}
    ordered: list[tir.FuncOp] = []
    placed: set[str] = set()

    def place(function: tir.FuncOp) -> None:
        if function.sym_name.data in placed:
            return
        placed.add(function.sym_name.data)
        for call in function.walk():
            if isinstance(call, tir.CallOp) and call.callee.string_value() in by_name:
                place(by_name[call.callee.string_value()])
        ordered.append(function)

    for function in functions:
        place(function)
    return ordered


def _pass_arena(calls: list[tir.CallOp], size: int) -> None:
    """Give each call its callee's arena: a local tensor of the caller,
    defined before the caller's first top-level op holding such a call, so
    the caller's own planning places it (one per caller)."""
    arenas: dict[Operation, tir.DefineTensorOp] = {}
    for call in calls:
        caller = call.parent_op()
        while not isinstance(caller, tir.FuncOp):
            caller = caller.parent_op()
        if caller not in arenas:
            top = call
            while top.parent_op() is not caller:
                top = top.parent_op()
            define = tir.DefineTensorOp.create(
                result_types=[tir.TirTensorType([size], IntegerType(8))]
            )
            define.result.name_hint = "callee_arena"
            Rewriter.insert_op(define, InsertPoint.before(top))
            arenas[caller] = define
        call.operands = [*call.operands, arenas[caller].result]
