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
from graphcompiler.frontends.onnx import NeedsConstantInput, graph_input_dims, import_onnx
from graphcompiler.frontends.onnx.containers import rebuilt, tensor_count


class GraphRep(BackendRep):
    """One imported model, ready to run. A graph input that the importer
    needs as a constant (reduction axes, a shape; `NeedsConstantInput`) is
    bound to the value of the first call, and the model imported again
    whenever such a value changes (a JIT specializing on it). A model with
    symbolic input dims (none given by `input_shapes`) is imported for each
    call's shapes, as graphcompiler.compile does."""

    def __init__(self, model: onnx.ModelProto, compiled: bool, input_shapes=None):
        initializers = {t.name for t in model.graph.initializer}
        self.model = model
        self.compiled = compiled
        self.input_shapes = input_shapes
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.output_dtypes = [_element_dtype(o.type) for o in model.graph.output]
        self.containers = any(
            not i.type.HasField("tensor_type")
            for i in model.graph.input
            if i.name not in initializers
        )
        self.by_structure: dict[str, GraphRep] = {}  # containers.py: one per input structure
        self.bound: list[str] = []  # inputs the importer needs as constants
        self.specialized: dict[bytes, tuple] = {}
        dims = graph_input_dims(model).values()
        self.by_shapes = input_shapes is None and not all(
            d is not None and all(isinstance(s, int) and s > 0 for s in d) for d in dims
        )
        if self.by_shapes or self.containers:
            return  # imported at the first call, for its shapes or its sequences' lengths
        try:
            self.specialized[b""] = self._build({})
        except NeedsConstantInput as error:  # known only once the values are
            self.bound.append(error.input_name)

    def _build(self, constants: dict[str, np.ndarray], shapes: dict | None = None) -> tuple:
        """(function, output types, the inputs it still takes); `shapes`:
        the inputs' shapes, where the model leaves them open."""
        from graphcompiler.interpreters import reference

        given = self.input_shapes
        if shapes is not None:
            given = {n: s for n, s in shapes.items() if n not in constants}
        layout: list = []
        module = import_onnx(
            self.model, input_shapes=given, constants=constants, output_layout=layout
        )
        function = next(iter(module.ops))
        output_types = list(function.function_type.outputs.data)
        if self.compiled:
            from graphcompiler.driver.compiler import compile as compile_graph

            run = compile_graph(module.clone())
        else:
            run = lambda *arrays: reference.run(module, *arrays)  # noqa: E731
        taking = [i for i, name in enumerate(self.input_names) if name not in constants]
        dtypes = [
            d
            for d, o in zip(self.output_dtypes, layout, strict=True)
            for _ in range(tensor_count(o))
        ]
        return run, output_types, taking, layout, dtypes

    def _specialize(self, arrays: list[np.ndarray]) -> tuple:
        while True:
            constants = {n: arrays[self.input_names.index(n)] for n in self.bound}
            key = b"".join(a.tobytes() for a in constants.values())
            shapes = None
            if self.by_shapes:
                shapes = {n: list(a.shape) for n, a in zip(self.input_names, arrays, strict=False)}
                key += repr(sorted(shapes.items())).encode()
            if key in self.specialized:
                return self.specialized[key]
            try:
                self.specialized[key] = self._build(constants, shapes)
            except NeedsConstantInput as error:
                if error.input_name in self.bound:
                    raise
                self.bound.append(error.input_name)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The outputs: arrays, and lists of arrays or None for sequence and
        optional outputs (onnx's runner's values)."""
        given = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
        if self.containers:
            model, flat, key = _tensor_inputs(self.model, self.input_names, given)
            if key not in self.by_structure:
                self.by_structure[key] = GraphRep(model, self.compiled, self.input_shapes)
            return self.by_structure[key].run(flat)
        arrays = [_to_graph(np.asarray(a)) for a in given]
        run, output_types, taking, layout, dtypes = self._specialize(arrays)
        outputs = run(*[arrays[i] for i in taking])
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        converted = iter(
            np.asarray(o).astype(dtype)
            if isinstance(t.element_type, BFloat16Type) or graph.is_storage_only(t.element_type)
            else np.asarray(o)
            for o, t, dtype in zip(outputs, output_types, dtypes, strict=True)
        )
        return tuple(rebuilt(o, converted) for o in layout)


def _element_dtype(type_: onnx.TypeProto) -> np.dtype:
    """The numpy dtype of a tensor's elements, or of a sequence's or an optional's tensors."""
    kind = type_.WhichOneof("value")
    if kind in ("sequence_type", "optional_type"):
        return _element_dtype(getattr(type_, kind).elem_type)
    return onnx.helper.tensor_dtype_to_np_dtype(type_.tensor_type.elem_type)


def _tensor_inputs(
    model: onnx.ModelProto, names: list[str], values: list[Any]
) -> tuple[onnx.ModelProto, list[np.ndarray], str]:
    """`model` with each sequence or optional input replaced by tensor
    inputs and the nodes that build it from them (for the lengths and
    presence of `values`); the tensors to pass, and that structure as a key."""
    infos = {i.name: i for i in model.graph.input}
    flat_model = onnx.ModelProto()
    flat_model.CopyFrom(model)
    graph_proto = flat_model.graph
    del graph_proto.input[:]
    builders: list[onnx.NodeProto] = []
    flat: list[np.ndarray] = []
    structure: list[str] = []

    def add(name: str, type_: onnx.TypeProto, value: Any) -> None:
        kind = type_.WhichOneof("value")
        if kind == "sequence_type":
            tensors = list(value)
            element = type_.sequence_type.elem_type.tensor_type.elem_type
            parts = [f"{name}__{k}" for k in range(len(tensors))]
            for part, tensor in zip(parts, tensors, strict=True):
                add(part, onnx.helper.make_tensor_type_proto(element, np.shape(tensor)), tensor)
            structure.append(f"{len(tensors)}")
            builders.append(
                onnx.helper.make_node("SequenceConstruct", parts, [name])
                if parts
                else onnx.helper.make_node("SequenceEmpty", [], [name], dtype=element)
            )
        elif kind == "optional_type":
            inner = type_.optional_type.elem_type
            structure.append("none" if value is None else "some")
            if value is None:
                builders.append(onnx.helper.make_node("Optional", [], [name], type=inner))
            else:
                add(f"{name}__value", inner, value)
                builders.append(onnx.helper.make_node("Optional", [f"{name}__value"], [name]))
        else:
            graph_proto.input.append(onnx.helper.make_value_info(name, type_))
            flat.append(value)

    for name, value in zip(names, values, strict=True):
        add(name, infos[name].type, value)
    graph_proto.input.extend(i for i in model.graph.input if i.name not in names)
    nodes = [*builders, *graph_proto.node]
    del graph_proto.node[:]
    graph_proto.node.extend(nodes)
    return flat_model, flat, ",".join(structure)


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
