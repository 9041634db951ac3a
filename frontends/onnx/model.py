"""An ONNX model as a whole, before and around the node-by-node import
(importer.py): reading it, upgrading an old opset, binding inputs given as
constants, fixing input shapes, and the types onnx's shape inference finds,
which the importer cross-checks.

    module = import_model("model.onnx", CONVERTERS, input_shapes={"x": [1, 3, 224, 224]})
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference
from xdsl.dialects.builtin import ModuleOp, TensorType

from graphcompiler.frontends.onnx.element_types import static_type
from graphcompiler.frontends.onnx.functions import expand_function_ops
from graphcompiler.frontends.onnx.importer import (
    MIN_OPSET,
    Importer,
    OnnxImportError,
    _default_opset,
    _opset,
)
from graphcompiler.frontends.onnx.weights_in_file import load_weights_in_file


def _upgraded(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model`, converted to opset MIN_OPSET by onnx's version converter
    when older (the converters read the newer ops' form)."""
    version = _default_opset(model)
    if version < 9 and any(node.op_type == "Scan" for node in model.graph.node):
        raise OnnxImportError(  # onnx's converter keeps its batch dim, which opset 9 dropped
            f"opset {version}'s Scan (with a batch dim and sequence_lens) is not supported"
        )
    if version < 7:
        _per_channel_slopes(model)
    if version < MIN_OPSET:
        try:
            model = onnx.version_converter.convert_version(model, MIN_OPSET)
        except Exception as error:  # noqa: BLE001 - the converter raises RuntimeError and kin
            reason = re.sub(r"\s+", " ", str(error)).strip()
            raise OnnxImportError(
                f"opset {version} is older than {MIN_OPSET}, and onnx's version converter "
                f"cannot upgrade it: {reason}"
            ) from None
    _opset(model)
    return model


def _per_channel_slopes(model: onnx.ModelProto) -> None:
    """Before opset 7, PRelu's 1-D slope of C values applied along axis 1
    (PyTorch's PReLU(C)); from 7 on it broadcasts as numpy's, which onnx's
    version converter leaves to the model. Such a slope initializer that
    PRelu alone reads is reshaped to [C, 1, ...] here, in place (the
    model is a copy, or the caller's to edit)."""
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    ranks = None
    for slope in model.graph.initializer:
        nodes = readers.get(slope.name, [])
        if len(slope.dims) != 1 or slope.dims[0] == 1 or not nodes:
            continue
        if any(n.op_type != "PRelu" or list(n.input[1:]) != [slope.name] for n in nodes):
            continue
        if ranks is None:
            inferred = shape_inference.infer_shapes(model).graph
            ranks = {
                i.name: len(i.type.tensor_type.shape.dim)
                for i in [*inferred.input, *inferred.value_info]
            }
        rank = {ranks.get(n.input[0], 0) for n in nodes}
        if len(rank) == 1 and (rank := rank.pop()) > 2:
            shape = [slope.dims[0]] + [1] * (rank - 2)
            slope.dims[:] = shape
            for info in model.graph.input:
                if info.name == slope.name:
                    info.type.tensor_type.shape.CopyFrom(
                        onnx.helper.make_tensor_type_proto(slope.data_type, shape).tensor_type.shape
                    )


def _bind_inputs(model: onnx.ModelProto, constants: Mapping[str, np.ndarray]) -> None:
    """Graph inputs known ahead (weights, axes, shapes) become initializers,
    converted to the input's element type."""
    inputs = {i.name: i for i in model.graph.input}
    for name, values in constants.items():
        if name not in inputs:
            raise OnnxImportError(
                f"constant given for '{name}', which is no graph input "
                f"(inputs: {', '.join(inputs) or 'none'})"
            )
        info = inputs[name]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(info.type.tensor_type.elem_type)
        array = np.asarray(values).astype(dtype)
        dims = info.type.tensor_type.shape.dim
        if len(dims) != array.ndim or any(
            d.HasField("dim_value") and d.dim_value != s
            for d, s in zip(dims, array.shape, strict=True)
        ):
            raise OnnxImportError(
                f"constant '{name}' has shape {list(array.shape)}, which the input's type does not allow"
            )
        model.graph.initializer.append(numpy_helper.from_array(array, name))
        model.graph.input.remove(info)


