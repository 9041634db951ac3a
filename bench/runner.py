"""Running one workload on every engine and thread count.

Each engine's first call is checked against numpy (a mismatch or an error
is recorded, not raised), then, after one more warm-up call, the engines
are timed side by side: each is called until its time box is spent (at
least `min_runs` times), in blocks the engines take in turns
(BLOCK_SECONDS); median, minimum and each block's median are kept.
graphcompiler is compiled once (the cold compile time is reported) and
re-threaded with `set_num_threads`; onnxruntime gets one session per
thread count; numpy's BLAS is limited with threadpoolctl.
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
"""Idle time before an engine's block of runs on more than one thread.
onnxruntime's threads spin after a run (its default), and so do
OpenBLAS's; the next engine's first runs then share the cores with them:
ResNet-18 on 2 threads ran a median 49 ms right after onnxruntime's calls
against 24 ms alone, and 19 against 19 with its spinning off. A single
thread has no helper threads to spin."""

MIN_ROUNDS = 5
BLOCK_SECONDS = 0.25
"""Turns the engines take: each engine's time box is cut into blocks of
about BLOCK_SECONDS (MIN_ROUNDS at least), and the engines alternate block
by block (who goes first rotates), so that a burst of load on a shared
host falls on every engine instead of on whichever ran then. With one
block each, one burst moved Llama's 1-thread ratio from 0.87x (minima) to
1.08x (medians); with 0.8 s blocks this 2-core VM's speed still changed
by 40% between one block and the next. A ratio of two engines is the
median over the rounds of their blocks' medians (`paired_ratio`): each
round's two blocks run within half a second of each other."""


def rounds_for(seconds: float) -> int:
    return max(MIN_ROUNDS, round(seconds / BLOCK_SECONDS))


def pause_before_blocks(threads: int) -> float:
    return ENGINE_PAUSE_S if threads > 1 else 0.0


def measure_side_by_side(
    calls: dict[str, Callable[[], object]],
    seconds: float,
    min_runs: int,
    pause: float = ENGINE_PAUSE_S,
    rounds: int | None = None,
) -> dict[str, dict]:
    """Each engine's `seconds` of runs (at least `min_runs`) in `rounds`
    blocks (rounds_for(seconds) by default) taken in turns (see
    BLOCK_SECONDS); per engine: median and minimum of
    all its runs, their count, and each block's median (`round_ms`)."""
    rounds = rounds or rounds_for(seconds)
    names = list(calls)
    times: dict[str, list[float]] = {name: [] for name in names}
    blocks: dict[str, list[float]] = {name: [] for name in names}
    runs_per_block = max(1, -(-min_runs // rounds))
    for call in calls.values():
        call()  # warm-up (the checked call was the first)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for turn in range(rounds):
            first = turn % max(1, len(names))
            for name in names[first:] + names[:first]:
                time.sleep(pause)  # the previous engine's threads go idle
                call, block = calls[name], []
                deadline = time.perf_counter() + seconds / rounds
                while len(block) < runs_per_block or time.perf_counter() < deadline:
                    start = time.perf_counter()
                    call()
                    block.append(time.perf_counter() - start)
                times[name] += block
                blocks[name].append(float(np.median(block)) * 1e3)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {
        name: {
            "median_ms": float(np.median(times[name])) * 1e3,
            "min_ms": min(times[name]) * 1e3,
            "runs": len(times[name]),
            "round_ms": blocks[name],
        }
        for name in names
    }


def paired_ratio(ours: dict, other: dict) -> float | None:
    """ours / other: the median over the rounds of their blocks' medians
    (see BLOCK_SECONDS); the ratio of the medians where the blocks do not pair
    up."""
    mine, theirs = ours.get("round_ms"), other.get("round_ms")
    if mine and theirs and len(mine) == len(theirs):
        return float(np.median([a / b for a, b in zip(mine, theirs, strict=True)]))
    if ours.get("median_ms") and other.get("median_ms"):
        return ours["median_ms"] / other["median_ms"]
    return None


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


def _checked(call: Callable[[], object], want: np.ndarray, tolerance: float) -> dict:
    """The engine's first call against numpy (an error is a result, not raised)."""
    try:
        return check(call(), want, tolerance)
    except Exception as error:  # an engine's failure is a table entry, not a crash
        return _failure(error)


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
    """One row per thread count: {'engines': {engine: result}, ...}; the
    engines that ran are timed side by side (measure_side_by_side)."""
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
        calls: dict[str, Callable[[], object]] = {}
        if compiled is None:
            engines["ours"] = dict(compile_info)
        else:
            compiled.set_num_threads(count)
            calls["ours"] = lambda: compiled(*inputs)
        calls["numpy"] = lambda: numpy_ops.evaluate(graph, arrays)
        if ort is None:
            engines["onnxruntime"] = dict(ort_failure)
        else:
            session_s, session = _ort_session(ort[0], count)
            if session_s is None:
                engines["onnxruntime"] = session
            else:
                feeds = ort[1]
                calls["onnxruntime"] = lambda s=session, f=feeds: s.run(None, f)[0]
                engines["onnxruntime"] = {"session_s": session_s}
        with _blas_limit(count):
            for name, call in list(calls.items()):
                engines[name] = {
                    **_checked(call, want, workload.tolerance),
                    **engines.get(name, {}),
                }
                if engines[name]["status"] == "failed":
                    del calls[name]
            progress(f"{workload.name} x{count}: timing {', '.join(calls)} side by side")
            pause = pause_before_blocks(count)
            try:
                timed = measure_side_by_side(calls, settings.seconds, settings.min_runs, pause)
            except Exception as error:  # a failure is a table entry, not a crash
                timed = {name: _failure(error) for name in calls}
        for name, timing in timed.items():
            engines[name].update(timing)
        for name in ENGINES:
            progress(f"{workload.name} x{count}: {name} {_short(engines[name])}")
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


def _ort_session(model, threads: int) -> tuple[float | None, object]:
    """(seconds to create it, the session), or (None, a failure)."""
    start = time.perf_counter()
    try:
        session = onnx_models.session(model, threads)
    except Exception as error:
        return None, _failure(error)
    return time.perf_counter() - start, session


def _short(result: dict) -> str:
    if "median_ms" in result:
        text = f"{result['median_ms']:.3f} ms (median of {result['runs']})"
        return text if result["status"] == "ok" else f"{text}, {result['message']}"
    return f"{result.get('status', 'failed')}: {result.get('message', '')}"
