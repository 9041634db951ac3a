"""What the Ray examples share: compiling a model once into artifact bytes
for a fixed batch, and running any number of rows through it in batches."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class ModelInput:
    """A one-input model's input: its name, the rows per call, one row's shape."""

    name: str
    batch: int
    row_shape: tuple[int, ...]


def compile_artifact(model: Path, batch: int) -> tuple[bytes, ModelInput]:
    """The artifact of `model` (one input, batch first) for `batch` rows per
    call, its batch dimension fixed when symbolic (a static one is kept)."""
    import graphcompiler
    from graphcompiler.frontends.onnx import graph_input_dims, load_model

    dims = graph_input_dims(load_model(model))
    if len(dims) != 1:
        raise SystemExit(f"{model}: the examples score one-input models, this one has {len(dims)}")
    (name, shape), = dims.items()  # fmt: skip
    rows = shape[0] if isinstance(shape[0], int) and shape[0] > 0 else batch
    if not all(isinstance(d, int) and d > 0 for d in shape[1:]):
        raise SystemExit(f"{model}: input {name} needs a static row shape, got {shape}")
    compiled = graphcompiler.compile(model, input_shapes={name: [rows, *shape[1:]]})
    return compiled.to_bytes(), ModelInput(name, rows, tuple(shape[1:]))


def run_in_batches(
    graph: Callable[[np.ndarray], object], rows: np.ndarray, batch: int
) -> np.ndarray:
    """`graph`'s first output for every row of `rows`, calling it on `batch`
    rows at a time; the last call is padded with zeros and its padding dropped."""
    outputs = []
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        if len(chunk) < batch:
            padding = np.zeros((batch - len(chunk), *chunk.shape[1:]), chunk.dtype)
            chunk = np.concatenate([chunk, padding])
        result = graph(np.ascontiguousarray(chunk, np.float32))
        first = result[0] if isinstance(result, tuple | list) else result
        outputs.append(first[: min(batch, len(rows) - start)])
    return np.concatenate(outputs)


class Model:
    """One engine's copy of the model, scoring rows: graphcompiler's
    artifact (`payload`: its bytes) or an onnxruntime session (`payload`:
    the .onnx file's bytes), each on `threads` threads. The payload may be
    a reference into Ray's object store (see engine_payloads)."""

    def __init__(self, engine: str, payload, threads: int, model_input: ModelInput):
        import ray

        if isinstance(payload, ray.ObjectRef):
            payload = ray.get(payload)
        self.input = model_input
        if engine == "graphcompiler":
            from graphcompiler.runtime import loads

            graph = loads(payload)
            graph.set_num_threads(threads)
            self.run = graph
        elif engine == "onnxruntime":
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            session = onnxruntime.InferenceSession(payload, options, ["CPUExecutionProvider"])
            self.run = lambda rows: session.run(None, {model_input.name: rows})[0]
        else:
            raise ValueError(f"unknown engine {engine!r} (graphcompiler or onnxruntime)")

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        return run_in_batches(self.run, rows, self.input.batch)


def engine_payloads(model: Path, batch: int) -> tuple[dict, ModelInput]:
    """What each engine's Model is made of, put in Ray's object store once
    (a model's bytes pickled into every actor's arguments would be copied
    per actor, and Ray Data warns of a UDF that large), and the model's input."""
    import ray

    artifact, model_input = compile_artifact(model, batch)
    payloads = {"graphcompiler": artifact, "onnxruntime": model.read_bytes()}
    return {engine: ray.put(payload) for engine, payload in payloads.items()}, model_input


def start_ray(cpus: int, *modules: str) -> None:
    """A local Ray with `cpus` CPUs (unless one is running). Ray's workers
    do not have the examples on their path: the classes and functions of
    `modules` travel pickled by value instead of by module name."""
    import ray
    from ray import cloudpickle

    for name in ("scoring", *modules):
        module = sys.modules.get(name)
        if module is not None and name != "__main__":
            cloudpickle.register_pickle_by_value(module)
    if not ray.is_initialized():
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level="warning")


def random_rows(model_input: ModelInput, count: int) -> np.ndarray:
    """`count` rows of standard normal values, the same in every run."""
    shape = (count, *model_input.row_shape)
    return np.random.default_rng(0).standard_normal(shape, dtype=np.float32)


def configure_ray_data() -> None:
    """Rows come back in the dataset's order (so that two engines' outputs
    compare row for row); no progress bars or per-dataset log lines."""
    import logging

    import ray

    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
