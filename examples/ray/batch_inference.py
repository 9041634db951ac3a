"""Batch inference on Ray Data: a dataset scored by `map_batches`, one
model per actor, graphcompiler's artifact beside onnxruntime in the same
pipeline.

    python examples/ray/batch_inference.py MODEL.onnx [--rows 512] [--actors 2]

The model is compiled once, in the driver, for batches of `--batch` rows
(its batch dimension fixed when symbolic), and its artifact's bytes travel
to the actors: each loads them (graphcompiler.runtime, numpy only) and never
compiles. onnxruntime's actors open the same .onnx file. Each actor owns
`--threads` CPUs and uses that many threads. The report gives each engine's
rows per second, and whether their outputs agree.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import (  # noqa: E402
    Model,
    ModelInput,
    configure_ray_data,
    engine_payloads,
    random_rows,
    start_ray,
)


class Scorer:
    """A Ray Data actor: one engine's Model, made once per actor."""

    def __init__(self, engine: str, payload, threads: int, model_input: ModelInput):
        self.model = Model(engine, payload, threads, model_input)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"output": self.model(batch["data"])}


def score(dataset, arguments: tuple, args) -> tuple[np.ndarray, float]:
    """All rows scored by Scorer actors; (outputs in row order, rows per second)."""
    import ray

    start = time.perf_counter()
    scored = dataset.map_batches(
        Scorer,
        fn_constructor_args=arguments,
        batch_size=args.batch * args.batches_per_call,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=args.actors),
        num_cpus=args.threads,
    ).take_all()
    seconds = time.perf_counter() - start
    return np.stack([row["output"] for row in scored]), len(scored) / seconds


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="an .onnx model with one input")
    parser.add_argument("--rows", type=int, default=512, help="dataset rows (default: 512)")
    parser.add_argument("--batch", type=int, default=8, help="rows per model call (default: 8)")
    parser.add_argument("--batches-per-call", type=int, default=4,
                        help="model calls per map_batches call (default: 4)")  # fmt: skip
    parser.add_argument("--actors", type=int, default=2, help="actors per engine (default: 2)")
    parser.add_argument("--threads", type=int, default=1, help="CPUs per actor (default: 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine, the best kept")
    args = parser.parse_args(argv)

    import ray

    start_ray(args.actors * args.threads, __name__)
    configure_ray_data()
    payloads, model_input = engine_payloads(args.model, args.batch)
    rows = random_rows(model_input, args.rows)
    # blocks of whole map_batches calls, several per actor, so that every actor is busy
    blocks = max(args.actors, args.rows // (args.batch * args.batches_per_call))
    dataset = ray.data.from_numpy(rows).repartition(blocks).materialize()
    results, outputs = [], {}
    for engine, payload in payloads.items():
        arguments = (engine, payload, args.threads, model_input)
        runs = [score(dataset, arguments, args) for _ in range(args.repeat)]
        outputs[engine] = runs[0][0]
        results.append({"engine": engine, "rows_per_second": max(rate for _, rate in runs)})
    reference = outputs["onnxruntime"]
    error = np.abs(outputs["graphcompiler"] - reference).max() / max(np.abs(reference).max(), 1e-30)
    print(f"{args.rows} rows of {model_input.row_shape}, batches of {model_input.batch}, "
          f"{args.actors} actors x {args.threads} CPUs; max relative difference {error:.1e}")  # fmt: skip
    for result in results:
        result["max_rel_difference"] = float(error)
        print(f"  {result['engine']:14} {result['rows_per_second']:9.1f} rows/s")
    return results


if __name__ == "__main__":
    main()
