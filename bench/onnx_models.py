"""A bench Graph as an ONNX model (onnx.helper) and an onnxruntime session.

Model parameters (`weight` inputs) become initializers, as in any exported
model, so onnxruntime may prepack them (graphcompiler gets them as
compile-time constants); `weights_as_inputs` keeps them inputs. Gelu is written as ONNX
exporters write it (x * 0.5 * (1 + erf(x / sqrt 2))), which onnxruntime fuses.
"""

from __future__ import annotations

import math

import numpy as np

from bench.graph import Graph, Node

OPSET = 17  # LayerNormalization
IR_VERSION = 9  # read by every onnxruntime since 1.15


def available() -> str | None:
    """None when onnx and onnxruntime import, else why not."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as error:
        return f"not installed ({error.name}); pip install -e '.[bench]'"
    return None


class _Builder:
    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list = []
        self.initializers: list = []
        self._count = 0

    def const(self, array: np.ndarray, hint: str) -> str:
        name = self.fresh(hint)
        self.initializers.append(self.numpy_helper.from_array(array, name))
        return name

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"_{hint}{self._count}"

    def node(self, op: str, inputs: list[str], output: str | None = None, **attrs) -> str:
        output = output or self.fresh(op.lower())
        self.nodes.append(self.helper.make_node(op, inputs, [output], **attrs))
        return output


def _emit(b: _Builder, node: Node, names: list[str]) -> None:
    out, attrs, op = node.output.name, node.attrs, node.op
    simple = {"add": "Add", "sub": "Sub", "mul": "Mul", "relu": "Relu", "exp": "Exp"}
    if op == "constant":
        b.initializers.append(
            b.numpy_helper.from_array(np.full(node.output.shape, attrs["value"], np.float32), out)
        )
    elif op in simple:
        b.node(simple[op], names, out)
    elif op == "gelu":
        scaled = b.node("Mul", [names[0], b.const(np.float32([1 / math.sqrt(2)]), "rsqrt2")])
        plus_one = b.node("Add", [b.node("Erf", [scaled]), b.const(np.float32([1]), "one")])
        half = b.node("Mul", [names[0], b.const(np.float32([0.5]), "half")])
        b.node("Mul", [half, plus_one], out)
    elif op == "softmax":
        b.node("Softmax", names, out, axis=-1)
    elif op == "layer_norm":
        b.node("LayerNormalization", names, out, axis=-1, epsilon=attrs["epsilon"])
    elif op == "batch_norm":
        b.node("BatchNormalization", names, out, epsilon=attrs["epsilon"])
    elif op == "matmul":
        rhs = names[1]
        if attrs["transpose_b"]:
            rank = len(node.inputs[1].shape)
            perm = [*range(rank - 2), rank - 1, rank - 2]
            rhs = b.node("Transpose", [rhs], perm=perm)
        b.node("MatMul", [names[0], rhs], out)
    elif op == "reshape":
        shape = b.const(np.array(node.output.shape, np.int64), "shape")
        b.node("Reshape", [names[0], shape], out)
    elif op == "transpose":
        b.node("Transpose", names, out, perm=attrs["perm"])
    elif op == "conv2d":
        kernel = list(node.inputs[1].shape[2:])
        b.node("Conv", names, out, kernel_shape=kernel, pads=[attrs["padding"]] * 4)
    else:
        raise ValueError(f"no ONNX form for bench op '{op}'")


def build_model(graph: Graph, arrays: list[np.ndarray], weights_as_inputs: bool = False):
    """(model bytes, feed names): the ONNX model of `graph`; `arrays` give the
    initializers' values."""
    from onnx import TensorProto

    b = _Builder()
    inputs, feeds = [], []
    for spec, array in zip(graph.inputs, arrays, strict=True):
        name = spec.value.name
        if spec.weight and not weights_as_inputs:
            b.initializers.append(b.numpy_helper.from_array(array, name))
        else:
            inputs.append(
                b.helper.make_tensor_value_info(name, TensorProto.FLOAT, spec.value.shape)
            )
            feeds.append(name)
    for node in graph.nodes:
        _emit(b, node, [v.name for v in node.inputs])
    output = b.helper.make_tensor_value_info(
        graph.output.name, TensorProto.FLOAT, graph.output.shape
    )
    onnx_graph = b.helper.make_graph(b.nodes, "bench", inputs, [output], b.initializers)
    model = b.helper.make_model(onnx_graph, opset_imports=[b.helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model.SerializeToString(), feeds


def session(model: bytes, threads: int):
    """A CPU-EP session: `threads` intra-op threads, one inter-op, sequential."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
