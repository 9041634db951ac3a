"""Measuring kernel choices on this machine (runtime/tuning.py keeps them).

`tune(model)` lowers the model once to find its convolutions as lowering
sees them, then compiles each on its own (its weights constant, as in the
model) once per candidate path and times it; the fastest goes into this
machine's table, which later compiles for the host target follow.
Convolutions already in the table are not measured again.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from graphcompiler.driver.loading import load_module
from graphcompiler.driver.registration import GRAPH_STAGE, apply_pipeline
from graphcompiler.lowering.graph_to_tir.conv_gemm import ConvCase, seen_convs
from graphcompiler.runtime.tuning import TuningTable, forced_conv_path, table_path


def tune(
    source,
    *,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    num_threads: int = 1,
    seconds: float = 0.3,
    log: Callable[[str], None] | None = None,
) -> list[dict]:
    """Measure the candidate kernels of `source`'s convolutions (.mlir
    text or path, .onnx path or ModelProto; `input_shapes` fixes symbolic
    dims) on `num_threads` threads, each for about `seconds`, and record
    the fastest. One thread by default: the kernels' own speed, which the
    thread pool's noise hid (ResNet-50 on the 2-core AVX-512 host: tuned on
    2 threads, 1-4% faster than untuned; on 1, 10-12% at 1 and 2 threads). One row per convolution: its signature, the milliseconds
    of each candidate ({} when it was known or had one candidate), the
    choice, and whether it was measured now."""
    path = table_path()
    if path is None:
        raise ValueError(
            "tuning keeps its results in the cache directory, which is off (GC_DISABLE_CACHE)"
        )
    table, rows = TuningTable(path), []
    for case in lowered_convolutions(source, input_shapes):
        known = table.choice("conv2d", case.signature)
        if known is not None or len(case.candidates) == 1:
            choice = known or case.candidates[0]
            rows.append(
                {"signature": case.signature, "ms": {}, "choice": choice, "measured": False}
            )
            continue
        milliseconds = {}
        for candidate in case.candidates:
            try:
                milliseconds[candidate] = time_convolution(case, candidate, num_threads, seconds)
            except Exception as error:  # a candidate that fails is reported, never chosen
                if log:
                    log(f"{case.signature}: {candidate} failed: {error}")
        if not milliseconds:
            continue
        choice = table.record("conv2d", case.signature, milliseconds)
        table.save()
        rows.append({"signature": case.signature, "ms": milliseconds, "choice": choice,
                     "measured": True})  # fmt: skip
        if log:
            timings = ", ".join(f"{name} {ms:.3f} ms" for name, ms in milliseconds.items())
            log(f"{case.signature}: {timings} -> {choice}")
    return rows


def lowered_convolutions(
    source, input_shapes: Mapping[str, Sequence[int]] | None = None
) -> list[ConvCase]:
    """The distinct convolutions lowering meets in `source`, in order."""
    module = load_module(source, input_shapes=input_shapes)
    token = seen_convs.set([])
    try:
        pipeline = f"builtin.module({GRAPH_STAGE},convert-graph-to-tir)"
        apply_pipeline(module, pipeline, verify_each=False)
        cases = seen_convs.get() or []
    finally:
        seen_convs.reset(token)
    return list(dict.fromkeys(cases))


def convolution_text(case: ConvCase) -> str:
    """`@main(%x, %w)` computing the one convolution of `case`."""
    (n, _, h, w), (o, _, kh, kw) = case.input_shape, case.weight_shape
    (sh, sw), (dh, dw) = case.strides, case.dilations
    top, left, bottom, right = case.padding
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (w + left + right - dw * (kw - 1) - 1) // sw + 1

    def tensor(shape: Sequence[int]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    def array(values: Sequence[int]) -> str:
        return f"array<i64: {', '.join(map(str, values))}>"

    x, weights, y = tensor(case.input_shape), tensor(case.weight_shape), tensor([n, o, oh, ow])
    window = (f"strides = {array(case.strides)}, padding = {array(case.padding)}, "
              f"dilations = {array(case.dilations)}, groups = {case.groups} : i64")  # fmt: skip
    return (
        f"func.func @main(%x: {x}, %w: {weights}) -> {y} {{\n"
        f"  %y = graph.conv2d %x, %w {{{window}}} : ({x}, {weights}) -> {y}\n"
        f"  func.return %y : {y}\n}}\n"
    )


def time_convolution(case: ConvCase, path: str, num_threads: int, seconds: float) -> float:
    """Median milliseconds of `case` computed by `path` (weights constant)."""
    from graphcompiler.driver.compiler import compile as compile_graph

    rng = np.random.default_rng(0)
    weights = rng.standard_normal(case.weight_shape, dtype=np.float32)
    weights *= np.float32(1 / math.sqrt(math.prod(case.weight_shape[1:])))
    x = rng.standard_normal(case.input_shape, dtype=np.float32)
    token = forced_conv_path.set(path)
    try:
        graph = compile_graph(convolution_text(case), constants={"w": weights}, cache=False,
                              num_threads=num_threads)  # fmt: skip
    finally:
        forced_conv_path.reset(token)
    graph(x)
    times, deadline = [], time.perf_counter() + seconds
    while len(times) < 5 or time.perf_counter() < deadline:
        start = time.perf_counter()
        graph(x)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3
