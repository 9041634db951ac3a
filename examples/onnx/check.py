"""Compiles the example ONNX models with graphcompiler and compares them with
onnxruntime on random inputs (max |difference| <= 1e-4 * max(1, max |expected|)).

    python examples/onnx/check.py          # mlp, encoder, cnn; exit 1 on a mismatch
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from models import MODELS  # noqa: E402

import graphcompiler  # noqa: E402

TOLERANCE = 1e-4


def random_inputs(model, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
    }


def onnxruntime_run(model, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


def compare(name: str, model) -> bool:
    """Compile `model`, run it next to onnxruntime and print the difference."""
    feeds = random_inputs(model)
    start = time.perf_counter()
    compiled = graphcompiler.compile(model)
    compile_seconds = time.perf_counter() - start
    outputs = compiled(*feeds.values())
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    ok = True
    for got, expected in zip(outputs, onnxruntime_run(model, feeds), strict=True):
        error = float(np.max(np.abs(got - expected)))
        bound = TOLERANCE * max(1.0, float(np.max(np.abs(expected))))
        ok &= error <= bound
        print(
            f"{name}: compiled in {compile_seconds:.2f} s, max |difference| to onnxruntime {error:.2e} "
            f"({'ok' if error <= bound else 'MISMATCH'}, bound {bound:.1e})"
        )
    return ok


if __name__ == "__main__":
    results = [compare(name, build()) for name, build in MODELS.items()]
    sys.exit(0 if all(results) else 1)
