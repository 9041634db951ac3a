"""convert-tir-to-llvm and the translation to LLVM IR, a module's functions
dealt to worker processes.

Both are pure Python, on one core: ResNet-50's 99 functions took 5.4 s of
its 13 s compile while the other cores idled (LLVM itself already builds
parts of the program at once: runtime/jit/optimizer.py). A function's
conversion reads no other function's body (a call needs the callee's
signature only), so workers forked from the compiling process, each
seeing the module as it is without a copy, convert a share of the
functions each (the others declared) and send back their LLVM IR in
pieces (lowering/llvm/split.py), merged into one program. The big
constants are set aside here first, so that their bytes are hashed once
and never cross a pipe.

A worker does nothing but that Python work on objects of its own copy of
the process, and ends with os._exit: no lock another thread of the parent
held at the fork is taken, no atexit handler runs. Anything unusual (one
core, a small module, a worker that fails) returns None, and the caller
lowers in this process as before (a diagnostic is then reported from
there, as without workers). `GC_LOWERING_WORKERS=1` always does that
(a profiler sees the conversion then).
"""

from __future__ import annotations

import itertools
import os
import pickle
import signal
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

from graphcompiler.dialects import tir
from graphcompiler.ir.diagnostics import DiagnosticError
from graphcompiler.lowering.llvm.split import LlvmProgram
from graphcompiler.lowering.llvm.translate import (
    rename_addresses,
    set_globals_aside,
    translate_program,
)
from graphcompiler.lowering.tir_to_llvm import ModuleLowering
from graphcompiler.lowering.tir_to_llvm.memory import convert_global

MIN_FUNCTIONS = 8
"""Modules with fewer defined functions are converted here: a fork and a
pipe cost a few milliseconds, the conversion of a small module about as much."""

MAX_WORKERS = 8
"""Beyond this, the parent's merging and the pipes outweigh the shares."""


def lowering_workers() -> int:
    """GC_LOWERING_WORKERS, else the cores this process may run on (at most MAX_WORKERS)."""
    given = os.environ.get("GC_LOWERING_WORKERS", "")
    if given.strip().isdigit():
        return max(1, int(given))
    return min(MAX_WORKERS, len(os.sched_getaffinity(0)))


def worth_forking(
    module: ModuleOp, workers: int | None = None, min_functions: int | None = None
) -> bool:
    """Whether lower_in_parallel will convert `module` in workers (its
    workers and defined functions are enough)."""
    workers = lowering_workers() if workers is None else workers
    least = MIN_FUNCTIONS if min_functions is None else min_functions
    functions = sum(isinstance(op, tir.FuncOp) and not op.is_declaration for op in module.ops)
    return workers >= 2 and functions >= least and hasattr(os, "fork")


MIN_PRINTED_OPS = 256
"""Graphs with fewer ops are printed in the compiling process: printing
BERT-base's graph and its dot graph took 0.36 s, a fork a few ms."""


def many_ops(module: ModuleOp, workers: int | None = None) -> bool:
    """Whether `module` is big enough to print in a child (Forked), with a
    core for it."""
    workers = lowering_workers() if workers is None else workers
    if workers < 2 or not hasattr(os, "fork"):
        return False
    return sum(1 for _ in itertools.islice(module.walk(), MIN_PRINTED_OPS)) >= MIN_PRINTED_OPS


def lower_in_parallel(
    module: ModuleOp,
    external_data: dict[str, bytes],
    workers: int | None = None,
    min_functions: int | None = None,
) -> LlvmProgram | None:
    """The LLVM IR of a tir `module` (after the tir passes of LLVM_STAGE) as
    translate_program gives it for the module converted by
    convert-tir-to-llvm, its big constants added to `external_data`;
    None (and `module` unchanged) where it was not done in workers."""
    workers = lowering_workers() if workers is None else workers
    if not worth_forking(module, workers, min_functions):
        return None
    functions = [op for op in module.ops if isinstance(op, tir.FuncOp) and not op.is_declaration]
    try:
        converted = {
            op.sym_name.data: convert_global(op)
            for op in module.ops
            if isinstance(op, tir.GlobalOp)
        }
    except DiagnosticError:
        return None  # reported by the conversion in this process
    data: dict[str, bytes] = {}
    renamed = set_globals_aside(list(converted.values()), data)
    shares = _deal(functions, workers)
    programs = _run_forked(
        [lambda share=share: _convert_share(module, share, converted, renamed) for share in shares]
    )
    if programs is None:
        return None
    external_data.update(data)
    return LlvmProgram.merged(programs)


