"""graphcompiler against numpy and onnxruntime, side by side in one run.

Workloads: a 512x512x512 matmul and the 3-layer MLP of examples/mlp.mlir.
Each runs N times per engine (after a warm-up); the table gives the median
and the ratio graphcompiler / other (below 1: graphcompiler is faster).
onnxruntime is optional (`pip install onnxruntime onnx`).

    python bench/graph_vs_numpy_onnxruntime.py [--runs 50] [--threads 2]
"""

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import graphcompiler

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

MATMUL = """
func.func @main(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = graph.matmul %a, %b : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  func.return %0 : tensor<512x512xf32>
}
"""


def median_ms(call, runs: int) -> float:
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def numpy_matmul(a, b):
    return a @ b


def numpy_mlp(x, w1, b1, w2, b2, w3, b3):
    hidden = np.maximum(x @ w1 + b1, 0)
    hidden = np.maximum(hidden @ w2 + b2, 0)
    return hidden @ w3 + b3


def onnx_session(kind: str, arrays: list[np.ndarray], threads: int):
    """An onnxruntime session computing the same function, or None."""
    try:
        import onnxruntime
        from onnx import TensorProto, helper
    except ImportError:
        return None
    names = [f"i{k}" for k in range(len(arrays))]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
        for n, a in zip(names, arrays, strict=True)
    ]
    if kind == "matmul":
        nodes = [helper.make_node("MatMul", names, ["out"])]
    else:
        x, w1, b1, w2, b2, w3, b3 = names
        nodes = [
            helper.make_node("MatMul", [x, w1], ["m1"]), helper.make_node("Add", ["m1", b1], ["a1"]),
            helper.make_node("Relu", ["a1"], ["r1"]), helper.make_node("MatMul", ["r1", w2], ["m2"]),
            helper.make_node("Add", ["m2", b2], ["a2"]), helper.make_node("Relu", ["a2"], ["r2"]),
            helper.make_node("MatMul", ["r2", w3], ["m3"]), helper.make_node("Add", ["m3", b3], ["out"]),
        ]  # fmt: skip
    output = helper.make_tensor_value_info("out", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(nodes, kind, inputs, [output]))
    model.opset_import[0].version = 17
    model.ir_version = 9  # what onnxruntime releases read
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feeds = dict(zip(names, arrays, strict=True))
    return lambda: session.run(None, feeds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    workloads = [
        ("matmul 512^3", MATMUL, numpy_matmul, "matmul"),
        ("MLP (examples/mlp.mlir)", (EXAMPLES / "mlp.mlir").read_text(), numpy_mlp, "mlp"),
    ]
    print(f"threads={args.threads}, median of {args.runs} runs (ms); ratio = graphcompiler / other")
    print(
        f"{'workload':<26} {'graphcompiler':>13} {'numpy':>8} {'ratio':>6} {'onnxruntime':>11} {'ratio':>6}"
    )
    for title, source, numpy_version, kind in workloads:
        compiled = graphcompiler.compile(source, num_threads=args.threads)
        arrays = [
            rng.standard_normal(t.get_shape()).astype(np.float32) for t in compiled.input_types
        ]
        ours = median_ms(lambda: compiled(*arrays), args.runs)  # noqa: B023
        theirs = median_ms(lambda: numpy_version(*arrays), args.runs)  # noqa: B023
        session = onnx_session(kind, arrays, args.threads)
        if session is None:
            onnx_text = f"{'(not installed)':>11} {'':>6}"
        else:
            onnx_ms = median_ms(session, args.runs)
            onnx_text = f"{onnx_ms:11.3f} {ours / onnx_ms:6.2f}"
        print(f"{title:<26} {ours:13.3f} {theirs:8.3f} {ours / theirs:6.2f} {onnx_text}")


if __name__ == "__main__":
    main()
