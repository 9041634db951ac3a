"""ONNX models as graph functions: the importer's walk over the graph.

    module = import_onnx("model.onnx", input_shapes={"x": [1, 3, 224, 224]})

The model is checked (model.py: opset 13 or newer, static input shapes) and its local
functions inlined; then each node, in topological order, becomes graph ops
through the converter of its op type (`graphcompiler.frontends.onnx.ops*`),
which derives its outputs' shapes from its inputs' (`onnx.shape_inference`
only cross-checks them: where it knows a shape, both must agree). Graph inputs that are not initializers are the
function's arguments, outputs are returned. Initializers and `Constant`
nodes stay numpy arrays while the converters read them (Reshape's shape,
Slice's bounds) and become one `graph.constant` each when an op uses them as
a tensor; a node whose inputs are all constant is evaluated at import time
with onnx's reference implementation (shape arithmetic of exported models).

Every op carries `loc("<node name>")` and its results the ONNX value names
as SSA name hints. Anything the graph dialect cannot express raises
`OnnxImportError`, one line naming the node, its op type and the attribute,
input or element type at fault.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from graphcompiler.dialects import graph
from graphcompiler.dialects.graph.builders import create_op
from graphcompiler.frontends.onnx.containers import (
    Container,
    OptionalValue,
    TensorSequence,
    flattened,
)
from graphcompiler.frontends.onnx.element_types import array_type, element_type, input_type
from graphcompiler.frontends.onnx.errors import NeedsConstantInput, OnnxImportError
from graphcompiler.frontends.onnx.graph_walk import all_nodes, names_read
from graphcompiler.frontends.onnx.weights_in_file import Constants, initializer_array
from graphcompiler.ir.element_types import compute_dtype, dense_elements

MIN_OPSET = 13
DEFAULT_DOMAINS = ("", "ai.onnx")

_SSA_NAME = re.compile(r"[A-Za-z_$.-][\w$.-]*")


def name_hint(name: str) -> str | None:
    """An ONNX value name as an SSA name hint (invalid characters become '_')."""
    if not name:
        return None
    hint = re.sub(r"[^\w$.-]", "_", name)
    return hint if _SSA_NAME.fullmatch(hint) else f"v{hint}"


class Node:
    """What a converter sees of one ONNX node: its inputs (as SSA values or,
    when known at import time, numpy arrays), attributes (each one read is
    marked; the importer rejects the others)."""

    def __init__(self, importer: Importer, proto: onnx.NodeProto):
        self.importer = importer
        self.proto = proto
        self.op_type = proto.op_type
        self.label = proto.name or (proto.output[0] if proto.output else proto.op_type)
        self.attributes = {a.name: a for a in proto.attribute}
        self.read: set[str] = set()
        self.beyond_shape_inference = False
        """Set by a converter whose output shape onnx's shape inference gets
        wrong (onnxruntime agrees with the converter): not cross-checked."""

    # --- diagnostics

    @property
    def where(self) -> str:
        return f"node '{self.label}' ({self.op_type})"

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where}: {message}")

    def unsupported_attribute(self, name: str, detail: str = "") -> OnnxImportError:
        value = onnx.helper.get_attribute_value(self.attributes[name])
        if isinstance(value, bytes):
            value = value.decode(errors="replace")
        text = f"attribute '{name}' = {value!r} is not supported"
        return self.error(f"{text}{': ' + detail if detail else ''}")

    # --- attributes

    def attr(self, name: str, default: Any = None) -> Any:
        self.read.add(name)
        if name not in self.attributes:
            return default
        value = onnx.helper.get_attribute_value(self.attributes[name])
        return value.decode() if isinstance(value, bytes) else value

    def require_attr(self, name: str, allowed: Sequence[Any], default: Any) -> Any:
        """An attribute whose only supported values are `allowed`."""
        value = self.attr(name, default)
        if value not in allowed:
            raise self.unsupported_attribute(name)
        return value

    # --- inputs

    @property
    def num_inputs(self) -> int:
        return len(self.proto.input)

    def has_input(self, index: int) -> bool:
        return index < len(self.proto.input) and self.proto.input[index] != ""

    def value(self, index: int) -> SSAValue:
        """Input `index` as a tensor value (a known array becomes a constant)."""
        if not self.has_input(index):
            raise self.error(f"input #{index} is missing")
        return self.importer.tensor(self.proto.input[index])

    def values(self) -> list[SSAValue]:
        return [self.value(i) for i in range(self.num_inputs) if self.has_input(i)]

    def constant(self, index: int, what: str) -> np.ndarray:
        """Input `index`, which must be known at import time (`what` says why)."""
        array = (
            self.importer.constants.get(self.proto.input[index]) if self.has_input(index) else None
        )
        if array is None:
            message = f"input #{index} ({what}) must be a constant"
            name = self.proto.input[index] if self.has_input(index) else ""
            if name in self.importer.arguments:
                raise NeedsConstantInput(
                    f"{self.error(message)}, but it is graph input '{name}' (bind it with "
                    "constants=)",
                    name,
                )
            source = self.importer.small_input_behind(name) if name else None
            if source is not None:  # a size, a count: computed from a small graph input
                raise NeedsConstantInput(
                    f"{self.error(message)}, but '{name}' is computed from graph input "
                    f"'{source}' (bind it with constants=)",
                    source,
                )
            if name:  # from the values of the inputs, not their shapes
                message += f", but '{name}' is computed at run time"
            raise self.error(message)
        return array

    def optional_constant(self, index: int, what: str) -> np.ndarray | None:
        return self.constant(index, what) if self.has_input(index) else None

    def ints(self, name: str, index: int, default: Sequence[int] | None = None) -> list[int] | None:
        """A list of ints given as attribute `name` (older opsets) or as
        constant input `index` (newer ones)."""
        if name in self.attributes:
            return [int(v) for v in self.attr(name)]
        if self.has_input(index):
            return [int(v) for v in self.constant(index, name).reshape(-1)]
        return None if default is None else list(default)

    def input_type(self, index: int) -> TensorType:
        return self.value(index).type

    def shape(self, index: int) -> list[int]:
        return list(self.input_type(index).get_shape())

    # --- building

    def make(
        self,
        op_name: str,
        inputs: Sequence[SSAValue],
        result_type: TensorType | None = None,
        **params: Any,
    ) -> SSAValue:
        """Append `graph.<op_name>` located at this node; its result."""
        try:
            op = create_op(op_name, inputs, result_type, **params)
        except ValueError as error:
            raise self.error(str(error)) from None
        op.location = NameLoc(StringAttr(self.label), NoneAttr())
        self.importer.block.add_op(op)
        return op.results[0]

    def scalar(self, value: float | int | bool, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s element type."""
        return self.importer.constant_value(np.array(value), like.type.element_type, self.label)


