"""LLVM's optimization pipeline (OPT_LEVEL) and code generation, run in helper processes.

Why processes: llvmlite (0.50) leaks every pass builder's instrumentation
callbacks (`LLVMPY_CreatePassBuilder` allocates a PassInstrumentationCallbacks
it never frees, and each run registers a StandardInstrumentations' callbacks
into it): about 170 KB per optimized module, for the life of the process. A
program compiling graph after graph would grow without bound. A helper
takes bitcode and sends back the optimized bitcode or object code; it is
replaced after `REQUESTS_PER_HELPER` modules, which frees what it leaked.
And the jobs of one compile (the program's parts, and its runtime) run at
once, each in a helper, on as many cores.

Helpers are started ahead of need (`prestart`: a compile starts them one
after the other on a background thread, jit.prepare_in_background, while
the graph is lowered) and kept idle between compiles, for up to a minute
(`HELPER_IDLE_SECONDS`). If a helper cannot be started or fails, its job is
done here instead: the same code, with the leak. `GC_OPTIMIZE_IN_PROCESS=1`
always does that (a profiler sees the passes then). A helper that dies
while building a module (an LLVM abort) is reported as OptimizerCrash
rather than retried here, where the same abort would end the caller's
process. A helper ends with the process that started it, also while LLVM
works on a module (`_exit_with_parent`).

Run as a script, this module is the helper: requests on stdin, replies on
stdout, until stdin closes.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import json
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import llvmlite.binding as llvm

REQUESTS_PER_HELPER = 128
"""Modules a helper optimizes before it is replaced (its leak: ~20 MB)."""

_LENGTH = struct.Struct("<Q")


OPT_LEVEL = 2
"""LLVM's optimization and code generation level for programs. The kernels
are vectorized and register-tiled by their templates, so O3's extra passes
found nothing: measured in one process, every kernel of ResNet-50, BERT-base
and EfficientNet-B0 ran as fast at O2 (per-kernel minima within noise),
and ResNet-50's LLVM time fell from 6.6-7.1 s to 5.4 s of CPU."""

LLVM_OPTIONS = ("-unroll-full-max-count=8",)
"""LLVM options for every module. Kernels are vectorized and register-tiled
by their templates; LLVM also fully unrolls loops of known trip count
(every loop of a small static shape) up to hundreds of copies. Capping that
at 8 copies made the transformer example's object 40% smaller and its
build 22% faster, with every bench workload and example as fast as before."""


@functools.cache
def _set_llvm_options() -> None:
    for option in LLVM_OPTIONS:
        llvm.set_option("", option)


def optimize_here(module: llvm.ModuleRef, machine: llvm.TargetMachine) -> None:
    """LLVM's default module pipeline at OPT_LEVEL for `machine`, in this process."""
    _set_llvm_options()
    options = llvm.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


@dataclass
class Job:
    """A module to optimize: given back as a module, or compiled to an
    object (`to_object`)."""

    module: llvm.ModuleRef
    to_object: bool = False


def build(
    jobs: list[Job], machine: llvm.TargetMachine, cpu: str, features: str, context
) -> list[llvm.ModuleRef | bytes]:
    """Each job's module optimized for `machine` (whose CPU name and features
    are `cpu` and `features`), and compiled to object code for a `to_object`
    job. The jobs run at once, each in a helper process; a job no helper can
    take is done here. A module given back is a new one in `context` (or the
    job's own, optimized here)."""
    replies: list[bytes | None] = [None] * len(jobs)
    if not _in_process():
        header = {"cpu": cpu, "features": features}
        requests = [(job.module.as_bitcode(), {**header, "object": job.to_object}) for job in jobs]
        replies = _helpers.run(requests)
    results: list[llvm.ModuleRef | bytes] = []
    for job, reply in zip(jobs, replies, strict=True):
        if reply is None:
            optimize_here(job.module, machine)
            results.append(machine.emit_object(job.module) if job.to_object else job.module)
        elif job.to_object:
            results.append(reply)
        else:
            module = llvm.parse_bitcode(reply, context)
            module.name = job.module.name  # bitcode keeps no module identifier
            job.module.close()
            results.append(module)
    return results


def prestart(count: int = 2, one_at_a_time: bool = False) -> None:
    """Start helpers now until `count` are idle, so they are ready when
    needed (a compile builds its program's parts and its runtime at once).
    `one_at_a_time`: each after the last said it is ready (on a background
    thread, so that starting helpers takes one core, not all of them)."""
    if not _in_process():
        _helpers.prestart(count, one_at_a_time)


def _in_process() -> bool:
    """GC_OPTIMIZE_IN_PROCESS is set (to anything but 0): no helpers."""
    return os.environ.get("GC_OPTIMIZE_IN_PROCESS", "").strip() not in ("", "0")


