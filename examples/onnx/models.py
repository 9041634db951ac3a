"""ONNX models built with onnx.helper (no torch, no download): an MLP, a
transformer encoder (pre-norm blocks: multi-head attention and a GELU MLP,
written the way exporters write them) and a small CNN. Weights come from
a seeded generator, so every build is the same model.

    python examples/onnx/models.py OUT_DIR        # writes mlp.onnx, encoder.onnx, cnn.onnx
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Builder:
    """Nodes and initializers of one graph, with unique value names."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def weight(self, hint: str, shape, scale: float | None = None) -> str:
        scale = scale if scale is not None else 1.0 / math.sqrt(shape[0])
        values = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.constant(hint, values)

    def constant(self, hint: str, values: np.ndarray) -> str:
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(values), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, **attributes) -> str:
        output = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attributes))
        return output

    def model(self, name: str, inputs, outputs) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model)
        return model


def _rename_last(builder: Builder, name: str) -> None:
    builder.nodes[-1].output[0] = name


def _float_input(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _linear(b: Builder, x: str, d_in: int, d_out: int, hint: str) -> str:
    y = b.op("MatMul", [x, b.weight(f"{hint}_w", [d_in, d_out])], f"{hint}_matmul")
    return b.op("Add", [y, b.weight(f"{hint}_b", [d_out], 0.1)], f"{hint}_bias")


def mlp(batch: int = 64, sizes=(256, 512, 512, 10)) -> onnx.ModelProto:
    """Gemm -> Relu layers, a softmax at the end."""
    b = Builder(seed=1)
    x = "x"
    for index, (d_in, d_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
        weight = b.weight(f"fc{index}_w", [d_out, d_in])  # PyTorch's Linear layout
        x = b.op(
            "Gemm", [x, weight, b.weight(f"fc{index}_b", [d_out], 0.1)], f"fc{index}", transB=1
        )
        if index < len(sizes) - 2:
            x = b.op("Relu", [x], f"relu{index}")
    b.op("Softmax", [x], "probabilities", axis=-1)
    _rename_last(b, "probabilities")
    return b.model(
        "mlp",
        [_float_input("x", [batch, sizes[0]])],
        [_float_input("probabilities", [batch, sizes[-1]])],
    )


def _gelu(b: Builder, x: str) -> str:
    """0.5 * x * (1 + erf(x / sqrt(2))), as exporters write GELU before opset 20."""
    scaled = b.op("Div", [x, b.constant("sqrt2", np.array(math.sqrt(2.0), np.float32))])
    one_plus = b.op("Add", [b.op("Erf", [scaled]), b.constant("one", np.array(1.0, np.float32))])
    return b.op(
        "Mul", [b.op("Mul", [x, one_plus]), b.constant("half", np.array(0.5, np.float32))], "gelu"
    )


def _attention(b: Builder, x: str, batch: int, seq: int, d: int, heads: int) -> str:
    head = d // heads
    shape = b.constant("heads_shape", np.array([batch, seq, heads, head], np.int64))

    def project(hint: str, perm: list[int]) -> str:
        y = b.op("Reshape", [_linear(b, x, d, d, hint), shape], f"{hint}_heads")
        return b.op("Transpose", [y], f"{hint}_t", perm=perm)

    q, k, v = project("q", [0, 2, 1, 3]), project("k", [0, 2, 3, 1]), project("v", [0, 2, 1, 3])
    scores = b.op("MatMul", [q, k], "scores")
    scale = b.constant("scale", np.array(1.0 / math.sqrt(head), np.float32))
    probabilities = b.op("Softmax", [b.op("Mul", [scores, scale], "scaled")], "attn", axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probabilities, v], "context")], perm=[0, 2, 1, 3])
    merged = b.op(
        "Reshape", [context, b.constant("merged_shape", np.array([batch, seq, d], np.int64))]
    )
    return _linear(b, merged, d, d, "out")


def _layer_norm(b: Builder, x: str, d: int) -> str:
    gamma = b.constant("ln_gamma", (1.0 + 0.1 * b.rng.standard_normal(d)).astype(np.float32))
    beta = b.constant("ln_beta", (0.1 * b.rng.standard_normal(d)).astype(np.float32))
    return b.op("LayerNormalization", [x, gamma, beta], "ln", axis=-1, epsilon=1e-5)


def encoder(
    layers: int = 2,
    batch: int = 1,
    seq: int = 128,
    d: int = 256,
    heads: int = 4,
    ffn: int | None = None,
) -> onnx.ModelProto:
    """`layers` pre-norm transformer encoder blocks over x [batch, seq, d]."""
    ffn = ffn or 4 * d
    b = Builder(seed=2)
    x = "x"
    for _ in range(layers):
        x = b.op("Add", [x, _attention(b, _layer_norm(b, x, d), batch, seq, d, heads)], "residual")
        hidden = _gelu(b, _linear(b, _layer_norm(b, x, d), d, ffn, "ffn_in"))
        x = b.op("Add", [x, _linear(b, hidden, ffn, d, "ffn_out")], "residual")
    b.op("Identity", [x], "y")
    _rename_last(b, "y")
    shape = [batch, seq, d]
    return b.model("encoder", [_float_input("x", shape)], [_float_input("y", shape)])


def cnn(batch: int = 1) -> onnx.ModelProto:
    """Conv-BN-Relu stages, a max pool, a residual block, global pooling and a classifier."""
    b = Builder(seed=3)

    def conv_bn(x: str, c_in: int, c_out: int, stride: int, hint: str, relu: bool = True) -> str:
        weight = b.weight(f"{hint}_w", [c_out, c_in, 3, 3], 1.0 / math.sqrt(9 * c_in))
        y = b.op("Conv", [x, weight], hint, pads=[1, 1, 1, 1], strides=[stride, stride])
        statistics = [
            (1.0 + 0.1 * b.rng.standard_normal(c_out)).astype(np.float32),  # scale
            (0.1 * b.rng.standard_normal(c_out)).astype(np.float32),  # bias
            (0.1 * b.rng.standard_normal(c_out)).astype(np.float32),  # mean
            b.rng.uniform(0.5, 1.5, c_out).astype(np.float32),  # variance
        ]
        names = [b.constant(f"{hint}_bn{i}", s) for i, s in enumerate(statistics)]
        y = b.op("BatchNormalization", [y, *names], f"{hint}_bn", epsilon=1e-5)
        return b.op("Relu", [y], f"{hint}_relu") if relu else y

    x = conv_bn("image", 3, 16, 1, "stem")
    x = b.op("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2])
    branch = conv_bn(conv_bn(x, 16, 16, 1, "block_a"), 16, 16, 1, "block_b", relu=False)
    x = b.op("Relu", [b.op("Add", [x, branch], "block_add")], "block_relu")
    x = conv_bn(x, 16, 32, 2, "down")
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    b.op("Gemm", [x, b.weight("fc_w", [10, 32]), b.weight("fc_b", [10], 0.1)], "logits", transB=1)
    _rename_last(b, "logits")
    return b.model(
        "cnn", [_float_input("image", [batch, 3, 32, 32])], [_float_input("logits", [batch, 10])]
    )


MODELS = {"mlp": mlp, "encoder": encoder, "cnn": cnn}


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        onnx.save(build(), out / f"{name}.onnx")
        print(out / f"{name}.onnx")
