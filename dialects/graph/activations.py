"""Activation functions with parameters: gelu, leaky_relu, elu, selu,
softplus, hard_sigmoid, hard_swish and prelu (the parameter-free ones,
relu and sigmoid among them, are in elementwise.py)."""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from graphcompiler.dialects.graph.base import (
    GraphOp,
    _fmt,
    _require_float,
    _require_same_element_type,
    _shape,
    broadcast_shapes,
    f32_attr,
)
from graphcompiler.dialects.graph.elementwise import FloatUnaryOp


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """x * Phi(x): 0.5 * x * (1 + erf(x / sqrt(2))) with `approximate = "none"`
    (the default), 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))
    with `approximate = "tanh"` (ONNX Gelu, PyTorch); NaN stays NaN. Phi is the
    standard normal CDF.

    Example:

        %y = graph.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
    """

    name = "graph.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        if properties["approximate"].data not in ("none", "tanh"):
            raise VerifyException(
                f'approximate must be "none" or "tanh", got "{properties["approximate"].data}"'
            )
        return super().infer_type(operand_types, properties, result_type)


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """x if x >= 0 else alpha * x (alpha defaults to 0.01, as in PyTorch and
    ONNX); NaN stays NaN.

    Example:

        %y = graph.leaky_relu %x {alpha = 0.2 : f32} : tensor<4x8xf32>
    """

    name = "graph.leaky_relu"
    alpha = prop_def(FloatAttr, default_value=f32_attr(0.01))

    @property
    def alpha_value(self) -> float:
        return self.alpha.value.data


@irdl_op_definition
class EluOp(FloatUnaryOp):
    """x if x > 0 else alpha * (exp(x) - 1) (ONNX Elu; alpha defaults to 1.0);
    NaN stays NaN."""

    name = "graph.elu"
    alpha = prop_def(FloatAttr, default_value=f32_attr(1.0))

    @property
    def alpha_value(self) -> float:
        return self.alpha.value.data


@irdl_op_definition
class SeluOp(FloatUnaryOp):
    """gamma * (x if x > 0 else alpha * exp(x) - alpha) (ONNX Selu; alpha
    defaults to 1.6732632, gamma to 1.0507010, ONNX's f32 values); NaN stays NaN."""

    name = "graph.selu"
    alpha = prop_def(FloatAttr, default_value=f32_attr(1.67326319217681884765625))
    gamma = prop_def(FloatAttr, default_value=f32_attr(1.05070102214813232421875))

    @property
    def alpha_value(self) -> float:
        return self.alpha.value.data

    @property
    def gamma_value(self) -> float:
        return self.gamma.value.data


@irdl_op_definition
class SoftplusOp(FloatUnaryOp):
    """log(1 + exp(x)), computed as numpy.logaddexp(0, x) = max(x, 0) + log1p(exp(-|x|)): x for
    large x (no overflow to inf), exp(x) to full relative precision for very negative x;
    NaN stays NaN, +inf gives +inf, -inf gives 0."""

    name = "graph.softplus"


@irdl_op_definition
class HardSigmoidOp(FloatUnaryOp):
    """max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid; alpha defaults to
    0.2, beta to 0.5); NaN stays NaN."""

    name = "graph.hard_sigmoid"
    alpha = prop_def(FloatAttr, default_value=f32_attr(0.2))
    beta = prop_def(FloatAttr, default_value=f32_attr(0.5))

    @property
    def alpha_value(self) -> float:
        return self.alpha.value.data

    @property
    def beta_value(self) -> float:
        return self.beta.value.data


@irdl_op_definition
class HardSwishOp(FloatUnaryOp):
    """x * max(0, min(1, x / 6 + 0.5)) (ONNX HardSwish: hard_sigmoid with alpha 1/6, beta 0.5);
    NaN stays NaN."""

    name = "graph.hard_swish"


@irdl_op_definition
class PreluOp(GraphOp):
    """x if x >= 0 else slope * x (ONNX PRelu; numpy.where(x < 0, slope * x, x)):
    `slope` broadcasts to the input's shape (never the other way); NaN stays NaN.

    Example:

        %y = graph.prelu %x, %slope : (tensor<1x3x8x8xf32>, tensor<3x1x1xf32>) -> tensor<1x3x8x8xf32>
    """

    name = "graph.prelu"
    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $slope attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_type(cls, operand_types, properties, result_type=None):
        _require_float(cls, operand_types[0], 0)
        _require_same_element_type(cls, operand_types)
        shape = _shape(operand_types[0])
        roles = [cls.operand_role(0), cls.operand_role(1)]
        if broadcast_shapes([shape, _shape(operand_types[1])], roles) != shape:
            raise VerifyException(
                f"{roles[1]} of shape {_fmt(_shape(operand_types[1]))} does not broadcast to "
                f"the shape {_fmt(shape)} of {roles[0]}"
            )
        return operand_types[0]