def _fix_input_shapes(model: onnx.ModelProto, input_shapes: Mapping[str, Sequence[int]]) -> None:
    """Give the graph inputs the static shapes asked for; a symbolic or
    unknown dim left is an error naming the input."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = {i.name: i for i in model.graph.input if i.name not in initializers}
    unknown = sorted(set(input_shapes) - set(inputs))
    if unknown:
        raise OnnxImportError(
            f"input shape given for '{unknown[0]}', which is no graph input "
            f"(inputs: {', '.join(inputs) or 'none'})"
        )
    for name, info in inputs.items():
        if not info.type.HasField("tensor_type"):
            continue
        tensor = info.type.tensor_type
        if name in input_shapes:
            shape = list(input_shapes[name])
            if tensor.HasField("shape") and len(tensor.shape.dim) != len(shape):
                raise OnnxImportError(
                    f"input '{name}' has rank {len(tensor.shape.dim)}, the shape given "
                    f"{'x'.join(map(str, shape))} has rank {len(shape)}"
                )
            tensor.shape.Clear()
            for size in shape:
                tensor.shape.dim.add().dim_value = int(size)
            continue
        dims = tensor.shape.dim if tensor.HasField("shape") else []
        symbolic = [d.dim_param or "?" for d in dims if not d.HasField("dim_value")]
        if symbolic:
            shown = "x".join(
                d.dim_param or "?" if not d.HasField("dim_value") else str(d.dim_value)
                for d in dims
            )
            example = "x".join(
                "1" if not d.HasField("dim_value") else str(d.dim_value) for d in dims
            )
            raise OnnxImportError(
                f"input '{name}' has symbolic dimension '{symbolic[0]}' (shape {shown}); "
                f"give a static shape, e.g. --input-shape {name}={example}, or its array "
                f"(gc-run --input; graphcompiler.compile specializes on each call's shapes)"
            )


def graph_input_dims(model: onnx.ModelProto) -> dict[str, list[int | str] | None]:
    """Each graph input's dims (initializers are no inputs): an int where
    fixed, the symbol's name (or '' when unnamed) where not; None for an
    input of unknown rank."""
    initializers = {t.name for t in model.graph.initializer}
    dims: dict[str, list[int | str] | None] = {}
    for info in model.graph.input:
        if info.name in initializers or not info.type.HasField("tensor_type"):
            continue
        tensor = info.type.tensor_type
        dims[info.name] = (
            [d.dim_value if d.HasField("dim_value") else d.dim_param for d in tensor.shape.dim]
            if tensor.HasField("shape")
            else None
        )
    return dims


def load_model(model: onnx.ModelProto | str | Path) -> onnx.ModelProto:
    """A model from a proto (copied: the importer edits input shapes) or a
    file (its big weights left there until imported: weights_in_file.py)."""
    if isinstance(model, onnx.ModelProto):
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        return copy
    try:
        return load_weights_in_file(Path(model)) or onnx.load(str(model))
    except (OSError, onnx.onnx_cpp2py_export.checker.ValidationError) as error:
        raise OnnxImportError(f"cannot read '{model}': {error}") from None
    except Exception as error:  # noqa: BLE001 - protobuf's DecodeError and kin
        raise OnnxImportError(f"'{model}' is not an ONNX model: {error}") from None


def import_model(
    model: onnx.ModelProto | str | Path,
    converters: Mapping[str, Callable],
    *,
    entry: str = "main",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
    private: bool = False,
    output_layout: list | None = None,
) -> ModuleOp:
    """`private`: `model` is a proto no one else holds (just read from a
    file), edited in place instead of copied (a copy of a model's weights
    took a second). `output_layout`: see Importer.run."""
    private = private and isinstance(model, onnx.ModelProto)
    proto = _upgraded(model if private else load_model(model))
    if proto.functions:
        proto = onnx.inliner.inline_local_functions(proto)
    _bind_inputs(proto, constants or {})
    _fix_input_shapes(proto, input_shapes or {})
    proto = expand_function_ops(proto, converters.__contains__, _types_only)
    return Importer(proto, converters, _inferred_types(proto)).run(entry, output_layout)


SHAPE_CHECK_MAX_ELEMENTS = 1024
"""Initializers up to this size go to onnx's shape inference with their
values (shape arithmetic reads them); bigger ones (weights) only as types."""


def _inferred_types(model: onnx.ModelProto) -> dict[str, TensorType]:
    """The static types onnx.shape_inference finds, for the importer to
    cross-check its own. It runs on a copy of the graph without the bytes
    of the weights: serializing those is most of its time on a real model."""
    types = _types_only(model)
    propagate = not _huge_slice_steps(types.graph)
    try:
        inferred = shape_inference.infer_shapes(types, strict_mode=True, data_prop=propagate)
    except Exception:  # noqa: BLE001 - onnx raises InferenceError and kin
        # onnx's own limits (a size it cannot see, as STFT's frame_length
        # input): what it infers without raising still cross-checks ours
        inferred = shape_inference.infer_shapes(types, strict_mode=False, data_prop=propagate)
    infos = [*inferred.graph.value_info, *inferred.graph.output]
    return {info.name: t for info in infos if (t := static_type(info)) is not None}


def _huge_slice_steps(graph_proto: onnx.GraphProto) -> bool:
    """Does a Slice step by 2^31 or more (a constant)? onnx 1.23's data
    propagation through it never returns (its index + step overflows)."""
    known = {t.name: t for t in graph_proto.initializer}
    for node in graph_proto.node:
        if node.op_type == "Constant" and node.output and node.attribute:
            if node.attribute[0].type == onnx.AttributeProto.TENSOR:
                known[node.output[0]] = node.attribute[0].t
    for node in graph_proto.node:
        if node.op_type == "Slice" and len(node.input) > 4 and node.input[4] in known:
            steps = numpy_helper.to_array(known[node.input[4]])
            if steps.size and np.abs(steps.astype(np.float64)).max() >= 2**31:
                return True
    return False


def _types_only(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with only the types of its big initializers (the weights):
    what shape inference needs."""
    graph_proto = model.graph
    listed = {info.name for info in graph_proto.input}
    small, weights = [], []
    for tensor in graph_proto.initializer:
        if math.prod(tensor.dims) <= SHAPE_CHECK_MAX_ELEMENTS:
            small.append(tensor)
        elif tensor.name not in listed:
            weights.append(
                onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims)
            )
    return onnx.helper.make_model(
        onnx.helper.make_graph(
            list(graph_proto.node),
            graph_proto.name,
            [*graph_proto.input, *weights],
            list(graph_proto.output),
            small,
            value_info=list(graph_proto.value_info),
        ),
        opset_imports=list(model.opset_import),
        ir_version=model.ir_version,
        functions=list(model.functions),
    )
