"""What a program is read from: .mlir text, a path to one, a module, or an
ONNX model. `graphcompiler.compile` and `TirProgram` accept all of them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp

from graphcompiler.driver.registration import default_registry
from graphcompiler.ir.diagnostics import SourceFile
from graphcompiler.ir.parsing import parse_module
from graphcompiler.ir.verifier import verify_module

if TYPE_CHECKING:
    from graphcompiler.ir.registry import Registry


def load_module(source: str | Path | ModuleOp, registry: Registry | None = None) -> ModuleOp:
    """A fresh module from .mlir text, a path to one, or a module (cloned);
    text is parsed with `registry`'s dialects (default: the installed ones).
    An .onnx path or an onnx.ModelProto is imported (graphcompiler.frontends.onnx)."""
    if isinstance(source, ModuleOp):
        return source.clone()
    onnx = sys.modules.get("onnx")  # a ModelProto exists only once onnx is imported
    is_path = isinstance(source, str | Path)
    if (is_path and str(source).endswith(".onnx")) or (
        onnx and isinstance(source, onnx.ModelProto)
    ):
        from graphcompiler.frontends.onnx import import_onnx

        return import_onnx(source)
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