class OptimizerCrash(RuntimeError):
    """LLVM's optimizer died on a module (an LLVM abort, say): reported as
    an error instead of taking the caller's process down with it."""


HELPER_COMMAND = [sys.executable, __file__]
"""How a helper is started (a test starts a failing one instead)."""

HANDSHAKE = b"graphcompiler-optimizer 1\n"
"""What a helper writes once it is ready: a process that does not (not a
Python, no llvmlite) is not used."""

HANDSHAKE_SECONDS = 30.0

HELPER_IDLE_SECONDS = 60.0
"""A helper that gets no request for this long exits, giving its memory
back (~17 MB). A helper idle for more than half of it is not sent a
request but stopped, so a request never races the helper's exit."""


class _Helper:
    """One helper process and its pipes."""

    def __init__(self):
        # the kernel's parent-death signal comes when the *thread* that
        # started the helper ends (prestart's background thread does, long
        # before this process): only the main thread lasts as long as it
        signal_on_death = threading.current_thread() is threading.main_thread()
        arguments = [str(HELPER_IDLE_SECONDS), str(os.getpid()), str(int(signal_on_death))]
        self.process = subprocess.Popen(
            [*HELPER_COMMAND, *arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.requests = 0
        self.ready = False
        self.idle_since = time.monotonic()

    def wait_ready(self) -> bool:
        """Whether the helper said it is ready within HANDSHAKE_SECONDS."""
        if not self.ready:
            stdout = self.process.stdout
            readable, _, _ = select.select([stdout], [], [], HANDSHAKE_SECONDS)
            self.ready = bool(readable) and stdout.readline() == HANDSHAKE
        return self.ready

    def send(self, bitcode: bytes, header: dict) -> bool:
        """Send a request; False if the helper is not working (then it is
        stopped)."""
        if not self.wait_ready():
            self.stop()
            return False
        encoded = json.dumps(header).encode()
        try:
            stdin = self.process.stdin
            stdin.write(_LENGTH.pack(len(encoded)) + encoded + _LENGTH.pack(len(bitcode)))
            stdin.write(bitcode)
            stdin.flush()
        except OSError:
            self._fail()
            return False
        return True

    def receive(self) -> bytes | None:
        """The reply to the request sent, or None if the helper failed (then
        it is stopped). Raises OptimizerCrash if it died on the module."""
        try:
            ok = self.process.stdout.read(1)
            payload = _read_exactly(self.process.stdout, _read_length(self.process.stdout))
        except (OSError, ValueError, struct.error):
            self._fail()
            return None
        self.requests += 1
        if ok != b"\x01":
            self.stop()
            return None
        return payload

    def _fail(self) -> None:
        code = self.stop()
        if code is not None and code < 0:  # killed by a signal while optimizing
            raise OptimizerCrash(
                f"LLVM's optimizer crashed on this program (signal {-code}); "
                "GC_OPTIMIZE_IN_PROCESS=1 runs it in this process, e.g. under a debugger"
            )

    @property
    def usable(self) -> bool:
        fresh = time.monotonic() - self.idle_since < HELPER_IDLE_SECONDS / 2
        return fresh and self.process.poll() is None and self.requests < REQUESTS_PER_HELPER

    def stop(self) -> int | None:
        """Close its stdin (it exits at end of input), reap it, and return
        its exit status."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:  # an idle helper exits at once; a forked child may hold its stdin open
            return self.process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


class _Helpers:
    """Idle helpers, shared by the threads of this process."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: list[_Helper] = []
        self.broken = False  # a helper could not start or failed: do not retry
        self.pid = os.getpid()
        # a fork while another thread (a compile's preparation) held the lock
        # would leave it held forever in the child
        if hasattr(os, "register_at_fork"):  # POSIX
            os.register_at_fork(after_in_child=self._new_lock)

    def _new_lock(self) -> None:
        self.lock = threading.Lock()

    def _forget_after_fork(self) -> None:
        # a forked child shares the parent's pipes: it must not use them
        if os.getpid() != self.pid:
            self.idle, self.pid = [], os.getpid()

    def run(self, requests: list[tuple[bytes, dict]]) -> list[bytes | None]:
        """The replies to `requests`, each sent to its own idle or new helper
        so that they run at once; None for one no helper could take (then
        helpers are not tried again: a helper that cannot import llvmlite
        would fail every time)."""
        helpers = [self.take() for _ in requests]
        sent = [
            helper is not None and helper.send(*request)
            for helper, request in zip(helpers, requests, strict=True)
        ]
        replies: list[bytes | None] = []
        try:
            for helper, was_sent in zip(helpers, sent, strict=True):
                replies.append(helper.receive() if was_sent else None)
        except BaseException:
            for helper in helpers[len(replies) :]:  # their replies are not read
                if helper is not None:
                    helper.stop()
            raise
        finally:
            for helper in helpers[: len(replies)]:
                if helper is not None:
                    self.give_back(helper)
        if None in replies:
            self.broken = True
            self._stop_unproven()
        return replies

    def _stop_unproven(self) -> None:
        """Stop the idle helpers that never answered the handshake: started
        like the one that failed, they would fail the same way."""
        with self.lock:
            unproven = [helper for helper in self.idle if not helper.ready]
            self.idle = [helper for helper in self.idle if helper.ready]
        for helper in unproven:
            helper.stop()

    def take(self) -> _Helper | None:
        with self.lock:
            self._forget_after_fork()
            while self.idle:
                helper = self.idle.pop()
                if helper.usable:
                    return helper
                helper.stop()
            if self.broken:
                return None
        return self._start()

    def give_back(self, helper: _Helper) -> None:
        helper.idle_since = time.monotonic()
        if not helper.usable:
            helper.stop()
            return
        with self.lock:
            self._forget_after_fork()
            self.idle.append(helper)

    def prestart(self, count: int, one_at_a_time: bool) -> None:
        with self.lock:
            self._forget_after_fork()
            stale = [helper for helper in self.idle if not helper.usable]
            self.idle = [helper for helper in self.idle if helper.usable]
            missing = 0 if self.broken else count - len(self.idle)
        for helper in stale:  # replaced now rather than when a compile needs them
            helper.stop()
        for _ in range(missing):
            helper = self._start()
            if helper is None:
                return
            if one_at_a_time and not helper.wait_ready():
                helper.stop()
                self.broken = True
                return
            self.give_back(helper)

    def _start(self) -> _Helper | None:
        try:
            return _Helper()
        except (OSError, ValueError, TypeError):  # no executable to start
            self.broken = True
            return None

    def stop_all(self) -> None:
        with self.lock:
            self._forget_after_fork()
            idle, self.idle = self.idle, []
        for helper in idle:
            helper.stop()


_helpers = _Helpers()
atexit.register(_helpers.stop_all)


def _read_exactly(stream, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise ValueError("helper stream ended early")
    return data


def _read_length(stream) -> int:
    return _LENGTH.unpack(_read_exactly(stream, _LENGTH.size))[0]


PARENT_POLL_SECONDS = 0.5
"""How often a helper checks that the process that started it still runs."""

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _exit_with_parent(parent: int, signal_on_death: bool) -> None:
    """End this helper when `parent`, the process that started it, ends,
    also in the middle of a module (a killed compile's helper went on
    optimizing, for 16 CPU-minutes). On Linux, with `signal_on_death` (its
    starting thread lasts as long as `parent`), the kernel kills it at once.
    Everywhere, a watchdog thread exits once `parent` is no longer its
    parent, which also catches a parent gone before prctl; it runs while
    LLVM works (llvmlite's calls release the GIL)."""
    if signal_on_death and sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _serve() -> None:
    """The helper's loop: a request is a JSON header (target CPU and
    features; `object`: reply with object code, not bitcode) and bitcode;
    the reply is a status byte (1: the optimized bitcode or the object
    code follows; 0: an error message follows) and a payload. Its
    arguments: HELPER_IDLE_SECONDS, and `_exit_with_parent`'s."""
    idle_seconds, parent = float(sys.argv[1]), int(sys.argv[2])
    _exit_with_parent(parent, sys.argv[3] == "1")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    replies.write(HANDSHAKE)
    replies.flush()
    while True:
        # nothing is buffered between requests: the parent sends the next
        # one only after reading this one's reply
        if not select.select([requests], [], [], idle_seconds)[0]:
            return  # idle too long: exit, giving the memory back
        raw_length = requests.read(_LENGTH.size)
        if len(raw_length) < _LENGTH.size:
            return  # the parent closed the pipe: done
        header = json.loads(_read_exactly(requests, _LENGTH.unpack(raw_length)[0]))
        bitcode = _read_exactly(requests, _read_length(requests))
        try:
            machine = llvm.Target.from_default_triple().create_target_machine(
                cpu=header["cpu"], features=header["features"], opt=OPT_LEVEL,
                codemodel="jitdefault",
            )
            module = llvm.parse_bitcode(bitcode)
            optimize_here(module, machine)
            payload = machine.emit_object(module) if header["object"] else module.as_bitcode()
            status = b"\x01"
        except Exception as error:  # noqa: BLE001 - reported to the parent, which optimizes itself
            status, payload = b"\x00", str(error).encode()
        replies.write(status + _LENGTH.pack(len(payload)) + payload)
        replies.flush()


if __name__ == "__main__":
    _serve()
