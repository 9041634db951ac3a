"""Compile a Tensor IR module and call its functions on numpy arrays.

    program = TirProgram(text)            # .mlir text, a path, or a module
    program["main"](A, 3.0)               # arguments checked before native code
    program.globals["counter"][...] = 5   # the seed's statics table, as numpy views
    program.llvm_ir, program.asm          # what was generated

Arguments are checked before any native code runs: the wrong count, a
non-array for a tensor, a wrong dtype or shape, a non-contiguous or
misaligned array, or an out-of-range integer raise `ValueError` naming the
argument.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    NoneType,
)
from xdsl.ir import Attribute

from graphcompiler.dialects import tir
from graphcompiler.driver.loading import load_module
from graphcompiler.ir import element_types
from graphcompiler.runtime.jit.engine import JitEngine, assembly

if TYPE_CHECKING:
    from graphcompiler.lowering.llvm.split import LlvmProgram

TIR_TO_LLVM = "builtin.module(tir-to-llvm)"


def buffer_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype of a tir tensor's elements (bf16 travels as uint16
    bits, a pointer as uintp)."""
    if isinstance(element, tir.PtrType):
        return np.dtype(np.uintp)
    return element_types.buffer_dtype(element)


def _scalar_ctype(type_: Attribute) -> type:
    if isinstance(type_, Float32Type):
        return ctypes.c_float
    if isinstance(type_, Float64Type):
        return ctypes.c_double
    if isinstance(type_, tir.PtrType):
        return ctypes.c_void_p
    if isinstance(type_, IndexType | IntegerType):
        return np.ctypeslib.as_ctypes_type(buffer_dtype(type_))
    raise ValueError(f"{type_} cannot cross the Python/native boundary")


def _argument_ctype(type_: Attribute) -> type:
    return ctypes.c_void_p if isinstance(type_, tir.TirTensorType) else _scalar_ctype(type_)


class TirFunction:
    """A compiled tir function, callable with numpy arrays and Python scalars."""

    def __init__(self, engine: JitEngine, function: tir.FuncOp, read_only: Iterable[int] = ()):
        """`read_only`: indices of array parameters the code never writes
        (a read-only numpy array is accepted there)."""
        self.name = function.sym_name.data
        self.read_only = frozenset(read_only)
        self.param_types = list(function.function_type.inputs.data)
        self.param_names = [arg.name_hint for arg in function.body.block.args]
        self.return_type = function.return_type
        self._engine = engine  # keeps the machine code alive

    @functools.cached_property
    def _call(self) -> Any:
        """The ctypes entry point, made on first call: a function taking
        vectors can still be called from other tir functions."""
        try:
            restype = (
                None if isinstance(self.return_type, NoneType) else _scalar_ctype(self.return_type)
            )
            prototype = ctypes.CFUNCTYPE(restype, *map(_argument_ctype, self.param_types))
        except ValueError as error:
            raise ValueError(f"@{self.name} cannot be called from Python: {error}") from None
        return prototype(self._engine.function_address(self.name))

    def label(self, index: int) -> str:
        name = self.param_names[index]
        return f"argument #{index}" + (f" ('%{name}')" if name else "") + f" of @{self.name}"

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.param_types):
            raise ValueError(
                f"@{self.name} takes {len(self.param_types)} arguments, got {len(args)}"
            )
        native = [
            self._convert(i, a, t)
            for i, (a, t) in enumerate(zip(args, self.param_types, strict=True))
        ]
        return self._call(*native)

    def _convert(self, index: int, value: Any, type_: Attribute) -> Any:
        label = self.label(index)
        if isinstance(type_, tir.TirTensorType):
            return check_array(value, type_, label, index not in self.read_only).ctypes.data
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if tir.is_float(type_):
            if not isinstance(value, int | float | np.floating | np.integer) or isinstance(
                value, bool
            ):
                raise ValueError(
                    f"{label} must be a number for {type_}, got {type(value).__name__}"
                )
            return float(value)
        if isinstance(type_, tir.PtrType):
            if not isinstance(value, int):
                raise ValueError(
                    f"{label} must be an address (int) for !tir.ptr, got {type(value).__name__}"
                )
            return value
        if not isinstance(value, int | np.integer | bool):
            raise ValueError(f"{label} must be an integer for {type_}, got {type(value).__name__}")
        limits = np.iinfo(buffer_dtype(type_)) if buffer_dtype(type_) != np.bool_ else None
        if limits is not None and not limits.min <= int(value) <= limits.max:
            raise ValueError(f"{label} = {value} does not fit in {type_}")
        return int(value)


