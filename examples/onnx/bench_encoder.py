"""The issue's target model: a 12-layer, d=512 transformer encoder built with
onnx.helper, timed through import and compile, checked against onnxruntime.

    python examples/onnx/bench_encoder.py [--layers 12] [--d 512] [--seq 128] [--threads N]

Prints the model size, the import and compile times (seconds, one run
each: compile times vary with the machine's load), the max difference to
onnxruntime and the median run time of both. Never run by CI.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).parent))

from check import onnxruntime_run, random_inputs  # noqa: E402
from models import encoder  # noqa: E402

import graphcompiler  # noqa: E402
from graphcompiler.frontends.onnx import import_onnx  # noqa: E402


def median_ms(run, repeats: int = 10) -> float:
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--d", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    model = encoder(layers=args.layers, seq=args.seq, d=args.d, heads=args.heads)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "encoder.onnx"
        onnx.save(model, path)
        print(
            f"model: {args.layers} layers, d={args.d}, seq={args.seq}, {path.stat().st_size / 1e6:.0f} MB"
        )
        start = time.perf_counter()
        module = import_onnx(path)
        print(f"import: {time.perf_counter() - start:.2f} s ({sum(1 for _ in module.walk())} ops)")
    start = time.perf_counter()
    compiled = graphcompiler.compile(module, num_threads=args.threads)
    print(f"compile: {time.perf_counter() - start:.2f} s")

    feeds = random_inputs(model)
    (got,), (expected,) = (compiled(*feeds.values()),), onnxruntime_run(model, feeds)
    print(
        f"max |difference| to onnxruntime: {float(np.max(np.abs(got - expected))):.2e} "
        f"(max |output| {float(np.max(np.abs(expected))):.1f})"
    )
    import onnxruntime

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    ours = median_ms(lambda: compiled(*feeds.values()))
    theirs = median_ms(lambda: session.run(None, feeds))
    print(f"run: graphcompiler {ours:.1f} ms, onnxruntime {theirs:.1f} ms (median of 10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
