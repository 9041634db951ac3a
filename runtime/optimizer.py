"""LLVM's O3 pipeline, run in a helper process.

Why a process: llvmlite (0.50) leaks every pass builder's instrumentation
callbacks (`LLVMPY_CreatePassBuilder` allocates a PassInstrumentationCallbacks
it never frees, and each run registers a StandardInstrumentations' callbacks
into it): about 170 KB per optimized module, for the life of the process. A
program compiling graph after graph would grow without bound. A helper
optimizes bitcode and sends bitcode back; it is replaced after
`REQUESTS_PER_HELPER` modules, which frees what it leaked. Code generation
stays in this process (MCJIT, which frees its memory).

Helpers are started ahead of need (`prestart`, at the beginning of a
compile, so Python and LLVM start while the graph is lowered) and kept idle
between compiles, one per thread compiling at once. If a helper cannot be
started or fails, the module is optimized here instead: the same code, with
the leak. `GC_OPTIMIZE_IN_PROCESS=1` always does that (a profiler sees the
passes then). A helper that dies while optimizing a module (an LLVM abort)
is reported as OptimizerCrash rather than retried here, where the same
abort would end the caller's process.

Run as a script, this module is the helper: requests on stdin, replies on
stdout, until stdin closes.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import struct
import subprocess
import sys
import threading

import llvmlite.binding as llvm

REQUESTS_PER_HELPER = 128
"""Modules a helper optimizes before it is replaced (its leak: ~20 MB)."""

_LENGTH = struct.Struct("<Q")


def optimize_here(module: llvm.ModuleRef, machine: llvm.TargetMachine) -> None:
    """LLVM's default O3 module pipeline for `machine`, in this process."""
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


def optimized(
    module: llvm.ModuleRef, machine: llvm.TargetMachine, cpu: str, features: str, context
) -> llvm.ModuleRef:
    """`module` optimized for `machine` (whose CPU name and features are
    `cpu` and `features`): a new module in `context`, made by a helper
    process, or `module` itself, optimized here when no helper can do it."""
    if os.environ.get("GC_OPTIMIZE_IN_PROCESS", "").strip() not in ("", "0"):
        optimize_here(module, machine)
        return module
    reply = _helpers.optimize(module.as_bitcode(), cpu, features)
    if reply is None:
        optimize_here(module, machine)
        return module
    result = llvm.parse_bitcode(reply, context)
    result.name = module.name  # bitcode keeps no module identifier
    module.close()
    return result


def prestart() -> None:
    """Start a helper now if none is idle, so it is ready when needed."""
    _helpers.prestart()


class OptimizerCrash(RuntimeError):
    """LLVM's optimizer died on a module (an LLVM abort, say): reported as
    an error instead of taking the caller's process down with it."""


HELPER_COMMAND = [sys.executable, __file__]
"""How a helper is started (a test starts a failing one instead)."""

HANDSHAKE = b"graphcompiler-optimizer 1\n"
"""What a helper writes once it is ready: a process that does not (not a
Python, no llvmlite) is not used."""

HANDSHAKE_SECONDS = 30.0


class _Helper:
    """One helper process and its pipes."""

    def __init__(self):
        self.process = subprocess.Popen(
            HELPER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.requests = 0
        self.ready = False

    def wait_ready(self) -> bool:
        """Whether the helper said it is ready within HANDSHAKE_SECONDS."""
        if not self.ready:
            stdout = self.process.stdout
            readable, _, _ = select.select([stdout], [], [], HANDSHAKE_SECONDS)
            self.ready = bool(readable) and stdout.readline() == HANDSHAKE
        return self.ready

    def optimize(self, bitcode: bytes, cpu: str, features: str) -> bytes | None:
        """The optimized bitcode, or None if the helper is not working (then
        it is stopped). Raises OptimizerCrash if it died on this module."""
        if not self.wait_ready():
            self.stop()
            return None
        header = json.dumps({"cpu": cpu, "features": features}).encode()
        try:
            stdin = self.process.stdin
            stdin.write(_LENGTH.pack(len(header)) + header + _LENGTH.pack(len(bitcode)))
            stdin.write(bitcode)
            stdin.flush()
            ok = self.process.stdout.read(1)
            payload = _read_exactly(self.process.stdout, _read_length(self.process.stdout))
        except (OSError, ValueError, struct.error):
            code = self.stop()
            if code is not None and code < 0:  # killed by a signal while optimizing
                raise OptimizerCrash(
                    f"LLVM's optimizer crashed on this program (signal {-code}); "
                    "GC_OPTIMIZE_IN_PROCESS=1 runs it in this process, e.g. under a debugger"
                ) from None
            return None
        self.requests += 1
        if ok != b"\x01":
            self.stop()
            return None
        return payload

    @property
    def usable(self) -> bool:
        return self.process.poll() is None and self.requests < REQUESTS_PER_HELPER

    def stop(self) -> int | None:
        """Close its stdin (it exits at end of input), reap it, and return
        its exit status."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            return self.process.wait(timeout=5)
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

    def _forget_after_fork(self) -> None:
        # a forked child shares the parent's pipes: it must not use them
        if os.getpid() != self.pid:
            self.idle, self.pid = [], os.getpid()

    def optimize(self, bitcode: bytes, cpu: str, features: str) -> bytes | None:
        """The optimized bitcode from an idle or new helper; None if there
        is none or it failed (then helpers are not tried again: a helper
        that cannot import llvmlite would fail every time)."""
        helper = self.take()
        if helper is None:
            return None
        try:
            reply = helper.optimize(bitcode, cpu, features)
        finally:
            self.give_back(helper)
        if reply is None:
            self.broken = True
        return reply

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
        if not helper.usable:
            helper.stop()
            return
        with self.lock:
            self._forget_after_fork()
            self.idle.append(helper)

    def prestart(self) -> None:
        with self.lock:
            self._forget_after_fork()
            if self.idle or self.broken:
                return
        helper = self._start()
        if helper is not None:
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


def _serve() -> None:
    """The helper's loop: a request is a JSON header (target CPU and
    features) and bitcode; the reply is a status byte (1: optimized
    bitcode follows; 0: an error message follows) and a payload."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    replies.write(HANDSHAKE)
    replies.flush()
    while True:
        raw_length = requests.read(_LENGTH.size)
        if len(raw_length) < _LENGTH.size:
            return  # the parent closed the pipe: done
        header = json.loads(_read_exactly(requests, _LENGTH.unpack(raw_length)[0]))
        bitcode = _read_exactly(requests, _read_length(requests))
        try:
            machine = llvm.Target.from_default_triple().create_target_machine(
                cpu=header["cpu"], features=header["features"], opt=3, codemodel="jitdefault"
            )
            module = llvm.parse_bitcode(bitcode)
            optimize_here(module, machine)
            status, payload = b"\x01", module.as_bitcode()
        except Exception as error:  # noqa: BLE001 - reported to the parent, which optimizes itself
            status, payload = b"\x00", str(error).encode()
        replies.write(status + _LENGTH.pack(len(payload)) + payload)
        replies.flush()


if __name__ == "__main__":
    _serve()
