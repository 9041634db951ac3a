"""convert-tir-to-llvm: Tensor IR to xDSL's `llvm` dialect.

A small conversion driver in MLIR's terms:
- the *target*: after conversion only `LEGAL_DIALECTS` may remain;
- the *type converter*: `convert_type` (tensors, vars and pointers become
  `!llvm.ptr`, `index` becomes i64, `ui8` becomes i8, bf16 its i16 bits,
  vectors stay vectors);
- the *patterns*: one function per tir op (or op family) in `PATTERNS`,
  each emitting the llvm ops of one tir op, on operands already converted,
  through a `FunctionLowering`.

What has no one-to-one lowering is rewritten in tir first, by the patterns
of two tir passes that `LLVM_STAGE` runs before this one and that this pass
applies itself to what they left (so it also converts tir they never saw):
tir-legalize-types (auto-casts, bf16 math in f32, bf16 casts through f32)
and tir-expand-math (f32 exp, log, tanh, sin and cos as polynomials).

The patterns live in one module per op family:
- `statements.py`: `tir.for`, `tir.if`, `tir.stmts` become blocks and
  branches; vars become allocas;
- `expressions.py`: constants, arithmetic, comparisons, casts, select, fmadd;
- `vectors.py`: broadcasts, reductions, shuffles, permutex2var;
- `memory.py`: local tensors (allocas when small, runtime allocations freed
  when their block ends when large), loads, stores, addresses, globals;
- `calls.py`: calls (of LLVM intrinsics too) and the parallel call, whose
  captures are packed into a stack struct that a generated wrapper unpacks
  for the outlined body;
- `brgemm.py`: the brgemm ops, calls of kernels generated for them.
`types.py` holds the type converter, `function.py` the `FunctionLowering`.
The first op without a pattern stops the conversion with a diagnostic.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from graphcompiler.dialects import tir
from graphcompiler.lowering.tir_to_llvm import (
    brgemm,
    calls,
    expressions,
    memory,
    statements,
    vectors,
)
from graphcompiler.lowering.tir_to_llvm.brgemm import KernelDeclarations
from graphcompiler.lowering.tir_to_llvm.calls import CAPTURE_SLOT_BYTES
from graphcompiler.lowering.tir_to_llvm.function import (
    FunctionLowering,
    Pattern,
    declare_function,
)
from graphcompiler.lowering.tir_to_llvm.memory import HEAP_THRESHOLD_BYTES, convert_global
from graphcompiler.lowering.tir_to_llvm.types import LEGAL_DIALECTS, _fail, convert_type
from graphcompiler.passes.tir.expand_math import expand_math, is_llvm_intrinsic
from graphcompiler.passes.tir.legalize_types import legalize_types
from graphcompiler.runtime.symbols import RUNTIME_SYMBOLS

__all__ = [
    "CAPTURE_SLOT_BYTES",
    "HEAP_THRESHOLD_BYTES",
    "LEGAL_DIALECTS",
    "PATTERNS",
    "ConvertTirToLlvmPass",
    "FunctionLowering",
    "ModuleLowering",
    "convert_type",
]

PATTERNS: dict[type[Operation], Pattern] = {
    **statements.PATTERNS,
    **memory.PATTERNS,
    **expressions.PATTERNS,
    **vectors.PATTERNS,
    **calls.PATTERNS,
    **brgemm.PATTERNS,
}


@dataclass
class ModuleLowering(KernelDeclarations):
    """Converts a module's tir functions and globals, collecting the extra
    llvm functions (parallel wrappers, runtime declarations) they need."""

    module: ModuleOp
    extra: list[Operation] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)
    wrappers: dict[str, str] = field(default_factory=dict)
    patterns: Mapping[type[Operation], Pattern] = field(default_factory=lambda: PATTERNS)
    only: Collection[str] | None = None
    """The functions whose bodies to convert; the module's other functions
    are declared (another process converts them: driver/parallel_lowering.py).
    None: all."""
    lower_global: Callable[[tir.GlobalOp], llvm.GlobalOp | None] = convert_global
    """The llvm global of a tir global, or None to leave it out."""

    def require_runtime(self, name: str) -> None:
        """Declare runtime function `name` unless the module already does."""
        if name in self.declared:
            return
        self.declared.add(name)
        symbol = RUNTIME_SYMBOLS[name]
        inputs = [convert_type(t) for t in symbol.llvm_params]
        result = None if symbol.result is None else convert_type(symbol.result)
        self.extra.append(
            llvm.FuncOp(name, llvm.LLVMFunctionType(inputs, result), llvm.LinkageAttr("external"))
        )

    def convert(self) -> None:
        converted: list[Operation] = []
        for op in self.module.body.block.ops:
            if isinstance(op, tir.FuncOp) and op.is_declaration:
                if is_llvm_intrinsic(op.sym_name.data):
                    continue  # its calls become llvm.call_intrinsic
                # Runtime functions are declared with their native signature.
                self.check_declaration(op)
                self.require_runtime(op.sym_name.data)
            elif isinstance(op, tir.FuncOp):
                if self.only is None or op.sym_name.data in self.only:
                    converted.append(FunctionLowering(self, op).build())
                else:
                    converted.append(declare_function(op))
            elif isinstance(op, tir.GlobalOp):
                if (value := self.lower_global(op)) is not None:
                    converted.append(value)
            elif op.dialect_name() in LEGAL_DIALECTS:
                converted.append(op.clone())
            else:
                raise _fail(
                    op,
                    f"cannot be converted to the llvm dialect (legal dialects: {', '.join(LEGAL_DIALECTS)})",
                )
        block = self.module.body.block
        for op in list(block.ops):
            op.detach()
            op.erase(safe_erase=False)
        block.add_ops([*converted, *self.extra])

    def check_declaration(self, op: tir.FuncOp) -> None:
        symbol = RUNTIME_SYMBOLS.get(op.sym_name.data)
        if symbol is None:
            known = ", ".join(sorted(RUNTIME_SYMBOLS))
            raise _fail(
                op,
                f"declares @{op.sym_name.data}, which is neither defined in this module nor a runtime function ({known}) nor an LLVM intrinsic (@llvm.*)",
            )
        if not symbol.matches(op):
            raise _fail(
                op,
                f"declares @{symbol.name} with a signature different from the runtime's {symbol.declaration().function_type}",
            )


@dataclass(frozen=True)
class ConvertTirToLlvmPass(ModulePass):
    """Convert Tensor IR (after tir-outline-parallel) to the llvm dialect."""

    name = "convert-tir-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # What tir-legalize-types and tir-expand-math left (all of it when
        # they did not run): one walk each when nothing is.
        legalize_types(op)
        expand_math(op)
        ModuleLowering(op).convert()
