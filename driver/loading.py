"""What a program is read from: .mlir text, a path to one, a module, or an
ONNX model. `graphcompiler.compile` and `TirProgram` accept all of them."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from graphcompiler.driver.registration import default_registry
from graphcompiler.ir.diagnostics import SourceFile
from graphcompiler.ir.parsing import parse_module
from graphcompiler.ir.verifier import verify_module

if TYPE_CHECKING:
    from graphcompiler.ir.registry import Registry


def onnx_source(source: object) -> object | None:
    """The ONNX model `source` stands for (a path ending in .onnx or an
    onnx.ModelProto), read; None for anything else."""
    onnx = sys.modules.get("onnx")  # a ModelProto exists only once onnx is imported
    if onnx and isinstance(source, onnx.ModelProto):
        return source
    if isinstance(source, str | Path) and str(source).endswith(".onnx"):
        from graphcompiler.frontends.onnx import load_model

        return load_model(source)
    return None


def load_module(
    source: str | Path | ModuleOp,
    registry: Registry | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    private_model: bool = False,
) -> ModuleOp:
    """A fresh module from .mlir text, a path to one, or a module (cloned);
    text is parsed with `registry`'s dialects (default: the installed ones).
    An .onnx path or an onnx.ModelProto is imported (graphcompiler.frontends.onnx),
    its symbolic input dims fixed by `input_shapes` (`private_model`: a
    proto the caller read and holds alone, imported without a copy)."""
    if isinstance(source, ModuleOp):
        return source.clone()
    model = onnx_source(source)
    if model is not None:
        from graphcompiler.frontends.onnx import import_onnx

        private = private_model or model is not source  # read from a path here
        return import_onnx(model, input_shapes=input_shapes, private=private)
    text, filename = str(source), "<string>"
    if isinstance(source, Path) or (("\n" not in text) and text.endswith(".mlir")):
        filename = str(source)
        text = Path(source).read_text()
    return parse(text, filename=filename, registry=registry)


def parse(text: str, *, filename: str = "<string>", registry: Registry | None = None) -> ModuleOp:
    """Parse and verify MLIR text; errors raise `DiagnosticError`."""
    ctx = (registry or default_registry()).create_context()
    module = parse_module(ctx, SourceFile(filename, text))
    verify_module(module)
    return module


def bind_constants(function: func.FuncOp, constants: Mapping[str, Any]) -> None:
    """Turn the named arguments of `function` into graph.constant ops holding
    the given arrays (weights known at compile time: matmul and conv pack
    them once); the function no longer takes them."""
    from xdsl.dialects.builtin import FunctionType

    from graphcompiler.dialects import graph
    from graphcompiler.ir.element_types import dense_elements

    block = function.body.block
    arguments = {a.name_hint: a for a in block.args if a.name_hint}
    unknown = sorted(set(constants) - set(arguments))
    if unknown:
        raise ValueError(
            f"constants name no argument of @{function.sym_name.data}: {', '.join(unknown)} "
            f"(arguments: {', '.join(arguments) or 'none'})"
        )
    for name, values in constants.items():
        argument = arguments[name]
        type_ = argument.type
        array = np.asarray(values)
        if array.shape != tuple(type_.get_shape()):
            raise ValueError(
                f"constant '{name}' has shape {list(array.shape)}, expected {list(type_.get_shape())}"
            )
        value = dense_elements(array, type_.element_type)
        constant = graph.ConstantOp.create(properties={"value": value}, result_types=[type_])
        constant.result.name_hint = name
        block.insert_op_before(constant, block.first_op)
        argument.replace_all_uses_with(constant.result)
        block.erase_arg(argument)
    inputs = [a.type for a in block.args]
    function.function_type = FunctionType.from_lists(inputs, function.function_type.outputs.data)
