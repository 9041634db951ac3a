"""An optimizer helper (runtime/optimizer.py) ends with the process that
started it, also while LLVM optimizes a module: a compile killed then left
its helper running for 16 CPU-minutes. Run as a script, this file is such a
compile (the parent the test kills)."""

import os
import signal
import subprocess
import sys
import threading
import time

import llvmlite.binding as llvm
import pytest

from graphcompiler.runtime.jit import engine as jit
from graphcompiler.runtime.jit import optimizer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _slow_ir(functions: int = 400, length: int = 200) -> str:
    """A module O3 takes about 10 s on (vectorizing each loop's long chain
    of multiplies), but only 0.8 MB of bitcode."""
    lines = []
    for f in range(functions):
        lines += [
            f"define void @f{f}(ptr noalias %a, ptr noalias %b, i64 %n) {{",
            "entry:",
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]",
            "  %p = getelementptr float, ptr %a, i64 %i",
            "  %v0 = load float, ptr %p",
        ]
        lines += [f"  %v{k} = fmul float %v{k - 1}, %v{k // 2}" for k in range(1, length)]
        lines += [
            "  %q = getelementptr float, ptr %b, i64 %i",
            f"  store float %v{length - 1}, ptr %q",
            "  %next = add i64 %i, 1",
            "  %done = icmp eq i64 %next, %n",
            "  br i1 %done, label %exit, label %loop",
            "exit:",
            "  ret void",
            "}",
        ]
    return "\n".join(lines)


def _compile_slowly() -> None:
    """The parent: two helpers optimize the slow module, one started on a
    thread that has ended (as a compile's preparation does), one on the main
    thread; each one's pid is printed once it has its request."""
    preparing = threading.Thread(target=optimizer.prestart, args=(1, True))
    preparing.start()
    preparing.join()
    send = optimizer._Helper.send

    def send_and_tell(helper, *request):
        sent = send(helper, *request)
        print(helper.process.pid, flush=True)
        return sent

    optimizer._Helper.send = send_and_tell
    machine = jit._target_machine()
    module = jit.parse_llvm_ir(_slow_ir())
    jobs = [optimizer.Job(llvm.parse_bitcode(module.as_bitcode())) for _ in range(2)]
    optimizer.build(jobs, machine, llvm.get_host_cpu_name(), jit.machine_features(), None)


def _running(pid: int) -> bool:
    """Whether `pid` runs: a zombie (ended, not yet reaped by its new
    parent) does not."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_helpers_end_when_their_parent_is_killed_while_they_optimize():
    parent = subprocess.Popen(
        [sys.executable, __file__], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    helpers = []
    try:
        for _ in range(2):
            line = parent.stdout.readline()
            assert line, parent.stderr.read()
            helpers.append(int(line))
        time.sleep(1.0)  # they read the module and are inside LLVM's passes
        assert all(_running(pid) for pid in helpers), "the helpers are still optimizing"
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while any(_running(pid) for pid in helpers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in helpers if _running(pid)], "a helper outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        for pid in helpers:
            if _running(pid):  # without the fix: they would go on for seconds
                os.kill(pid, signal.SIGKILL)


def test_a_helper_started_on_a_thread_that_ended_lives_on(monkeypatch):
    """The kernel's parent-death signal comes when the thread that started
    a helper ends, not its process: a compile's preparation prestarts
    helpers on such a thread, and they must stay usable."""
    monkeypatch.setattr(optimizer, "_helpers", optimizer._Helpers())
    preparing = threading.Thread(target=optimizer.prestart, args=(1, True))
    preparing.start()
    preparing.join()
    (helper,) = optimizer._helpers.idle
    time.sleep(0.3)  # the thread is gone for the kernel too
    jobs = [optimizer.Job(jit.parse_llvm_ir("define i32 @f() {\n  ret i32 1\n}"))]
    machine = jit._target_machine()
    optimizer.build(jobs, machine, llvm.get_host_cpu_name(), jit.machine_features(), None)
    assert optimizer._helpers.idle == [helper] and helper.requests == 1
    optimizer._helpers.stop_all()


def test_a_helper_whose_parent_ended_before_it_started_exits():
    """Its parent can end before the helper asks for the parent-death
    signal, which then never comes: the helper has another parent already."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    helper = subprocess.Popen(
        [*optimizer.HELPER_COMMAND, "60", str(gone.pid), "1"],
        stdin=subprocess.PIPE,  # kept open: the helper does not just see its input end
        stdout=subprocess.DEVNULL,
    )
    try:
        assert helper.wait(timeout=10) == 1
    finally:
        helper.kill()
        helper.stdin.close()
        helper.wait()


if __name__ == "__main__":
    _compile_slowly()
