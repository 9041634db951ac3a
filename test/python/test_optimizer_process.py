"""LLVM's optimizer runs in a helper process (runtime/optimizer.py), whose
leak (llvmlite's pass builders) is freed when the helper is replaced: the
helper's code is the same as the in-process one, a helper that does not
start falls back to optimizing here, one that crashes on a module is an
error, and helpers are recycled and never shared with a forked child."""

import os
import re
import signal
import sys
import time

import llvmlite.binding as llvm
import numpy as np
import pytest

import graphcompiler
from graphcompiler.runtime.jit import engine as jit
from graphcompiler.runtime.jit import optimizer

GRAPH = """
func.func @main(%x: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> tensor<64x128xf32> {
  %0 = graph.matmul %x, %w : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  %1 = graph.tanh %0 : tensor<64x128xf32>
  func.return %1 : tensor<64x128xf32>
}
"""


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256), np.float32)
    return x, rng.standard_normal((256, 128), np.float32) / 16


def _expected(x, w):
    return np.tanh(x.astype(np.float64) @ w).astype(np.float32)


def _live_helpers():
    return [h for h in optimizer._helpers.idle if h.process.poll() is None]


def _definitions(module) -> list[str]:
    """The module's function bodies, without comments (use-list orders,
    which bitcode does not keep) and attribute group numbers."""
    text = re.sub(r";.*|#\d+", "", str(module))
    return sorted(re.findall(r"^define .*?^}", text, re.S | re.M))


def test_the_helper_optimizes_as_this_process_does():
    compiled = graphcompiler.compile(GRAPH)
    assert _live_helpers(), "the compile left its helper idle for the next one"
    x, w = _inputs()
    np.testing.assert_allclose(compiled(x, w), _expected(x, w), rtol=1e-5, atol=1e-5)
    machine = jit._target_machine()
    here = jit.parse_llvm_ir(compiled.llvm_ir)
    optimizer.optimize_here(here, machine)
    jobs = [optimizer.Job(jit.parse_llvm_ir(compiled.llvm_ir))]
    jobs.append(optimizer.Job(jit.parse_llvm_ir(compiled.llvm_ir), to_object=True))
    cpu, features = llvm.get_host_cpu_name(), jit.machine_features()
    by_helper, object_code = optimizer.build(jobs, machine, cpu, features, context=None)
    assert _definitions(by_helper) == _definitions(here)
    assert object_code[:4] in (b"\x7fELF", b"\xcf\xfa\xed\xfe")  # ELF, Mach-O


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-c", "pass"],  # exits at once
        ["echo", "not a helper"],  # says something else
        [sys.executable, "-c", "import sys; sys.stdin.read()"],  # says nothing
    ],
)
def test_a_helper_that_does_not_start_falls_back_to_optimizing_here(monkeypatch, command):
    monkeypatch.setattr(optimizer, "HELPER_COMMAND", command)
    monkeypatch.setattr(optimizer, "HANDSHAKE_SECONDS", 1.0)
    monkeypatch.setattr(optimizer, "_helpers", optimizer._Helpers())
    x, w = _inputs()
    np.testing.assert_allclose(
        graphcompiler.compile(GRAPH)(x, w), _expected(x, w), rtol=1e-5, atol=1e-5
    )
    assert optimizer._helpers.broken, "no new helper is tried after a failure"
    assert not optimizer._helpers.idle


def test_helpers_started_one_at_a_time_are_ready(monkeypatch):
    """What a compile does on a background thread while it lowers the graph."""
    monkeypatch.setattr(optimizer, "_helpers", optimizer._Helpers())
    optimizer.prestart(3, one_at_a_time=True)
    idle = list(optimizer._helpers.idle)
    optimizer._helpers.stop_all()
    assert len(idle) == 3 and all(helper.ready for helper in idle)


def test_no_more_helpers_are_started_after_one_did_not(monkeypatch):
    monkeypatch.setattr(optimizer, "HELPER_COMMAND", [sys.executable, "-c", "pass"])
    monkeypatch.setattr(optimizer, "_helpers", optimizer._Helpers())
    started = []
    monkeypatch.setattr(
        optimizer._Helpers, "_start", lambda self: started.append(1) or optimizer._Helper()
    )
    optimizer.prestart(3, one_at_a_time=True)
    assert optimizer._helpers.broken and not optimizer._helpers.idle and len(started) == 1


def test_a_helper_crashing_on_a_module_is_an_error_not_a_dead_process(monkeypatch):
    """An LLVM abort while optimizing ends the helper, not the caller."""
    crash = (
        f"import os, sys; sys.stdout.buffer.write({optimizer.HANDSHAKE!r}); "
        "sys.stdout.flush(); sys.stdin.buffer.read(8); os.abort()"
    )
    monkeypatch.setattr(optimizer, "HELPER_COMMAND", [sys.executable, "-c", crash])
    monkeypatch.setattr(optimizer, "_helpers", optimizer._Helpers())
    with pytest.raises(optimizer.OptimizerCrash, match="crashed on this program .signal 6."):
        graphcompiler.compile(GRAPH)
    assert not optimizer._helpers.broken
    assert all(h.requests == 0 and h.usable for h in optimizer._helpers.idle), (
        "a crashed helper is kept"
    )


