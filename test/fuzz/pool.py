"""Worker processes that run cases, so that a crash or hang of LLVM (or of
anything else) is an outcome instead of the end of the run.

Each `Worker` is a spawned process that imports the compiler once and then
answers requests; it reports the stage it enters, so a signal or a timeout
is attributed to a stage. A dead or stuck worker is replaced. Its stdout and
stderr go to a log file, whose last lines (LLVM's abort message, say) become
the crash message. Its address space is capped so a huge tensor is a
MemoryError, not the machine's memory.
"""

from __future__ import annotations

import importlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection

from graphcompiler.test.fuzz.oracle import CRASH, HANG, Case, Outcome

MEMORY_LIMIT = 4 << 30
STARTUP_TIMEOUT = 120.0
_SERVE = "from graphcompiler.test.fuzz.pool import serve; serve"


def serve(fd: int, memory_limit: int) -> None:
    """The worker's loop: requests in on `fd`, stages and outcomes out."""
    import resource

    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    connection = Connection(fd)
    from graphcompiler.test.fuzz import oracle, random_graphs  # noqa: F401 - import once, up front

    connection.send(("ready", None))
    while True:
        request = connection.recv()
        if request is None:
            return
        kind, payload = request
        os.ftruncate(1, 0)  # the log keeps what this request printed
        os.lseek(1, 0, os.SEEK_SET)
        result = _handler(kind)(payload, lambda stage: connection.send(("stage", stage)))
        connection.send(("done", result))


HANDLERS = {
    "case": "graphcompiler.test.fuzz.oracle:run_case",
    "graph": "graphcompiler.test.fuzz.random_graphs:check_graph",
}


def _handler(kind: str) -> Callable:
    """What answers a request: `case`, `graph`, or any `module:function`
    taking (payload, on_stage) (the harness's own tests inject faults so)."""
    module, _, name = HANDLERS.get(kind, kind).partition(":")
    return getattr(importlib.import_module(module), name)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` and its threads (Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _log_tail(path: str) -> str:
    """The most telling line of what a dead worker printed last."""
    try:
        with open(path, errors="replace") as file:
            lines = [line.strip() for line in file.read()[-20000:].splitlines() if line.strip()]
    except OSError:
        return ""
    for marker in ("LLVM ERROR", "Assertion", "error:", "Fatal", "Error"):
        hits = [line for line in lines if marker in line]
        if hits:
            return hits[0][:300]
    return lines[-1][:300] if lines else ""


class Worker:
    """One worker process, started on first use and after each death."""

    def __init__(self, memory_limit: int = MEMORY_LIMIT):
        self.memory_limit = memory_limit
        handle, self.log_path = tempfile.mkstemp(prefix="gc-fuzz-", suffix=".log")
        os.close(handle)
        self.process = None
        self.connection = None

    def _start(self) -> None:
        parent, child = socket.socketpair()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", f"{_SERVE}({child.fileno()}, {self.memory_limit})"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=[child.fileno()],
            )
        child.close()
        self.connection = Connection(parent.detach())
        try:
            ready = self.connection.poll(STARTUP_TIMEOUT) and self.connection.recv() == (
                "ready",
                None,
            )
        except (EOFError, OSError):
            ready = False
        if not ready:
            self._kill()
            raise RuntimeError(f"a fuzz worker did not start: {_log_tail(self.log_path)}")

    def _kill(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.connection.close()
        self.process = None

    def run(self, kind: str, payload, timeout: float) -> Outcome:
        """The outcome of one request. HANG once it has used `timeout` seconds
        of CPU (a loaded machine is not a hang), or 3 x `timeout` of wall
        time (a deadlock uses no CPU)."""
        if self.process is None:
            self._start()
        self.connection.send((kind, payload))
        stage = "start"
        start, cpu_start = time.monotonic(), _cpu_seconds(self.process.pid)
        while True:
            wall = time.monotonic() - start
            if wall >= timeout and (
                _cpu_seconds(self.process.pid) - cpu_start >= timeout or wall >= 3 * timeout
            ):
                self._kill()
                return Outcome(HANG, stage, f"no result within {timeout:g} s")
            try:
                if self.connection.poll(0.2):
                    message, value = self.connection.recv()
                    if message == "done":
                        return value
                    stage = value
                    continue
            except (EOFError, OSError):
                pass
            if self.process.poll() is not None:
                return self._died(stage)

    def _died(self, stage: str) -> Outcome:
        code = self.process.wait()
        self._kill()
        name = signal.Signals(-code).name if code and code < 0 else f"exit {code}"
        return Outcome(CRASH, stage, f"{name}: {_log_tail(self.log_path)}".rstrip(": "))

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                self.connection.send(None)
                self.process.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass


class Pool:
    """`workers` Workers fed from one iterable of requests, in order."""

    def __init__(self, workers: int = 1, timeout: float = 10.0):
        self.timeout = timeout
        self._workers = [Worker() for _ in range(workers)]
        self._free = list(self._workers)
        self._lock = threading.Lock()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, kind: str, payload) -> Outcome:
        with self._lock:
            worker = self._free.pop()
        try:
            return worker.run(kind, payload, self.timeout)
        finally:
            with self._lock:
                self._free.append(worker)

    def run_case(self, case: Case) -> Outcome:
        return self.run("case", case)

    def map(self, kind: str, payloads: Iterable) -> Iterator[Outcome]:
        """Outcomes in the order of `payloads`, computed on all workers."""
        with ThreadPoolExecutor(len(self._workers)) as executor:
            yield from executor.map(lambda payload: self.run(kind, payload), payloads)

    def close(self) -> None:
        for worker in self._workers:
            worker.close()


def run_all(
    kind: str, payloads: list, workers: int, timeout: float, progress: Callable | None = None
) -> list[Outcome]:
    with Pool(workers, timeout) as pool:
        outcomes = []
        for outcome in pool.map(kind, payloads):
            outcomes.append(outcome)
            if progress:
                progress(len(outcomes), outcome)
        return outcomes
