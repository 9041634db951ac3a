"""The `llvm` dialect to LLVM IR text, through xDSL's llvmlite translator.

xDSL 0.74's translator (xdsl.backend.llvm) covers what our lowering emits,
with two gaps whose workarounds live here and only here (`_convert_module`
runs xDSL's translation with our op conversion wrapped around xDSL's):
- indirect calls (`llvm.call` through a pointer) are emitted as
  `call <ret> %fnptr(<args>)`;
- some ops (`llvm.getelementptr`, `llvm.alloca`) yield
  *typed* llvmlite pointers (`float*`), and storing a vector or a pointer
  through them then fails llvmlite's type check; every pointer result is
  made opaque (`ptr`), which is what the llvm dialect means. The printed IR
  is the same: llvmlite prints both kinds as `ptr`;
- `llvm.fcmp` and `llvm.select` only take scalars (conditions) in xDSL 0.74;
  our `VectorFCmpOp` and `VectorSelectOp` (dialects/llvm.py) also take
  vectors and are translated with xDSL's own fcmp/select translation;
- a global *definition* with external linkage is printed `external global T
  init`, which LLVM reads as a malformed declaration; its linkage keyword is
  dropped (the default linkage is external).
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.binding as llvm_binding
import llvmlite.ir as ir
import numpy as np
from xdsl.backend.llvm import convert as xdsl_convert
from xdsl.backend.llvm.convert_op import _convert_fcmp, _convert_select
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)

from graphcompiler.dialects.llvm import UIToFPOp, VectorFCmpOp, VectorSelectOp
from graphcompiler.dialects.tir.blob import BlobAttr
from graphcompiler.ir.diagnostics import Diagnostic, DiagnosticError, Severity
from graphcompiler.lowering.llvm.microkernels import declared_kernels
from graphcompiler.lowering.llvm.split import LlvmProgram
from graphcompiler.runtime.content_digest import content_digests, content_name


class _IndirectCall(ir.instructions.Instruction):
    """`call <ret> %callee(<args>)` with an explicit function type: llvmlite
    only calls values whose type names the function (opaque pointers don't)."""

    def __init__(self, parent, function_type: ir.FunctionType, callee, args, name=""):
        super().__init__(parent, function_type.return_type, "call", [callee, *args], name=name)
        self.callee_type = function_type

    def descr(self, buf: list[str]) -> None:
        callee, *args = self.operands
        arguments = ", ".join(f"{a.type} {a.get_reference()}" for a in args)
        buf.append(f"call {self.callee_type.return_type} {callee.get_reference()}({arguments})\n")


def _convert_op_with_workarounds(op, builder, val_map, block_map=None):
    if isinstance(op, VectorFCmpOp):
        _convert_fcmp(op, builder, val_map)  # llvmlite's fcmp handles vectors
        return
    if isinstance(op, VectorSelectOp):
        _convert_select(op, builder, val_map)
        return
    if isinstance(op, UIToFPOp):
        val_map[op.result] = builder.uitofp(val_map[op.arg], convert_type(op.result.type))
        return
    if isinstance(op, llvm.CallOp) and op.callee is None:
        callee, *args = (val_map[a] for a in op.args)
        function_type = op.var_callee_type
        llvm_type = ir.FunctionType(
            convert_type(function_type.output), [convert_type(t) for t in function_type.inputs]
        )
        instruction = _IndirectCall(builder.block, llvm_type, callee, args)
        builder._insert(instruction)
        if op.returned is not None:
            val_map[op.returned] = instruction
        return
    _xdsl_convert_op(op, builder, val_map, block_map)
    for result in op.results:
        value = val_map.get(result)
        # Only instructions: globals and functions are shared llvmlite objects.
        if (
            isinstance(value, ir.Instruction)
            and isinstance(value.type, ir.PointerType)
            and not value.type.is_opaque
        ):
            value.type = ir.PointerType(addrspace=value.type.addrspace)


_xdsl_convert_op = xdsl_convert.convert_op


def _convert_module(module: ModuleOp) -> ir.Module:
    """xDSL's `convert_module`, with `_convert_op_with_workarounds` for each
    op. Calling it rather than swapping xDSL's `convert_op` for the time of a
    translation keeps concurrent translations (compiles from several Python
    threads) independent."""
    llvm_module = ir.Module()
    llvm_module.triple = llvm_binding.get_default_triple()
    functions = []
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            if isinstance(op.value, BlobAttr):  # not set aside: printed in the IR text
                op.value = _dense_of_blob(op)
            xdsl_convert._convert_global(op, llvm_module)
            if op.alignment is not None:  # xDSL's translation drops it
                llvm_module.get_global(op.sym_name.data).align = op.alignment.value.data
        elif isinstance(op, llvm.FuncOp):
            functions.append(op)
        else:
            raise NotImplementedError(f"Conversion not implemented for op: {op.name}")
    for function in functions:
        xdsl_convert._declare_func(function, llvm_module)
    for function in functions:
        if function.body.blocks:
            _convert_function(function, llvm_module)
    return llvm_module


def _convert_function(op: llvm.FuncOp, llvm_module: ir.Module) -> None:
    """xDSL's `_convert_func` (blocks first, then phis for block arguments,
    then the ops), calling our op conversion."""
    function = llvm_module.get_global(op.sym_name.data)
    block_map: dict = {}
    val_map: dict = {}
    for index, block in enumerate(op.body.blocks):
        block_map[block] = function.append_basic_block(name=block.name_hint or "")
        if index == 0:
            val_map.update(zip(block.args, function.args, strict=True))
    for block in list(op.body.blocks)[1:]:
        builder = ir.IRBuilder(block_map[block])
        for arg in block.args:
            val_map[arg] = builder.phi(convert_type(arg.type))
    for block in op.body.blocks:
        builder = ir.IRBuilder(block_map[block])
        if block_map[block].instructions:
            builder.position_after(block_map[block].instructions[-1])
        for inner in block.ops:
            _convert_op_with_workarounds(inner, builder, val_map, block_map)


EXTERNAL_DATA_MIN_BYTES = 256
"""Tensor globals from this size on can be left out of the LLVM IR text.
Printing a constant through llvmlite costs about 10 us an element, and LLVM
parses it again: BERT-base's biases and norm weights (768-3072 floats,
below the former 16 KiB) took 0.65 s of a 9.6 s compile. Smaller ones
(scalars, shapes) stay in the text, where LLVM can see their values."""


def set_data_aside(module: ModuleOp, external_data: dict[str, bytes]) -> None:
    """Big dense initializers leave the module for `external_data`: each
    such global becomes an external declaration named by its content
    (`gc.data.<digest>`), which the JIT binds to one copy of the bytes per
    process (runtime/jit/shared_data.py): two compiles of one model (a new
    input shape) and two equal tensors of one model share their memory."""
    globals_ = [op for op in module.ops if isinstance(op, llvm.GlobalOp)]
    renamed = set_globals_aside(globals_, external_data)
    declared = set(renamed.values())
    seen: set[str] = set()
    for op in globals_:
        name = op.sym_name.data
        if name in declared and name in seen:  # the same bytes again: one global serves both
            op.detach()
            op.erase()
        seen.add(name)
    rename_addresses(module, renamed)


def set_globals_aside(
    globals_: Sequence[llvm.GlobalOp], external_data: dict[str, bytes]
) -> dict[str, str]:
    """`set_data_aside` for the globals themselves: each big one becomes an
    external declaration, its bytes in `external_data`. Returns the new
    name of each, by old name (globals of equal bytes get one name: keep
    one of them)."""
    big = [
        (op, data) for op in globals_ if len(data := _initial_bytes(op)) >= EXTERNAL_DATA_MIN_BYTES
    ]
    renamed: dict[str, str] = {}
    for (op, data), digest in zip(big, content_digests([data for _, data in big]), strict=True):
        name = content_name(digest)
        renamed[op.sym_name.data] = name
        external_data.setdefault(name, data)
        op.sym_name = StringAttr(name)
        del op.properties["value"]
        op.linkage = llvm.LinkageAttr("external")
    return renamed


def _initial_bytes(op: llvm.GlobalOp) -> bytes | memoryview:
    """The bytes of a tensor global's initial value as the code reads them
    from memory (a blob's without a copy); empty for any other global. An
    i1 is a byte of 0 or 1 in memory, but xDSL stores `true` as 0xFF: code
    reading 0xFF as i1 went wrong where LLVM combined masks as bytes (a
    BERT attention mask at 256 tokens, its first external i1 constant)."""
    if isinstance(op.value, BlobAttr):
        return op.value.data.data
    if not isinstance(op.value, DenseIntOrFPElementsAttr):
        return b""
    data = op.value.data.data
    if op.value.get_element_type() == IntegerType(1):
        return (np.frombuffer(data, np.uint8) != 0).astype(np.uint8).tobytes()
    return data


def _dense_of_blob(op: llvm.GlobalOp) -> DenseIntOrFPElementsAttr:
    """A blob global's value as a dense initializer (its bytes copied)."""
    global_type = op.global_type
    assert isinstance(global_type, llvm.LLVMArrayType) and isinstance(op.value, BlobAttr)
    flat = TensorType(global_type.type, [global_type.size.data])
    return DenseIntOrFPElementsAttr(flat, BytesAttr(op.value.array.tobytes()))


def rename_addresses(module: ModuleOp, renamed: dict[str, str]) -> None:
    """Point the module's global addresses at the globals' new names."""
    if not renamed:
        return
    for op in module.walk():
        if isinstance(op, llvm.AddressOfOp) and op.global_name.root_reference.data in renamed:
            op.global_name = SymbolRefAttr(renamed[op.global_name.root_reference.data])


def translate_to_llvm_ir(module: ModuleOp, external_data: dict[str, bytes] | None = None) -> str:
    """LLVM IR text of a module that holds only llvm dialect ops. With
    `external_data`, big constant tensors are not printed as text (slow to
    print and to parse): they become external globals whose bytes go into
    the dict, by global name, for the JIT to bind (see set_data_aside; the
    module is changed so)."""
    return translate_program(module, external_data).text


def translate_program(
    module: ModuleOp, external_data: dict[str, bytes] | None = None
) -> LlvmProgram:
    """`translate_to_llvm_ir`, kept in pieces: its `.text`, and its parts
    to build at once (`.split`)."""
    if external_data is not None:
        set_data_aside(module, external_data)
    try:
        llvm_module = _convert_module(module)
    except Exception as error:  # the translator's failures are ours to report
        raise DiagnosticError(
            Diagnostic(
                Severity.ERROR, f"cannot translate to LLVM IR: {type(error).__name__}: {error}"
            )
        ) from error
    for value in llvm_module.global_values:
        if isinstance(value, ir.GlobalVariable) and value.initializer is not None:
            if value.linkage == "external":
                value.linkage = ""
    return LlvmProgram(llvm_module, declared_kernels(module))
