"""The process's thread pool (runtime/threadpool.ll), compiled once and
shared by every compiled program.

Programs call `gc_pool_run` through their `sc_parallel_call_cpu`; the
pool's functions are published to LLVM's symbol table, so a program's JIT
engine links against this one copy. The helper threads are joined at exit,
before the interpreter frees the code they run, and forgotten in a forked
child (which has none of them).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import platform
import threading
from importlib import resources

import llvmlite
import llvmlite.binding as llvm

from graphcompiler.runtime.object_cache import cached_object

POOL_SYMBOLS = (
    "gc_pool_run",
    "gc_pool_run_or_queue",
    "gc_region_begin",
    "gc_region_end",
    "gc_pool_thread_index",
)
"""The pool functions programs call (see native.ll)."""

_FUTEX_SYSCALL = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}
_SPIN_HINT = {"x86_64": "pause", "amd64": "pause", "aarch64": "yield", "arm64": "yield"}


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, e.g. under
    taskset or a container's cpuset), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_source() -> str:
    """The pool's LLVM IR for this machine (its spin-wait hint filled in)."""
    source = resources.files("graphcompiler.runtime").joinpath("threadpool.ll").read_text()
    return source.replace("SPIN_HINT", _SPIN_HINT.get(platform.machine().lower(), ""))


_pool: _ThreadPool | None = None
_pool_lock = threading.Lock()


def _new_lock_after_fork() -> None:  # a child of a fork while the pool was being made
    global _pool_lock
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_new_lock_after_fork)


def thread_pool() -> _ThreadPool:
    """The process's pool, made on first use (once, whichever thread asks)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _ThreadPool()
    return _pool


class _ThreadPool:
    def __init__(self):
        machine = platform.machine().lower()
        source = pool_source()
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
        target = llvm.Target.from_default_triple()
        target_machine = target.create_target_machine(cpu=cpu, features=features, opt=2)

        def build() -> bytes:
            module = llvm.parse_assembly(source)
            module.verify()
            return target_machine.emit_object(module)

        # compiled by an earlier process on this CPU, most of the time (~40 ms saved)
        key = (source, cpu, features, llvm.get_default_triple(), llvmlite.__version__)
        code = cached_object("threadpool", key, build)
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine)
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self.engine.finalize_object()
        futex = ctypes.c_int64.from_address(
            self.engine.get_global_value_address("gc_pool_futex_syscall")
        )
        # without a futex the helpers could not sleep: run everything serially
        cpus = available_cpus() if machine in _FUTEX_SYSCALL else 1
        futex.value = _FUTEX_SYSCALL.get(machine, 0)
        self._function("gc_pool_init", None, ctypes.c_int32)(cpus)
        for name in POOL_SYMBOLS:
            llvm.add_symbol(name, self.engine.get_function_address(name))
        self._shutdown = self._function("gc_pool_shutdown", None)
        atexit.register(self._shutdown)
        if hasattr(os, "register_at_fork"):  # POSIX
            os.register_at_fork(after_in_child=self._function("gc_pool_after_fork", None))

    def _function(self, name: str, restype, *argtypes):
        address = self.engine.get_function_address(name)
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)