def check_array(
    value: Any, type_: tir.TirTensorType, label: str, written: bool = True
) -> np.ndarray:
    """`value` if it is a numpy array the native code can use as `type_`."""
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{label} must be a numpy array for {type_}, got {type(value).__name__}")
    expected_dtype = buffer_dtype(type_.element_type)
    if value.dtype != expected_dtype:
        raise ValueError(f"{label} has dtype {value.dtype}, expected {expected_dtype} for {type_}")
    if value.shape != type_.get_shape():
        raise ValueError(
            f"{label} has shape {list(value.shape)}, expected {list(type_.get_shape())}"
        )
    if not value.flags.c_contiguous:
        raise ValueError(f"{label} is not C-contiguous; pass np.ascontiguousarray(...)")
    if value.ctypes.data % value.dtype.alignment:
        raise ValueError(f"{label} is not aligned to its element size")
    if written and not value.flags.writeable:
        raise ValueError(f"{label} is read-only; the native code may write it")
    return value


def lower_to_llvm_ir(module: ModuleOp) -> LlvmProgram:
    """Run tir-to-llvm on `module` (in place) and translate it to LLVM IR."""
    from graphcompiler.driver.registration import apply_pipeline
    from graphcompiler.lowering.llvm.translate import translate_program

    apply_pipeline(module, TIR_TO_LLVM)
    return translate_program(module)


class TirProgram:
    """A JIT-compiled Tensor IR module."""

    def __init__(self, source: str | Path | ModuleOp, *, num_threads: int | None = None):
        module = load_module(source)
        definitions = [
            op for op in module.ops if isinstance(op, tir.FuncOp) and not op.is_declaration
        ]
        globals_ = [op for op in module.ops if isinstance(op, tir.GlobalOp)]
        self.global_types = {g.sym_name.data: g.type for g in globals_}
        self.tir = str(module)
        signatures = {f.sym_name.data: f.clone() for f in definitions}
        program = lower_to_llvm_ir(module)
        self.llvm_ir, self.microkernels = program.text, program.microkernels
        self.engine = JitEngine(self.llvm_ir, num_threads, microkernels=self.microkernels)
        self.functions = {name: TirFunction(self.engine, f) for name, f in signatures.items()}
        self.globals = {name: self._global_view(name, t) for name, t in self.global_types.items()}

    def __getitem__(self, name: str) -> TirFunction:
        if name not in self.functions:
            raise KeyError(f"no function @{name} (functions: {', '.join(sorted(self.functions))})")
        return self.functions[name]

    def set_num_threads(self, count: int) -> None:
        self.engine.set_num_threads(count)

    @functools.cached_property
    def asm(self) -> str:
        return assembly(self.llvm_ir, self.microkernels)

    def _global_view(self, name: str, type_: Attribute) -> np.ndarray:
        """A writable numpy view of a global (0-d for scalars)."""
        element = type_.element_type if isinstance(type_, tir.TirTensorType) else type_
        shape = type_.get_shape() if isinstance(type_, tir.TirTensorType) else ()
        dtype = buffer_dtype(element)
        count = int(np.prod(shape)) if shape else 1
        raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(
            self.engine.global_address(name)
        )
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