def _deal(functions: Sequence[tir.FuncOp], workers: int) -> list[set[str]]:
    """The functions in at most `workers` shares of about equal op counts,
    biggest first; a function and those only it calls (its outlined loop
    bodies) stay together, so LLVM may inline them into one another."""
    sizes, callees = {}, {}
    for function in functions:
        count, called = 0, []
        for op in function.walk():
            count += 1
            if isinstance(op, tir.CallOp | tir.FuncAddrOp):
                called.append(op.callee.root_reference.data)
        sizes[function.sym_name.data], callees[function.sym_name.data] = count, called
    callers: dict[str, set[str]] = {}
    for caller, called in callees.items():
        for callee in called:
            callers.setdefault(callee, set()).add(caller)

    def root(name: str) -> str:
        """The function whose unit `name` joins: its only caller's, unless
        that caller is called by none (an entry, which calls every kernel)."""
        seen = {name}
        while len(only := callers.get(name, set())) == 1:
            caller = next(iter(only))
            if caller not in callers or caller in seen:
                break
            name = caller
            seen.add(name)
        return name

    units: dict[str, set[str]] = {}
    for name in sizes:
        units.setdefault(root(name), set()).add(name)
    loads = [0] * min(workers, len(units))
    shares: list[set[str]] = [set() for _ in loads]
    for unit in sorted(units.values(), key=lambda u: -sum(sizes[n] for n in u)):
        lightest = loads.index(min(loads))
        shares[lightest] |= unit
        loads[lightest] += sum(sizes[n] for n in unit)
    return [share for share in shares if share]


def _convert_share(
    module: ModuleOp,
    share: set[str],
    converted: dict[str, llvm.GlobalOp],
    renamed: dict[str, str],
) -> LlvmProgram:
    """In a worker: the module's LLVM IR with the bodies of `share` only."""
    emitted: set[str] = set()

    def lower_global(op: tir.GlobalOp) -> llvm.GlobalOp | None:
        value = converted[op.sym_name.data]
        if value.sym_name.data in emitted:  # equal bytes: one global serves both
            return None
        emitted.add(value.sym_name.data)
        return value.clone()

    ModuleLowering(module, only=share, lower_global=lower_global).convert()
    rename_addresses(module, renamed)
    return translate_program(module)


def _run_forked(tasks: Sequence[Callable[[], Any]]) -> list[Any] | None:
    """Each task's result, computed in a forked child; None if any failed."""
    children: list[Forked] = []
    try:
        for task in tasks:
            child = Forked.start(task)
            if child is None:
                return None
            children.append(child)
        results = [child.result() for child in children]
        return None if any(result is None for result in results) else results
    finally:
        for child in children:  # after an error here: leave no worker behind
            child.cancel()


class Forked:
    """A task computed in a forked child, its result read back when wanted
    (the Tensor IR's text is printed so while the compile goes on)."""

    def __init__(self, pid: int, read_end: int):
        self.pid: int | None = pid
        self.read_end = read_end

    @classmethod
    def start(cls, task: Callable[[], Any]) -> Forked | None:
        """The child computing `task`, or None where none could be forked."""
        if not hasattr(os, "fork"):
            return None
        try:
            read_end, write_end = os.pipe()
            try:
                with warnings.catch_warnings():  # 3.12+ warns of forking with threads: see above
                    warnings.simplefilter("ignore", DeprecationWarning)
                    pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                raise
        except OSError:  # out of processes or memory: the caller does the work
            return None
        if pid == 0:
            _child(task, read_end, write_end)
        os.close(write_end)
        return cls(pid, read_end)

    def result(self) -> Any | None:
        """The task's value (waiting for it), or None if the child failed."""
        if self.pid is None:
            return None
        with os.fdopen(self.read_end, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return pickle.loads(payload) if status == 0 and payload else None

    def cancel(self) -> None:
        """Stop the child unless its result was read."""
        if self.pid is not None:
            os.close(self.read_end)
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = None


class Beside:
    """`render()`'s value, computed in a forked child while the caller goes
    on when `fork` (a big module's text: printing it in the process cost
    0.36 s of BERT-base's compile), else at once; a context manager that
    stops the child if its value was not wanted. The child sees the module
    as it was when it forked, as the value computed at once does."""

    def __init__(self, render: Callable[[], Any], fork: bool):
        self._child = Forked.start(render) if fork else None
        self._value = None if self._child is not None else render()

    def value(self, fallback: Callable[[], Any]) -> Any:
        """The value; `fallback()` if the child failed."""
        if self._child is None:
            return self._value
        return self._child.result() or fallback()

    def __enter__(self) -> Beside:
        return self

    def __exit__(self, *_) -> None:
        if self._child is not None:
            self._child.cancel()


def _child(task: Callable[[], Any], read_end: int, write_end: int) -> None:
    """Run `task` and write its pickled result; never returns."""
    status = 1
    try:
        os.close(read_end)
        payload = pickle.dumps(task(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        status = 0
    finally:
        os._exit(status)
