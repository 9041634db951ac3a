"""`graph.matmul`: batched matrix products."""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    _shape,
    bool_value,
    broadcast_shapes,
    widened_element,
)


@irdl_op_definition
class MatmulOp(GraphOp):
    """a @ b over the last two dims (optionally transposed); the batch dims
    in front broadcast like numpy.

    a is [..., M, K] ([..., K, M] with `transpose_a`), b is [..., K, N]
    ([..., N, K] with `transpose_b`, e.g. a PyTorch Linear weight), the
    result [..., M, N] (numpy.matmul; both operands have rank >= 2 and one
    element type, except that a u8 A may multiply an i8 B). f16 and bf16
    accumulate in f32; integers wrap. The result may be wider than the
    operands (`widens`): integer operands of at most 16 bits give an i32
    result (each product and the sum in i32, as ONNX MatMulInteger
    computes; u8 x i8 is what VNNI's `vpdpbusd` multiplies), f16 and bf16
    operands an f32 one (the f32 sum not rounded back: oneDNN's bf16
    fpmath mode, `graph-bf16-fpmath`).

    Example:

        %y = graph.matmul %x, %w {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
        %acc = graph.matmul %q, %wq : (tensor<4x8xi16>, tensor<8x16xi16>) -> tensor<4x16xi32>
        %acc8 = graph.matmul %u, %w8 : (tensor<4x8xui8>, tensor<8x16xi8>) -> tensor<4x16xi32>
        %z = graph.matmul %xb, %wb : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xf32>
    """

    name = "graph.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_a = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    transpose_b = prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    assembly_format = "$a `,` $b attr-dict `:` functional-type(operands, results)"

    @property
    def a_transposed(self) -> bool:
        """`transpose_a`: a is [..., K, M]."""
        return bool(self.transpose_a.value.data)

    @property
    def b_transposed(self) -> bool:
        """`transpose_b`: b is [..., N, K]."""
        return bool(self.transpose_b.value.data)

    @property
    def is_transposed(self) -> bool:
        """Whether either operand is transposed."""
        return self.a_transposed or self.b_transposed

    @property
    def widens(self) -> bool:
        """A result wider than the operands (see the op's doc)."""
        return self.result.type.element_type != self.a.type.element_type

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        element = widened_element(cls, operand_types, result_type)
        shapes = [_shape(t) for t in operand_types]
        for index, shape in enumerate(shapes):
            if len(shape) < 2:
                raise VerifyException(
                    f"{cls.operand_role(index)} has rank {len(shape)}, expected at least 2"
                )
        (m, k_a), (k_b, n) = shapes[0][-2:], shapes[1][-2:]
        if bool_value(properties, "transpose_a"):
            m, k_a = k_a, m
        if bool_value(properties, "transpose_b"):
            k_b, n = n, k_b
        if k_a != k_b:
            raise VerifyException(
                f"{cls.operand_role(1)} contracting dimension is {k_b}, expected {k_a} to "
                f"match {cls.operand_role(0)}"
            )
        batch = broadcast_shapes(
            [shapes[0][:-2], shapes[1][:-2]], [cls.operand_role(0), cls.operand_role(1)]
        )
        return TensorType(element, [*batch, m, n])