class _BoundValues(dict):
    """ONNX name -> SSA value, and every value bound so far in order
    (`bound`, rebinding a name included): what a converter named."""

    def __init__(self):
        super().__init__()
        self.bound: list[SSAValue] = []

    def __setitem__(self, name: str, value: SSAValue) -> None:
        super().__setitem__(name, value)
        self.bound.append(value)


class Importer:
    """Builds one graph function from an ONNX graph (see the module doc)."""

    def __init__(
        self,
        model: onnx.ModelProto,
        converters: Mapping[str, Callable],
        inferred: Mapping[str, TensorType],
    ):
        """`inferred`: the types onnx.shape_inference found, cross-checked."""
        self.model = model
        self.converters = converters
        self.block = Block()
        self.values = _BoundValues()
        self.containers: dict[str, Container] = {}  # sequences and optionals (containers.py)
        self.constants = Constants()
        self.constant_types: dict[str, Attribute] = {}
        self.inferred = inferred
        self.arguments: list[str] = []
        self.opset = _opset(model)
        self.functions: list[func.FuncOp] = []  # step functions of graph.loop ops (outline.py)
        self.entry = "main"

    def tensor(self, name: str) -> SSAValue:
        if name in self.values:
            return self.values[name]
        if name in self.constants:
            value = self.constant_value(self.constants[name], self.constant_types[name], name)
            value.name_hint = name_hint(name)
            self.values[name] = value
            return value
        if name in self.containers:
            raise OnnxImportError(f"value '{name}' is {self._container_kind(name)}, not a tensor")
        raise OnnxImportError(f"value '{name}' is used before it is defined")

    def _container_kind(self, name: str) -> str:
        return "an optional" if isinstance(self.containers[name], OptionalValue) else "a sequence"

    def small_input_behind(self, name: str) -> str | None:
        """A graph input of at most SMALL_INPUT_ELEMENTS elements that value
        `name` is computed from (through the graph's nodes), if any: binding
        it to its value makes `name` known (a window's size, a pad amount)."""
        producers = {o: n for n in all_nodes(self.model.graph) for o in n.output if o}
        seen, pending = set(), [name]
        while pending:
            value = pending.pop()
            if value in seen:
                continue
            seen.add(value)
            if value in self.arguments:
                shape = self.values[value].type.get_shape()
                if math.prod(shape) <= SMALL_INPUT_ELEMENTS:
                    return value
            elif value in producers:
                pending.extend(names_read(producers[value]))
        return None

    def constant_value(self, array: np.ndarray, type_: Attribute, where: str) -> SSAValue:
        """A graph.constant located at `where` (a node's or an initializer's name)."""
        op = graph.ConstantOp.create(
            properties={"value": dense_elements(array, type_)},
            result_types=[TensorType(type_, list(array.shape))],
        )
        op.location = NameLoc(StringAttr(where), NoneAttr())
        self.block.add_op(op)
        return op.result

    def unique_function_name(self, base: str) -> str:
        """`base` made a symbol no other function of the module has."""
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
        taken = {self.entry, *(f.sym_name.data for f in self.functions)}
        name, suffix = base, 1
        while name in taken:
            suffix += 1
            name = f"{base}_{suffix}"
        return name

    def define_constant(self, name: str, array: np.ndarray, type_: Attribute) -> None:
        self.constants[name] = _held(array, type_)
        self.constant_types[name] = type_

    def run(self, entry: str, output_layout: list | None = None) -> ModuleOp:
        """The module; with `output_layout` (a list it fills, one layout per
        graph output), a sequence or optional output is returned as the
        tensors it holds (containers.flattened), not refused."""
        try:
            module = self._run(entry, output_layout)
        except BaseException:
            self.constants.close(wait_for_reads=False)
            raise
        self.constants.close()
        return module

    def _run(self, entry: str, output_layout: list | None) -> ModuleOp:
        self.entry = entry
        graph_proto = self.model.graph
        for tensor in graph_proto.initializer:
            type_ = element_type(tensor.data_type, f"initializer '{tensor.name}'")
            if tensor.data_location == onnx.TensorProto.EXTERNAL:  # read while nodes convert
                self.constants.read_ahead(tensor, lambda array, type_=type_: _held(array, type_))
                self.constant_types[tensor.name] = type_
            else:
                self.define_constant(tensor.name, initializer_array(tensor), type_)
        for info in graph_proto.input:
            if info.name in self.constants:
                continue
            argument = self.block.insert_arg(input_type(info), len(self.block.args))
            argument.name_hint = name_hint(info.name)
            self.values[info.name] = argument
            self.arguments.append(info.name)
        for proto in graph_proto.node:
            self.convert(proto)
        outputs = []
        for info in graph_proto.output:
            held = self.containers.get(info.name)
            if held is None:
                outputs.append(self.tensor(info.name))
                if output_layout is not None:
                    output_layout.append("tensor")
                continue
            if output_layout is None:
                raise OnnxImportError(
                    f"output '{info.name}': {self._container_kind(info.name)}, not a tensor "
                    "(graph outputs are tensors only)"
                )
            layout, items = flattened(held)
            output_layout.append(layout)
            type_ = held.element_type if isinstance(held, TensorSequence) else None
            for item in items:
                if isinstance(item, np.ndarray):
                    item = self.constant_value(
                        item, type_ or array_type(item, info.name), info.name
                    )
                outputs.append(item)
        self.block.add_op(func.ReturnOp(*outputs))
        arguments = [a.type for a in self.block.args]
        function = func.FuncOp(entry, (arguments, [v.type for v in outputs]), Region(self.block))
        return ModuleOp([function, *self.functions])

    def convert(self, proto: onnx.NodeProto) -> None:
        node = Node(self, proto)
        default = proto.domain in DEFAULT_DOMAINS
        converter = self.converters.get(
            proto.op_type if default else f"{proto.domain}:{proto.op_type}"
        )
        symbolic = proto.op_type in KEEP_SYMBOLIC
        foldable = default and not symbolic
        if converter is None:
            if foldable and self._fold(node):  # onnx's evaluator knows it: a constant
                return
            domain = "" if default else f" (domain '{proto.domain}')"
            raise node.error(f"operator is not supported{domain}")
        last, bound = self.block.last_op, len(self.values.bound)
        try:
            results = converter(node)
        except OnnxImportError:
            if foldable and self._fold(node):  # the ops added are left to dead-code elimination
                return
            raise
        known = results
        held = any(isinstance(r, Container) for r in results)  # resolved already
        if not held and self._all_inputs_constant(node):  # evaluated: the compiled semantics
            known = self._evaluated(node, results, last)
            if all(isinstance(v, np.ndarray) for v in known):
                if not symbolic:  # the results are constants: the ops are never read
                    self._drop_unused_after(last, bound)
            elif foldable and not node.beyond_shape_inference and self._fold(node):
                return
        unread = sorted(set(node.attributes) - node.read)
        if unread:
            raise node.unsupported_attribute(unread[0])
        if node.beyond_shape_inference:
            self._forget_inferred_from(proto)
        if len(results) < len([o for o in proto.output if o]):
            missing = proto.output[len(results)]
            raise node.error(f"output '{missing}' is not supported")
        for name, result, value in zip(proto.output, results, known, strict=False):
            if not name:
                continue
            if isinstance(result, Container):
                self.containers[name] = result
                continue
            if isinstance(value, np.ndarray):  # the op's own type (bf16 arrays are f32's)
                type_ = result.type.element_type if isinstance(result, SSAValue) else None
                self.define_constant(name, value, type_ or array_type(value, node.where))
                if not symbolic or isinstance(result, np.ndarray):
                    continue
            self._check_type(node, name, result)
            if result.name_hint is None:  # not a value passed through (Identity)
                result.name_hint = name_hint(name)
            self.values[name] = result

    def _forget_inferred_from(self, proto: onnx.NodeProto) -> None:
        """Drop onnx's inferred types of `proto`'s outputs and of everything
        computed from them: they follow from a shape onnx got wrong."""
        readers: dict[str, list[onnx.NodeProto]] = {}
        for node in all_nodes(self.model.graph):
            for name in names_read(node):
                readers.setdefault(name, []).append(node)
        pending, seen = [o for o in proto.output if o], set()
        while pending:
            name = pending.pop()
            if name not in seen:
                seen.add(name)
                self.inferred.pop(name, None)
                pending.extend(o for reader in readers.get(name, []) for o in reader.output if o)

    def _check_type(self, node: Node, name: str, result: SSAValue) -> None:
        expected = self.inferred.get(name)
        if expected is None:
            return
        got = (list(result.type.get_shape()), result.type.element_type)
        if got != (list(expected.get_shape()), expected.element_type):
            raise node.error(f"output '{name}' would be {result.type}, but ONNX infers {expected}")

    def _all_inputs_constant(self, node: Node) -> bool:
        """Are the inputs whose values `node` reads all constants?"""
        type_only = TYPE_ONLY_INPUTS.get(node.op_type, ())
        inputs = [name for i, name in enumerate(node.proto.input) if name and i not in type_only]
        return (
            bool(inputs)
            and node.op_type not in _NEVER_FOLD
            and all(name in self.constants for name in inputs)
            and sum(self.constants[name].size for name in inputs) <= _FOLD_LIMIT
        )

    def _evaluated(self, node: Node, results: list, last: Operation | None) -> list:
        """`results` as arrays, by the reference interpreter on the ops the
        converter just added (after `last`): the values of a node on
        constants that onnx's evaluator has no implementation of (a
        DequantizeLinear of opset 17 feeding Pad's constant_value). The ops
        are left to dead-code elimination; where one cannot be evaluated,
        the results stay as they are. A result may be an input passed
        through (a cast to its own type): the input's value."""
        from graphcompiler.interpreters.reference import evaluate, run_loop

        functions = {f.sym_name.data: f for f in self.functions}
        arrays = {
            self.values[name]: self.constants[name]
            for name in node.proto.input
            if name in self.constants and name in self.values
        }
        op = last.next_op if last is not None else self.block.first_op
        try:
            while op is not None:
                operands = [arrays[v] for v in op.operands]
                if isinstance(op, graph.LoopOp):  # a recurrent layer's steps (outline.py)
                    arrays.update(zip(op.results, run_loop(functions, op, operands), strict=True))
                else:
                    arrays[op.results[0]] = evaluate(op, operands)
                op = op.next_op
            return [r if isinstance(r, np.ndarray) else arrays[r] for r in results]
        except Exception:  # noqa: BLE001 - an op the interpreter cannot evaluate here
            return results

    def _drop_unused_after(self, last: Operation | None, bound: int) -> None:
        """Erase the ops added after `last` that nothing uses (a node
        evaluated on constants), last first; the values named since the
        `bound`-th binding are kept (a constant the converter read). A set
        of every named value, made per node, took half of Swin-T's import
        (5.5 of 11 s)."""
        named = {id(v) for v in self.values.bound[bound:]}
        op = self.block.last_op
        while op is not None and op is not last:
            previous = op.prev_op
            if all(not r.uses and id(r) not in named for r in op.results):
                self.block.erase_op(op)
            op = previous

    def _fold(self, node: Node) -> bool:
        """Evaluate a node whose inputs are all constants with onnx's
        reference implementation, where its converter's ops cannot be
        evaluated (or there is none); False if it cannot either."""
        proto = node.proto
        inputs = [name for name in proto.input if name]
        if (
            not inputs
            or proto.op_type in _NEVER_FOLD
            or any(n not in self.constants for n in inputs)
        ):
            return False
        if sum(self.constants[n].size for n in inputs) > _FOLD_LIMIT:
            return False
        from onnx.reference import ReferenceEvaluator

        try:
            evaluator = ReferenceEvaluator(_single_node_model(proto, self.model, self.constants))
            results = evaluator.run(None, {n: self.constants[n] for n in inputs})
        except Exception:  # noqa: BLE001 - onnx's evaluator cannot either
            return False
        if any(isinstance(result, list) for result in results):
            return False  # a sequence: no value of the graph holds one
        named = [name for name in proto.output if name]  # the evaluator skips the omitted ones
        for name, array in zip(named, results, strict=False):
            inferred = self.inferred.get(name)
            if inferred is not None and list(np.shape(array)) != list(inferred.get_shape()):
                return False  # the evaluator and shape inference disagree: the converter decides
        for name, array in zip(named, results, strict=False):
            array = np.asarray(array)
            type_ = self.inferred[name].element_type if name in self.inferred else None
            self.define_constant(name, array, type_ or array_type(array, node.where))
        return True


