"""convert-tir-to-llvm and the LLVM IR translation in forked workers
(driver/parallel_lowering.py): the same LLVM IR, function by function, as
in one process; the same results, bit for bit; a failing worker falls back
to the conversion in this process."""

import re

import numpy as np
import pytest

import graphcompiler
from graphcompiler.driver import parallel_lowering
from graphcompiler.driver.loading import bind_constants, parse
from graphcompiler.driver.parallel_lowering import lower_in_parallel
from graphcompiler.driver.registration import (
    COMPILE_TIR_STAGE,
    GRAPH_STAGE,
    LLVM_TIR_PASSES,
    apply_pipeline,
    default_registry,
)
from graphcompiler.lowering.llvm.translate import translate_program

GRAPH = """
func.func @main(%x: tensor<512x96xf32>, %w: tensor<96x128xf32>, %v: tensor<96x128xf32>,
                %b: tensor<128xf32>) -> (tensor<512x128xf32>, tensor<512x128xf32>) {
  %0 = graph.matmul %x, %w : (tensor<512x96xf32>, tensor<96x128xf32>) -> tensor<512x128xf32>
  %1 = graph.add %0, %b : (tensor<512x128xf32>, tensor<128xf32>) -> tensor<512x128xf32>
  %2 = graph.softmax %1 {axis = 1 : i64} : tensor<512x128xf32>
  %3 = graph.matmul %x, %v : (tensor<512x96xf32>, tensor<96x128xf32>) -> tensor<512x128xf32>
  %4 = graph.tanh %3 : tensor<512x128xf32>
  %5 = graph.exp %2 : tensor<512x128xf32>
  %6 = graph.reduce_sum %4 {axes = array<i64: 1>, keep_dims = true} : tensor<512x128xf32> -> tensor<512x1xf32>
  %7 = graph.mul %5, %6 : (tensor<512x128xf32>, tensor<512x1xf32>) -> tensor<512x128xf32>
  %8 = graph.sub %7, %4 : (tensor<512x128xf32>, tensor<512x128xf32>) -> tensor<512x128xf32>
  %9 = graph.sigmoid %8 : tensor<512x128xf32>
  func.return %9, %4 : tensor<512x128xf32>, tensor<512x128xf32>
}
"""


@pytest.fixture
def weights():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((96, 128), np.float32)
    return {"w": w, "v": w.copy(), "b": rng.standard_normal(128, np.float32)}  # v: equal bytes


def _tir_module(weights):
    registry = default_registry()
    module = parse(GRAPH, registry=registry)
    bind_constants(next(iter(module.ops)), weights)
    for stage in (GRAPH_STAGE, COMPILE_TIR_STAGE, LLVM_TIR_PASSES):
        apply_pipeline(module, f"builtin.module({stage})", registry=registry, verify_each=False)
    return module


def _definitions(text):
    """Each function's definition and each global, by name."""
    pieces = re.findall(
        r'^(define [^\n]*?@"?([\w.]+)"?\(.*?^}$|@"?([\w.]+)"? = [^\n]*)', text, re.M | re.S
    )
    return {name or global_: piece for piece, name, global_ in pieces}


def test_workers_translate_each_function_as_one_process_does(weights):
    serial_module = _tir_module(weights)
    apply_pipeline(serial_module, "builtin.module(convert-tir-to-llvm)", verify_each=False)
    serial_data = {}
    serial = translate_program(serial_module, serial_data)

    parallel_data = {}
    parallel = lower_in_parallel(_tir_module(weights), parallel_data, workers=3, min_functions=1)
    assert parallel is not None
    assert _definitions(parallel.text) == _definitions(serial.text)
    assert len([d for d in _definitions(parallel.text) if d.startswith("for_body")]) >= 2
    assert parallel_data == serial_data
    assert len(parallel_data) == 2  # w and v share one buffer; b is the other
    assert {k.name for k in parallel.microkernels} == {k.name for k in serial.microkernels}


