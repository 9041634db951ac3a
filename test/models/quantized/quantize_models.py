"""Quantized versions of the model suite's static TorchScript exports, made
with onnxruntime's quantization tools (python test/models/quantized/quantize_models.py;
needs onnxruntime, never run by CI):

- `<model>_int8_dynamic.onnx`: `quantize_dynamic` (int8 weights, activations
  quantized at run time: DynamicQuantizeLinear + MatMulInteger / ConvInteger);
- `<model>_int8_qdq.onnx`: `quantize_static` in the QDQ format (per-channel
  int8 weights, u8 activations calibrated on the model's saved inputs).

Each file's outputs on the saved inputs go to `<model>_int8_*.npz` beside
it, computed by onnxruntime with its graph optimizations off and every
MatMulInteger written out as an int32 MatMul (exact integer products), and
what was made to `manifest.json` with onnxruntime's own error against them:
on a host without VNNI its u8 x s8 kernels (`vpmaddubsw`) saturate pairs of
products at 16 bits, so its MatMulInteger results, and the QDQ matmuls it
fuses into them, differ from the exact sums (up to 25% of an output here).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)

HERE = Path(__file__).resolve().parent
MODELS = HERE.parent
SOURCES = ["bert", "gpt2", "llama", "vit", "resnet", "mobilenet_v2", "efficientnet"]


class SavedInputs(CalibrationDataReader):
    """The model's saved input set, once (the calibration data)."""

    def __init__(self, inputs: dict[str, np.ndarray]):
        self.pending = [inputs]

    def get_next(self):
        return self.pending.pop() if self.pending else None


def exact_integer_products(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with each MatMulInteger written out as int32 casts, zero-point
    subtractions and an int32 MatMul, which onnxruntime computes exactly."""
    nodes = []
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            nodes.append(node)
            continue
        operands = []
        for side, (value, zero) in enumerate(
            zip(node.input[:2], [*node.input[2:4], "", ""][:2], strict=True)
        ):
            name = f"{node.output[0]}_operand{side}"
            nodes.append(helper.make_node("Cast", [value], [name + "_wide"], to=TensorProto.INT32))
            if zero:
                nodes.append(
                    helper.make_node("Cast", [zero], [name + "_zero"], to=TensorProto.INT32)
                )
                nodes.append(helper.make_node("Sub", [name + "_wide", name + "_zero"], [name]))
            else:
                name += "_wide"
            operands.append(name)
        nodes.append(helper.make_node("MatMul", operands, list(node.output)))
    exact = onnx.ModelProto()
    exact.CopyFrom(model)
    del exact.graph.node[:]
    exact.graph.node.extend(nodes)
    return exact


def run(model: onnx.ModelProto, inputs: dict[str, np.ndarray], optimize: bool) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, {i.name: inputs[i.name] for i in session.get_inputs()})


def max_relative_error(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    return max(
        float(np.max(np.abs(g - w)) / (np.max(np.abs(w)) or 1.0))
        for g, w in zip(got, want, strict=True)
    )


def main() -> None:
    made = []
    for name in SOURCES:
        source = MODELS / f"{name}_torchscript_static.onnx"
        with np.load(MODELS / f"{name}_torchscript_static.npz") as data:
            inputs = {k: data[k] for k in data.files if not k.startswith("output_")}
        for scheme in ("dynamic", "qdq"):
            target = HERE / f"{name}_int8_{scheme}.onnx"
            if scheme == "dynamic":
                quantize_dynamic(source, target, weight_type=QuantType.QInt8)
            else:
                quantize_static(
                    source, target, SavedInputs(inputs), quant_format=QuantFormat.QDQ,
                    per_channel=True, weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8,
                )  # fmt: skip
            model = onnx.load(target)
            outputs = run(exact_integer_products(model), inputs, optimize=False)
            np.savez(target.with_suffix(".npz"), **inputs,
                     **{f"output_{i}": o for i, o in enumerate(outputs)})  # fmt: skip
            made.append({
                "file": target.name, "source": source.name, "scheme": scheme,
                "onnxruntime_max_rel_error": max_relative_error(run(model, inputs, True), outputs),
            })  # fmt: skip
            print(target.name)
    versions = {"onnxruntime": onnxruntime.__version__}
    (HERE / "manifest.json").write_text(
        json.dumps(
            {"generated_by": "quantize_models.py", "versions": versions, "models": made}, indent=1
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
