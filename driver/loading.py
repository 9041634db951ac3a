"""What a program is read from: .mlir text, a path to one, a module, or an
ONNX model. `graphcompiler.compile` and `TirProgram` accept all of them."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

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
