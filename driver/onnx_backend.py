"""graphcompiler as an `onnx.backend.base.Backend`, so that onnx's own test
runner (`onnx.backend.test.BackendTest`) can drive it:

    backend_test = onnx.backend.test.BackendTest(CompiledBackend, __name__)

`CompiledBackend` JIT-compiles the imported graph; `ReferenceBackend` runs it
through the reference interpreter (graphcompiler.interpreters.reference). Both take and
give numpy arrays of the model's element types (bf16 as ml_dtypes.bfloat16,
as onnx does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep
from xdsl.dialects.builtin import BFloat16Type

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx import NeedsConstantInput, import_onnx


class GraphRep(BackendRep):
    """One imported model, ready to run. A graph input that the importer
    needs as a constant (reduction axes, a shape; `NeedsConstantInput`) is
    bound to the value of the first call, and the model imported again
    whenever such a value changes (a JIT specializing on it)."""

    def __init__(self, model: onnx.ModelProto, compiled: bool, input_shapes=None):
        initializers = {t.name for t in model.graph.initializer}
        self.model = model
        self.compiled = compiled
        self.input_shapes = input_shapes
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.output_dtypes = [
            onnx.helper.tensor_dtype_to_np_dtype(o.type.tensor_type.elem_type)
            for o in model.graph.output
        ]
        self.bound: list[str] = []  # inputs the importer needs as constants
        self.specialized: dict[bytes, tuple] = {}
        try:
            self.specialized[b""] = self._build({})
        except NeedsConstantInput as error:  # known only once the values are
            self.bound.append(error.input_name)

    def _build(self, constants: dict[str, np.ndarray]) -> tuple:
        """(function, output types, the inputs it still takes)."""
        from graphcompiler.interpreters import reference

        module = import_onnx(self.model, input_shapes=self.input_shapes, constants=constants)
        function = next(iter(module.ops))
        output_types = list(function.function_type.outputs.data)
        if self.compiled:
            from graphcompiler.driver.compiler import compile as compile_graph

            run = compile_graph(module.clone())
        else:
            run = lambda *arrays: reference.run(module, *arrays)  # noqa: E731
        taking = [i for i, name in enumerate(self.input_names) if name not in constants]
        return run, output_types, taking

    def _specialize(self, arrays: list[np.ndarray]) -> tuple:
        while True:
            constants = {n: arrays[self.input_names.index(n)] for n in self.bound}
            key = b"".join(a.tobytes() for a in constants.values())
            if key in self.specialized:
                return self.specialized[key]
            try:
                self.specialized[key] = self._build(constants)
            except NeedsConstantInput as error:
                if error.input_name in self.bound:
                    raise
                self.bound.append(error.input_name)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        arrays = [
            _to_graph(np.asarray(a))
            for a in (inputs if isinstance(inputs, list | tuple) else [inputs])
        ]
        run, output_types, taking = self._specialize(arrays)
        outputs = run(*[arrays[i] for i in taking])
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return tuple(
            np.asarray(o).astype(dtype)
            if isinstance(t.element_type, BFloat16Type) or graph.is_storage_only(t.element_type)
            else np.asarray(o)
            for o, t, dtype in zip(outputs, output_types, self.output_dtypes, strict=True)
        )


def _to_graph(array: np.ndarray) -> np.ndarray:
    """A writable copy (the compiled code may use inputs as scratch) in the
    dtype graphcompiler computes it in: ml_dtypes' bf16, float8 and float4
    as float32, its 4- and 2-bit integers one to an int8 (uint8)."""
    name = array.dtype.name
    if name == "bfloat16" or name.startswith(("float8", "float4")):
        return array.astype(np.float32)
    if name in ("int4", "int2", "uint4", "uint2"):
        return array.astype(np.uint8 if name.startswith("u") else np.int8)
    return array.copy()


class CompiledBackend(Backend):
    """Imports the model and JIT-compiles it for this CPU."""

    compiled = True

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> GraphRep:
        super().prepare(model, device, **kwargs)
        return GraphRep(model, cls.compiled, kwargs.get("input_shapes"))

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Sequence[Any], device: str = "CPU", **kwargs: Any
    ):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


class ReferenceBackend(CompiledBackend):
    """Imports the model and interprets it with graphcompiler.interpreters.reference."""

    compiled = False
