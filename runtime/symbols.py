"""The runtime symbol table: every function generated code may call.

One table serves both sides: the compiler takes IR declarations from it
(`declaration(name)`), the conversion checks user declarations against it,
and the JIT loads their implementations (`native.ll`, LLVM IR compiled with
the program) and the libraries they use. Adding a runtime function means one
entry here and its body in `native.ll`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType, ModuleOp, i32
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from graphcompiler.dialects import tir
from graphcompiler.runtime.native import (  # noqa: F401 - the table's implementation
    NATIVE_LIBRARIES,
    NUM_THREADS_GLOBAL,
    native_source,
)


@dataclass(frozen=True)
class RuntimeSymbol:
    name: str
    params: tuple[Attribute, ...]
    result: Attribute | None
    doc: str
    variadic: bool = False
    native_params: tuple[Attribute, ...] | None = None
    """The parameters of the native function when they differ from the IR
    view (a variadic IR declaration receives its extra arguments packed)."""

    @property
    def llvm_params(self) -> tuple[Attribute, ...]:
        return self.native_params if self.native_params is not None else self.params

    def declaration(self) -> tir.FuncOp:
        """A tir declaration of this symbol, to put in a module that calls it."""
        return tir.FuncOp(self.name, self.params, self.result, variadic=self.variadic)

    def matches(self, function: tir.FuncOp) -> bool:
        return (
            tuple(function.function_type.inputs.data) == self.params
            and function.return_type == (self.result or tir.NoneType())
            and (function.variadic is not None) == self.variadic
        )


_ptr, _index, _i64 = tir.PtrType(), IndexType(), IntegerType(64)

RUNTIME_SYMBOLS: dict[str, RuntimeSymbol] = {
    symbol.name: symbol
    for symbol in (
        RuntimeSymbol("print_int", (i32,), None, "print an i32 and a newline"),
        RuntimeSymbol("print_float", (Float32Type(),), None, "print an f32 and a newline"),
        RuntimeSymbol("print_tensor", (_ptr, _index), None, "print `count` f32 values on a line"),
        RuntimeSymbol(
            "sc_thread_num",
            (),
            i32,
            "index of the calling thread in a parallel loop (0: the thread that started it)",
        ),
        RuntimeSymbol(
            "sc_clock_ns", (), _i64, "a monotonic clock in nanoseconds (tir-profile-kernels)"
        ),
        RuntimeSymbol("sc_aligned_alloc", (_index,), _ptr, "64-byte aligned allocation"),
        RuntimeSymbol("sc_aligned_free", (_ptr,), None, "free an sc_aligned_alloc block"),
        RuntimeSymbol(
            "sc_parallel_call_cpu",  # PARALLEL_CALL
            (_ptr, _index, _index, _index),
            None,
            "run body(i, captures...) for i in range(start, end, step) on the thread pool (dynamic grains)",
            variadic=True,
            native_params=(_ptr, _index, _index, _index, _ptr, _index),
        ),
        RuntimeSymbol(
            "sc_region_begin",  # REGION_BEGIN
            (),
            None,
            "queue this thread's parallel loops until sc_region_end (tir-parallel-regions)",
        ),
        RuntimeSymbol(
            "sc_region_end",  # REGION_END
            (),
            None,
            "run the queued parallel loops as the stages of one job: one fork, one join",
        ),
    )
}

PARALLEL_CALL = "sc_parallel_call_cpu"
"""The runtime function parallel loops are outlined into calls of."""

REGION_BEGIN, REGION_END = "sc_region_begin", "sc_region_end"
"""The runtime functions around a parallel region (tir-parallel-regions)."""


def declaration(name: str) -> tir.FuncOp:
    return RUNTIME_SYMBOLS[name].declaration()


def declared_in(module: ModuleOp, name: str) -> tir.FuncOp:
    """`module`'s declaration of runtime function `name`, added at its top
    if it has none yet."""
    existing = SymbolTable.lookup_symbol(module, name)
    if isinstance(existing, tir.FuncOp):
        return existing
    added = declaration(name)
    module.body.block.insert_op_before(added, module.body.block.first_op)
    return added