def test_helpers_are_replaced_after_their_quota(monkeypatch):
    monkeypatch.setattr(optimizer, "REQUESTS_PER_HELPER", 1)
    optimizer._helpers.stop_all()
    graphcompiler.compile(GRAPH)
    used = [h for h in optimizer._helpers.idle if h.requests]  # a prestarted one may be unused
    assert not used, "a helper past its quota is stopped, not kept"
    graphcompiler.compile(GRAPH.replace("tanh", "sigmoid"))
    assert not [h for h in optimizer._helpers.idle if h.requests]


def test_a_forked_child_does_not_use_its_parents_helpers(monkeypatch):
    optimizer.prestart()
    parents = list(optimizer._helpers.idle)
    assert parents
    monkeypatch.setattr(optimizer._helpers, "pid", -1)  # as if this were the child
    taken = optimizer._helpers.take()
    assert taken is not None and taken not in parents
    taken.stop()


@pytest.mark.parametrize("value", ["1", "yes"])
def test_optimizing_in_process_on_request(monkeypatch, value):
    if jit._preparing is not None:
        jit._preparing.join()  # an earlier compile's preparation: not this test's
    monkeypatch.setenv("GC_OPTIMIZE_IN_PROCESS", value)
    monkeypatch.setattr(optimizer._Helpers, "take", lambda self: pytest.fail("used a helper"))
    started = []  # (the compile's background thread would not report a pytest.fail)
    monkeypatch.setattr(optimizer._Helpers, "_start", lambda self: started.append(self))
    x, w = _inputs()
    np.testing.assert_allclose(
        graphcompiler.compile(GRAPH, cache=False)(x, w), _expected(x, w), rtol=1e-5, atol=1e-5
    )
    jit._preparing.join()
    assert not started, "a helper was started"


RECURRENCE = """
define void @f(ptr noalias %a) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %next, %loop ]
  %previous = getelementptr float, ptr %a, i64 %i
  %x = load float, ptr %previous
  %y = fmul float %x, 3.0
  %next = add i64 %i, 1
  %here = getelementptr float, ptr %a, i64 %next
  store float %y, ptr %here
  %done = icmp eq i64 %next, 49
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


def test_loops_of_known_trip_count_are_not_unrolled_into_hundreds_of_copies():
    """A 48-iteration loop LLVM cannot vectorize (each step reads the last)
    stays a loop, in a helper as in this process (LLVM alone unrolls it
    fully: 48 multiplies; LLVM_OPTIONS leave 16)."""
    machine = jit._target_machine()
    cpu, features = llvm.get_host_cpu_name(), jit.machine_features()
    jobs = [optimizer.Job(jit.parse_llvm_ir(RECURRENCE))]
    (by_helper,) = optimizer.build(jobs, machine, cpu, features, context=None)
    here = jit.parse_llvm_ir(RECURRENCE)
    optimizer.optimize_here(here, machine)
    for module in (by_helper, here):
        assert str(module).count("fmul") < 48


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_fork_while_a_compile_prepares_llvm_leaves_the_child_working():
    """The locks a compile's background preparation holds for a moment are
    new ones in a forked child, which would otherwise wait forever."""
    from graphcompiler.runtime import threadpool

    with optimizer._helpers.lock, jit._initializing, threadpool._pool_lock:
        pid = os.fork()
        if pid == 0:  # the child: must not block on the locks held above
            code = 1
            try:
                signal.alarm(30)
                jit.initialize_llvm()
                threadpool.thread_pool()
                helper = optimizer._helpers.take()
                code = 0 if helper is not None and helper.wait_ready() else 1
                helper.stop()
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_idle_helpers_exit_and_stale_ones_are_not_used(monkeypatch):
    """A helper with no request for HELPER_IDLE_SECONDS exits (its memory
    goes back); one idle for half of that is replaced rather than sent a
    request that could race its exit. Compiles go on with new helpers."""
    monkeypatch.setattr(optimizer, "HELPER_IDLE_SECONDS", 1.0)
    monkeypatch.setattr(optimizer, "_helpers", optimizer._Helpers())
    optimizer.prestart(1, one_at_a_time=True)
    (helper,) = optimizer._helpers.idle
    time.sleep(0.6)
    assert helper.process.poll() is None and not helper.usable
    deadline = time.monotonic() + 10
    while helper.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert helper.process.returncode == 0, "the idle helper exited by itself"
    optimizer.prestart(1)
    assert helper not in optimizer._helpers.idle and len(optimizer._helpers.idle) == 1
    x, w = _inputs()
    compiled = graphcompiler.compile(GRAPH, cache=False)
    np.testing.assert_allclose(compiled(x, w), _expected(x, w), rtol=1e-5, atol=1e-5)
    assert not optimizer._helpers.broken
    assert helper not in optimizer._helpers.idle
    optimizer._helpers.stop_all()
