"""Converters of the fused ops onnxruntime's graph optimizer writes into the
models it saves (`SessionOptions.optimized_model_filepath`, optimum's
`ORTOptimizer`): at its default and extended levels, every convolution
network comes back with FusedConv and every transformer with FusedMatMul.

Each becomes the standard ops it fused, so that our own fusions see what
they would see in the model as exported:
- FusedConv (com.microsoft): Conv (+ bias), + Z (input 3, the residual
  summed before the activation), then `activation` with its
  `activation_params` (Relu, Tanh, Sigmoid, LeakyRelu [alpha], Clip [min,
  max], HardSigmoid [alpha, beta]; none: the identity);
- FusedGemm (com.microsoft): Gemm, then `activation` with
  activation_alpha / _beta, onnxruntime's activation functors (those of
  the recurrent ops: ops_recurrent.py);
- FusedMatMul and its former name TransposeMatMul (com.microsoft):
  alpha * op(A) op(B), where transBatchA moves A's first dim to the rows'
  place ([d0, d1, ..., M?, K] -> [d1, ..., d0, K], as onnxruntime does;
  checked against it), then transA swaps A's last two dims; B alike.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from graphcompiler.frontends.onnx.importer import Node
from graphcompiler.frontends.onnx.ops import CONVERTERS, _linear, converter, numpy_matmul
from graphcompiler.frontends.onnx.ops_contrib import MICROSOFT
from graphcompiler.frontends.onnx.ops_recurrent import PARAMETERS, _activation

CONV_ACTIVATIONS = {"Relu": 0, "Tanh": 0, "Sigmoid": 0, "LeakyRelu": 1, "Clip": 2, "HardSigmoid": 2}
"""FusedConv's activations (onnxruntime's MLAS ones) and how many of
activation_params each reads."""


@converter("FusedConv", domain=MICROSOFT)
def _fused_conv(node: Node) -> list:
    (result,) = CONVERTERS["Conv"](node)
    if node.has_input(3):
        result = node.make("add", [result, node.value(3)])
    name = node.attr("activation", "") or "Identity"
    params = [float(p) for p in node.attr("activation_params", []) or []]
    if name == "Identity":
        return [result]
    if name not in CONV_ACTIVATIONS:
        raise node.unsupported_attribute("activation")
    if len(params) < CONV_ACTIVATIONS[name]:
        raise node.error(f"activation {name} takes {CONV_ACTIVATIONS[name]} activation_params")
    if name == "Clip":
        low, high = params[:2]
        return [node.make("minimum", [node.make("maximum", [result, node.scalar(low, result)]),
                                      node.scalar(high, result)])]  # fmt: skip
    alpha, beta = (params + [None, None])[:2]
    return [_activation(node, name, alpha, beta)(result)]


@converter("FusedGemm", domain=MICROSOFT)
def _fused_gemm(node: Node) -> list:
    (result,) = CONVERTERS["Gemm"](node)
    name = node.attr("activation", "")
    if not name:
        return [result]
    if name not in PARAMETERS:
        raise node.unsupported_attribute("activation")
    used, alpha, beta = PARAMETERS[name]
    if used >= 1:
        alpha = float(node.attr("activation_alpha", alpha))
    if used >= 2:
        beta = float(node.attr("activation_beta", beta))
    node.attr("activation_alpha")
    node.attr("activation_beta")  # read: the functors ignore what they do not take
    node.attr("activation_gamma")
    return [_activation(node, name, alpha, beta)(result)]


@converter("FusedMatMul", "TransposeMatMul", domain=MICROSOFT)
def _fused_matmul(node: Node) -> list:
    a = _operand(node, 0, bool(node.attr("transBatchA", 0)), bool(node.attr("transA", 0)))
    b = _operand(node, 1, bool(node.attr("transBatchB", 0)), bool(node.attr("transB", 0)))
    return [_linear(node, numpy_matmul(node, a, b), float(node.attr("alpha", 1.0)))]


def _operand(node: Node, index: int, batch_transposed: bool, transposed: bool) -> SSAValue:
    """Input `index` as the matmul reads it: its first dim moved before the
    last (transBatch, rank 3 and up), then its last two dims swapped."""
    value = node.value(index)
    rank = len(node.shape(index))
    if rank < 2 and (batch_transposed or transposed):
        raise node.error(f"input #{index} of rank {rank} cannot be transposed")
    perm = list(range(rank))
    if batch_transposed and rank > 2:
        perm = [*range(1, rank - 1), 0, rank - 1]
    if transposed:
        perm[-2], perm[-1] = perm[-1], perm[-2]
    if perm == sorted(perm):
        return value
    return node.make("transpose", [value], perm=perm)
