"""ONNX element types and value types as the graph dialect's."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

from graphcompiler.dialects import graph
from graphcompiler.frontends.onnx.errors import OnnxImportError

_ONNX_TYPES: dict[int, Callable[[], Attribute]] = {
    onnx.TensorProto.FLOAT: Float32Type,
    onnx.TensorProto.FLOAT16: Float16Type,
    onnx.TensorProto.BFLOAT16: BFloat16Type,
    onnx.TensorProto.DOUBLE: Float64Type,
    onnx.TensorProto.INT64: lambda: IntegerType(64),
    onnx.TensorProto.INT32: lambda: IntegerType(32),
    onnx.TensorProto.INT16: lambda: IntegerType(16),
    onnx.TensorProto.INT8: lambda: IntegerType(8),
    onnx.TensorProto.UINT8: lambda: IntegerType(8, Signedness.UNSIGNED),
    onnx.TensorProto.UINT16: lambda: IntegerType(16, Signedness.UNSIGNED),
    onnx.TensorProto.UINT32: lambda: IntegerType(32, Signedness.UNSIGNED),
    onnx.TensorProto.UINT64: lambda: IntegerType(64, Signedness.UNSIGNED),
    onnx.TensorProto.BOOL: lambda: IntegerType(1),
    onnx.TensorProto.FLOAT8E4M3FN: Float8E4M3FNType,
    onnx.TensorProto.FLOAT8E4M3FNUZ: Float8E4M3FNUZType,
    onnx.TensorProto.FLOAT8E5M2: Float8E5M2Type,
    onnx.TensorProto.FLOAT8E5M2FNUZ: Float8E5M2FNUZType,
    onnx.TensorProto.FLOAT4E2M1: Float4E2M1FNType,
    onnx.TensorProto.INT4: lambda: IntegerType(4),
    onnx.TensorProto.UINT4: lambda: IntegerType(4, Signedness.UNSIGNED),
    onnx.TensorProto.INT2: lambda: IntegerType(2),
    onnx.TensorProto.UINT2: lambda: IntegerType(2, Signedness.UNSIGNED),
}
"""ONNX element types that have a graph counterpart (when the graph dialect
accepts it: `graph.is_element_type` decides, so new types are picked up)."""


def element_type(onnx_type: int, where: str) -> Attribute:
    """The graph element type of ONNX tensor element type `onnx_type`."""
    make = _ONNX_TYPES.get(onnx_type)
    type_ = make() if make else None
    if type_ is None or not graph.is_element_type(type_):
        name = onnx.TensorProto.DataType.Name(onnx_type)
        raise OnnxImportError(f"{where}: element type {name} is not supported")
    return type_


def array_type(array: np.ndarray, where: str) -> Attribute:
    """The graph element type of a numpy array's dtype."""
    return element_type(onnx.helper.np_dtype_to_tensor_dtype(array.dtype), where)


def static_type(info: onnx.ValueInfoProto) -> TensorType | None:
    """The static tensor type of a value, or None if shape inference left it open."""
    if not info.type.HasField("tensor_type"):
        return None
    tensor = info.type.tensor_type
    if not tensor.HasField("shape") or any(not d.HasField("dim_value") for d in tensor.shape.dim):
        return None
    make = _ONNX_TYPES.get(tensor.elem_type)
    type_ = make() if make else None
    if type_ is None or not graph.is_element_type(type_):
        return None
    return TensorType(type_, [d.dim_value for d in tensor.shape.dim])


def input_type(info: onnx.ValueInfoProto) -> TensorType:
    where = f"input '{info.name}'"
    if not info.type.HasField("tensor_type"):
        kind = info.type.WhichOneof("value").removesuffix("_type")
        raise OnnxImportError(f"{where} is a {kind}, not a tensor (tensors only)")
    tensor = info.type.tensor_type
    type_ = element_type(tensor.elem_type, where)
    if not tensor.HasField("shape"):
        raise OnnxImportError(
            f"{where} has no shape; give one, e.g. --input-shape {info.name}=1x3x224x224"
        )
    return TensorType(type_, [d.dim_value for d in tensor.shape.dim])
