"""graphcompiler.frontends.onnx: ONNX models as graph functions (needs the `onnx` extra).

    from graphcompiler.frontends.onnx import import_onnx
    module = import_onnx("model.onnx", input_shapes={"x": [1, 3, 224, 224]})
    compiled = graphcompiler.compile("model.onnx")        # the same, compiled

See importer.py for what is kept (value names, node locations, constants)
and ops*.py for the op coverage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from graphcompiler.frontends.onnx import (  # noqa: F401 - register their converters
    ops_activation,
    ops_compose,
    ops_containers,
    ops_contrib,
    ops_control,
    ops_conv_transpose,
    ops_deform,
    ops_fold,
    ops_fused,
    ops_grid_sample,
    ops_indexing,
    ops_linalg,
    ops_math,
    ops_ml,
    ops_quantize,
    ops_recurrent,
    ops_resize,
    ops_signal,
    ops_tensor,
    ops_text,
    ops_training,
    ops_trig,
    ops_window,
)
from graphcompiler.frontends.onnx.importer import NeedsConstantInput, OnnxImportError
from graphcompiler.frontends.onnx.model import graph_input_dims, import_model, load_model
from graphcompiler.frontends.onnx.ops import CONVERTERS

__all__ = [
    "CONVERTERS",
    "NeedsConstantInput",
    "OnnxImportError",
    "graph_input_dims",
    "import_onnx",
    "load_model",
    "supported_op_types",
]


def import_onnx(
    model: onnx.ModelProto | str | Path,
    *,
    entry: str = "main",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
    private: bool = False,
    output_layout: list | None = None,
) -> ModuleOp:
    """The graph function `entry` computing ONNX model `model` (a proto or a
    path). `input_shapes` fixes inputs with symbolic dims; `constants` binds
    graph inputs to arrays known ahead (they become initializers). Raises
    OnnxImportError (one line naming the node) for what cannot be expressed.
    `private`: a proto only the caller holds, which the import may edit
    (else it works on a copy). `output_layout`: a list to fill with each
    output's layout, sequence and optional outputs then returned as the
    tensors they hold (containers.rebuilt puts them back together)."""
    return import_model(
        model, CONVERTERS, entry=entry, input_shapes=input_shapes, constants=constants,
        private=private, output_layout=output_layout,
    )  # fmt: skip


def supported_op_types() -> list[str]:
    return sorted(CONVERTERS)
