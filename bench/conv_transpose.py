"""Transposed convolutions (ONNX ConvTranspose, one node) as decoders and
vocoders use them, graphcompiler against onnxruntime in one run:

    python -m bench.conv_transpose [--threads 1,2] [--seconds 1]

Medians (and minima) in ms; ours/ort above 1: graphcompiler slower. The
weights are initializers, as in an exported model.
"""

from __future__ import annotations

import argparse

import numpy as np

from bench.onnx_models import OPSET, session
from bench.runner import measure_side_by_side, paired_ratio, pause_before_blocks

LAYERS = [
    # name, x shape, weight shape, attributes
    ("unet_up_2x2_s2", [1, 128, 32, 32], [128, 64, 2, 2], {"strides": [2, 2]}),
    ("fcn_3x3_s2", [1, 64, 56, 56], [64, 64, 3, 3],
     {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    ("dcgan_4x4_s2", [1, 256, 16, 16], [256, 128, 4, 4], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("hifigan_1d_k16_s8", [1, 256, 64], [256, 128, 16], {"strides": [8], "pads": [4, 4]}),
]  # fmt: skip


def model(x_shape: list[int], w_shape: list[int], attributes: dict):
    from onnx import TensorProto, helper, numpy_helper

    weight = np.random.default_rng(0).standard_normal(w_shape).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], **attributes)],
        "conv_transpose",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weight, "w")],
    )
    opsets = [helper.make_opsetid("", OPSET)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def main() -> int:
    import graphcompiler

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    print("| layer | thr | ours ms (min) | ort ms (min) | ours/ort | max abs err |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, x_shape, w_shape, attributes in LAYERS:
        onnx_model = model(x_shape, w_shape, attributes)
        x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
        compiled = graphcompiler.compile(onnx_model, cache=False)
        for threads in (int(t) for t in args.threads.split(",")):
            ort = session(onnx_model.SerializeToString(), threads)
            compiled.set_num_threads(threads)
            error = float(np.abs(compiled(x) - ort.run(None, {"x": x})[0]).max())
            calls = {
                "ours": lambda c=compiled, x=x: c(x),
                "ort": lambda s=ort, x=x: s.run(None, {"x": x}),
            }
            timed = measure_side_by_side(calls, args.seconds, 5, pause_before_blocks(threads))
            ours, theirs = timed["ours"], timed["ort"]
            print(
                f"| {name} | {threads} | {ours['median_ms']:.3f} ({ours['min_ms']:.3f}) | "
                f"{theirs['median_ms']:.3f} ({theirs['min_ms']:.3f}) | "
                f"{paired_ratio(ours, theirs):.2f}x | {error:.1e} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