TYPE_ONLY_INPUTS = {"CastLike": (1,)}
"""Inputs whose element type alone an op reads: with its other inputs
constant, its result is a constant (an expanded Attention's -inf cast like
the query, which a Pad takes as its constant_value)."""
KEEP_SYMBOLIC = {"DequantizeLinear"}
"""Ops whose results stay graph ops even when their inputs are constants
(their values are known too, for an input that must be constant): a
dequantized weight, which graph-integer-matmul reads through to the
quantized integers."""
_NEVER_FOLD = {
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
    "If",  # its branch reads outer values: inlined by its converter, then folded op by op
}
SMALL_INPUT_ELEMENTS = 8
"""The most elements of a graph input the import binds to its value when a
value it needs is computed from it: a size, a count, pad amounts. Larger
inputs are data; specializing on their values would compile once per call."""
_FOLD_LIMIT = 1 << 16
"""Folding reads every input: bigger ones (weights) are left to graph-constant-fold."""


def _held(array: np.ndarray, type_: Attribute) -> np.ndarray:
    """An initializer's array as the importer holds it: ml_dtypes' float8
    and int4 arrays as their values (float32, int8)."""
    return array.astype(compute_dtype(type_)) if graph.is_storage_only(type_) else array


def _single_node_model(proto: onnx.NodeProto, model: onnx.ModelProto, constants) -> onnx.ModelProto:
    inputs = [
        onnx.helper.make_tensor_value_info(
            n, onnx.helper.np_dtype_to_tensor_dtype(constants[n].dtype), constants[n].shape
        )
        for n in proto.input
        if n
    ]
    outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in proto.output if n]
    graph_proto = onnx.helper.make_graph([proto], "fold", inputs, outputs)
    return onnx.helper.make_model(
        graph_proto, opset_imports=list(model.opset_import), ir_version=model.ir_version
    )


def _default_opset(model: onnx.ModelProto) -> int:
    """The default operator set's version; the newest onnx knows for a
    model of other domains' ops only (ai.onnx.ml's, as scikit-learn's)."""
    versions = [o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    if versions:
        return max(versions)
    if any(node.domain in DEFAULT_DOMAINS for node in all_nodes(model.graph)):
        raise OnnxImportError("the model imports no version of the default ONNX operator set")
    return onnx.defs.onnx_opset_version()


def _opset(model: onnx.ModelProto) -> int:
    version = _default_opset(model)
    if version < MIN_OPSET:
        raise OnnxImportError(f"opset {version} is older than {MIN_OPSET}, the oldest supported")
    latest = onnx.defs.onnx_opset_version()
    if version > latest:
        raise OnnxImportError(f"opset {version} is newer than {latest}, the newest this onnx knows")
    return version
