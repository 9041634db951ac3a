"""Running one workload on every engine and thread count.

Each engine's first call is checked against numpy (a mismatch or an error
is recorded, not raised), then, after one more warm-up call, the engine is
called until its time box is spent (at least `min_runs` times); median and
minimum are kept. graphcompiler is compiled once (the cold compile time is
reported) and re-threaded with `set_num_threads`; onnxruntime gets one
session per thread count; numpy's BLAS is limited with threadpoolctl.
"""

from __future__ import annotations

import contextlib
import gc
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bench import mlir_text, numpy_ops, onnx_models
from bench.graph import Graph
from bench.workloads import Workload

ENGINES = ("ours", "numpy", "onnxruntime")


@dataclass(frozen=True)
class Settings:
    seconds: float
    """Time box of one engine at one thread count."""
    min_runs: int = 3
    weights_as_inputs: bool = False
    """Weights as call inputs rather than compile-time constants/initializers."""


ENGINE_PAUSE_S = 0.3
"""Idle time before an engine's runs. onnxruntime's threads spin after a
run (its default); the next engine's first runs then share the cores with
them: ResNet-18 on 2 threads ran a median 49 ms right after onnxruntime's
calls against 24 ms alone, and 19 against 19 with its spinning off."""


def measure(call: Callable[[], object], seconds: float, min_runs: int) -> dict:
    time.sleep(ENGINE_PAUSE_S)  # the previous engine's threads go idle
    call()  # warm-up (the checked call was the first)
    times: list[float] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        deadline = time.perf_counter() + seconds
        while len(times) < min_runs or time.perf_counter() < deadline:
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {
        "median_ms": float(np.median(times)) * 1e3,
        "min_ms": min(times) * 1e3,
        "runs": len(times),
    }


def check(got: object, want: np.ndarray, tolerance: float) -> dict:
    """max |got - want| / max(1, max |want|) against the tolerance; NaN or a
    wrong shape is a mismatch."""
    got = np.asarray(got)
    if got.shape != want.shape:
        return {
            "status": "mismatch",
            "error": None,
            "message": f"shape {got.shape}, expected {want.shape}",
        }
    scale = max(1.0, float(np.max(np.abs(want))))
    with np.errstate(invalid="ignore"):
        error = float(np.max(np.abs(got.astype(np.float64) - want))) / scale
    ok = error <= tolerance  # False for NaN
    return {
        "status": "ok" if ok else "mismatch",
        "error": error,
        "message": "" if ok else f"error {error:.2e} > tolerance {tolerance:.0e}",
    }


def _failure(error: BaseException) -> dict:
    last = traceback.extract_tb(error.__traceback__)[-1:] or [None]
    where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last[0] else ""
    text = str(error).strip().splitlines()
    return {
        "status": "failed",
        "error": None,
        "message": f"{type(error).__name__}: {text[0] if text else ''}{where}",
    }


def _run_engine(
    call: Callable[[], object], want: np.ndarray, tolerance: float, settings: Settings
) -> dict:
    try:
        result = check(call(), want, tolerance)
        result.update(measure(call, settings.seconds, settings.min_runs))
    except Exception as error:  # an engine's failure is a table entry, not a crash
        return _failure(error)
    return result


def _blas_limit(threads: int):
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


def _compile_ours(
    graph: Graph, arrays: list[np.ndarray], settings: Settings
) -> tuple[object | None, list[np.ndarray], dict]:
    """(compiled, its inputs, {'compile_s'}) or (None, [], a failure).
    Weights are bound as compile-time constants (`compile(constants=...)`),
    as onnxruntime gets them as initializers, unless settings say otherwise."""
    import graphcompiler

    constants = {
        spec.value.name: array
        for spec, array in zip(graph.inputs, arrays, strict=True)
        if spec.weight and not settings.weights_as_inputs
    }
    inputs = [
        array
        for spec, array in zip(graph.inputs, arrays, strict=True)
        if spec.value.name not in constants
    ]
    start = time.perf_counter()
    try:
        compiled = graphcompiler.compile(mlir_text.to_mlir(graph), constants=constants or None)
    except Exception as error:
        return None, [], _failure(error)
    return compiled, inputs, {"compile_s": time.perf_counter() - start}


def _ort_sessions(graph: Graph, arrays: list[np.ndarray], settings: Settings):
    """(model, feeds) or a failure dict when onnxruntime is missing or refuses."""
    missing = onnx_models.available()
    if missing:
        return None, {"status": "unavailable", "error": None, "message": missing}
    try:
        model, names = onnx_models.build_model(graph, arrays, settings.weights_as_inputs)
    except Exception as error:
        return None, _failure(error)
    by_name = {spec.value.name: array for spec, array in zip(graph.inputs, arrays, strict=True)}
    return (model, {name: by_name[name] for name in names}), {}


def run_workload(
    workload: Workload, threads: list[int], settings: Settings, progress: Callable[[str], None]
) -> list[dict]:
    """One row per thread count: {'engines': {engine: result}, ...}."""
    graph = workload.build()
    arrays = graph.random_inputs()
    want = numpy_ops.evaluate(graph, arrays).astype(np.float64)
    progress(f"{workload.name}: compiling")
    compiled, inputs, compile_info = _compile_ours(graph, arrays, settings)
    if compiled is not None:
        progress(f"{workload.name}: compiled in {compile_info['compile_s']:.2f} s")
    ort, ort_failure = _ort_sessions(graph, arrays, settings)
    rows = []
    for count in threads:
        engines: dict[str, dict] = {}
        if compiled is None:
            engines["ours"] = dict(compile_info)
        else:
            compiled.set_num_threads(count)
            engines["ours"] = _run_engine(
                lambda: compiled(*inputs), want, workload.tolerance, settings
            )
        progress(f"{workload.name} x{count}: ours {_short(engines['ours'])}")
        with _blas_limit(count):
            engines["numpy"] = _run_engine(
                lambda: numpy_ops.evaluate(graph, arrays), want, workload.tolerance, settings
            )
        progress(f"{workload.name} x{count}: numpy {_short(engines['numpy'])}")
        engines["onnxruntime"] = (
            dict(ort_failure)
            if ort is None
            else _run_ort(ort, count, want, workload.tolerance, settings)
        )
        progress(f"{workload.name} x{count}: onnxruntime {_short(engines['onnxruntime'])}")
        rows.append(
            {
                "workload": workload.name,
                "title": workload.title,
                "bound": workload.bound,
                "threads": count,
                "flops": graph.flops(),
                "bytes": graph.io_bytes(),
                "compile_s": compile_info.get("compile_s"),
                "engines": engines,
            }
        )
    return rows


def _run_ort(ort, threads: int, want: np.ndarray, tolerance: float, settings: Settings) -> dict:
    model, feeds = ort
    start = time.perf_counter()
    try:
        session = onnx_models.session(model, threads)
    except Exception as error:
        return _failure(error)
    session_s = time.perf_counter() - start
    result = _run_engine(lambda: session.run(None, feeds)[0], want, tolerance, settings)
    result["session_s"] = session_s
    return result


def _short(result: dict) -> str:
    if "median_ms" in result:
        text = f"{result['median_ms']:.3f} ms (median of {result['runs']})"
        return text if result["status"] == "ok" else f"{text}, {result['message']}"
    return f"{result.get('status', 'failed')}: {result.get('message', '')}"
