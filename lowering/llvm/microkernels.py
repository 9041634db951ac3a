"""Generated kernels' parameters, carried on their `llvm.func` declarations:
convert-tir-to-llvm records them there (`declaration`), the translation
collects them (`declared_kernels`) into `LlvmProgram.microkernels`, and the
JIT generates those kernels. The values travel with the IR (gc-opt output,
gc-translate input), never through a symbol name.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute

from graphcompiler.ir.diagnostics import Diagnostic, DiagnosticError, Severity
from graphcompiler.runtime.brgemm_routines import KERNEL_KINDS, kind_of
from graphcompiler.runtime.microkernels import GeneratedKernel

KINDS: dict[str, type] = {f"gc.{name}": kind for name, kind in KERNEL_KINDS.items()}
"""The declaration attribute of each kind of generated kernel."""
_POINTER = llvm.LLVMPointerType()


def declaration(kernel: GeneratedKernel) -> llvm.FuncOp:
    """`declare void @<name>(A, B, C, i64, i1[, prefetch])`, carrying the
    kernel's parameters."""
    prefetch = [_POINTER] if getattr(kernel, "prefetch", False) else []
    signature = llvm.LLVMFunctionType([_POINTER, _POINTER, _POINTER, i64, i1, *prefetch])
    function = llvm.FuncOp(kernel.name, signature, llvm.LinkageAttr("external"))
    function.attributes[f"gc.{kind_of(kernel)}"] = DictionaryAttr(
        {name: _attribute(value) for name, value in kernel.fields().items()}
    )
    return function


def _attribute(value: Any) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, str):
        return StringAttr(value)
    return DenseArrayBase.from_list(i64, list(value))


def _value(attribute: Attribute) -> Any:
    if isinstance(attribute, DenseArrayBase):
        return list(attribute.get_values())
    if isinstance(attribute, IntegerAttr) and attribute.type == i1:
        return bool(attribute.value.data)
    if isinstance(attribute, IntegerAttr):
        return attribute.value.data
    if isinstance(attribute, StringAttr):
        return attribute.data
    raise TypeError(f"unexpected {attribute}")


def declared_kernels(module: ModuleOp) -> tuple[GeneratedKernel, ...]:
    """The generated kernels `module` declares, in declaration order."""
    kernels = []
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp):
            continue
        for name, kind in KINDS.items():
            if name in op.attributes:
                kernels.append(_kernel(op, name, kind, op.attributes[name]))
    return tuple(kernels)


def _kernel(function: llvm.FuncOp, name: str, kind: type, parameters: Attribute):
    try:
        assert isinstance(parameters, DictionaryAttr)
        fields = {key: _value(value) for key, value in parameters.data.items()}
        kernel = kind.from_fields(fields)
    except (AssertionError, AttributeError, KeyError, TypeError, ValueError):
        kernel = None
    if kernel is None or kernel.name != function.sym_name.data:
        raise DiagnosticError(
            Diagnostic(
                Severity.ERROR,
                f"@{function.sym_name.data}: {name} = {parameters} does not describe this "
                "function's kernel",
            )
        )
    return kernel