def test_a_failing_worker_falls_back_to_this_process(weights, monkeypatch):
    def fail(*args):
        raise RuntimeError("a worker's failure")

    monkeypatch.setattr(parallel_lowering, "_convert_share", fail)
    data = {}
    module = _tir_module(weights)
    assert lower_in_parallel(module, data, workers=2, min_functions=1) is None
    assert data == {}
    apply_pipeline(module, "builtin.module(convert-tir-to-llvm)", verify_each=False)  # intact


def test_small_modules_and_one_worker_stay_in_this_process(weights):
    module = _tir_module(weights)
    assert lower_in_parallel(module, {}, workers=1, min_functions=1) is None
    assert lower_in_parallel(module, {}, workers=4, min_functions=10_000) is None


def test_compile_gives_the_same_bits_with_workers(weights, monkeypatch):
    monkeypatch.setattr(parallel_lowering, "MIN_FUNCTIONS", 1)
    monkeypatch.setattr(parallel_lowering, "MIN_PRINTED_OPS", 1)
    forked = []
    run_forked = parallel_lowering._run_forked
    monkeypatch.setattr(
        parallel_lowering, "_run_forked", lambda tasks: forked.append(1) or run_forked(tasks)
    )
    x = np.random.default_rng(1).standard_normal((512, 96), np.float32)
    results, texts = [], []
    for workers in ("1", "2"):
        monkeypatch.setenv("GC_LOWERING_WORKERS", workers)
        compiled = graphcompiler.compile(GRAPH, constants=weights, cache=False)
        results.append(compiled(x))
        texts.append((compiled.tir, compiled.llvm_ir, compiled.graph, compiled.graph_dot()))
        assert bool(forked) == (workers == "2")
    for one, two in zip(*results, strict=True):
        np.testing.assert_array_equal(one, two)
    assert texts[0][0] == texts[1][0]  # the Tensor IR, printed in a child
    assert texts[0][2:] == texts[1][2:]  # the graph and its dot graph, also
    assert "graph.fused" in texts[1][2] and "digraph" in texts[1][3]
    assert _definitions(texts[0][1]) == _definitions(texts[1][1])
    top, tanh = results[1]
    m = x @ weights["w"] + weights["b"]
    softmax = np.exp(m - m.max(1, keepdims=True))
    softmax /= softmax.sum(1, keepdims=True)
    t = np.tanh(x @ weights["v"])
    expected = np.exp(-np.logaddexp(0, -(np.exp(softmax) * t.sum(1, keepdims=True) - t)))
    np.testing.assert_allclose(tanh, t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(top, expected, rtol=1e-4, atol=1e-5)


def test_a_failed_printer_gives_the_tensor_ir_after_its_passes(weights, monkeypatch):
    monkeypatch.setattr(parallel_lowering, "MIN_FUNCTIONS", 1)
    monkeypatch.setenv("GC_LOWERING_WORKERS", "2")
    monkeypatch.setattr(parallel_lowering.Forked, "result", lambda self: None)
    monkeypatch.setattr(parallel_lowering, "_run_forked", lambda tasks: None)
    monkeypatch.setattr(parallel_lowering, "MIN_PRINTED_OPS", 1)
    compiled = graphcompiler.compile(GRAPH, constants=weights, cache=False)
    assert "tir.func @main" in compiled.tir and "@for_body" in compiled.tir  # outlined
    assert compiled.graph.startswith("// not printed")  # printed in a child, which failed
    x = np.random.default_rng(1).standard_normal((512, 96), np.float32)
    np.testing.assert_allclose(compiled(x)[1], np.tanh(x @ weights["v"]), rtol=1e-5, atol=1e-5)


def test_a_value_beside_is_the_one_computed_at_once():
    """Beside: forked, the child's value (the state it forked with, not
    later changes); not forked, computed at construction; a child whose
    value was not wanted is stopped on exit."""
    state = {"text": "before"}
    with parallel_lowering.Beside(lambda: state["text"], fork=True) as forked:
        with parallel_lowering.Beside(lambda: state["text"], fork=False) as at_once:
            state["text"] = "after"
            assert forked.value(lambda: "failed") == "before" == at_once.value(lambda: "failed")
    with parallel_lowering.Beside(lambda: state["text"], fork=True) as unwanted:
        child = unwanted._child
    assert child is None or child.pid is None  # killed and reaped
