"""What the host can do at best: the f32 FMA peak and the copy bandwidth.

The FMA probe is LLVM IR compiled by graphcompiler's own JIT (so it gets
the same CPU features and vector widths as generated code): many
independent `<lanes x float>` fmuladd chains, enough to cover the FMA
latency on every FMA port, in an unrolled loop. Threads call it through
ctypes, which releases the GIL, so the all-core figure is measured rather
than extrapolated.
"""

from __future__ import annotations

import ctypes
import threading
import time

import numpy as np

_UNROLL = 4


def fma_probe_ir(lanes: int, accumulators: int) -> str:
    """`void @fma_peak_<lanes>(i64 iterations, ptr io)`: io holds the
    multiplier, the addend and one start vector per accumulator (distinct,
    so no two chains can be merged); the chains' ends are stored back.
    Accesses are `align 4`: numpy only promises element alignment.
    Each iteration does accumulators * _UNROLL fmuladds."""
    vec = f"<{lanes} x float>"
    fma = f"@llvm.fmuladd.v{lanes}f32"
    lines = [
        f"declare {vec} {fma}({vec}, {vec}, {vec})",
        f"define void @fma_peak_{lanes}(i64 %iterations, ptr %io) {{",
        "entry:",
        f"  %m = load {vec}, ptr %io, align 4",
        f"  %a.ptr = getelementptr {vec}, ptr %io, i64 1",
        f"  %a = load {vec}, ptr %a.ptr, align 4",
    ]
    for j in range(accumulators):
        lines += [
            f"  %p{j} = getelementptr {vec}, ptr %io, i64 {j + 2}",
            f"  %init{j} = load {vec}, ptr %p{j}, align 4",
        ]
    lines += ["  br label %loop", "loop:", "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]"]
    last = f"u{_UNROLL - 1}"
    for j in range(accumulators):
        lines.append(f"  %acc{j} = phi {vec} [ %init{j}, %entry ], [ %acc{j}.{last}, %loop ]")
    for u in range(_UNROLL):
        for j in range(accumulators):
            source = f"%acc{j}" if u == 0 else f"%acc{j}.u{u - 1}"
            lines.append(f"  %acc{j}.u{u} = call {vec} {fma}({vec} {source}, {vec} %m, {vec} %a)")
    lines += [
        "  %i.next = add i64 %i, 1",
        "  %more = icmp slt i64 %i.next, %iterations",
        "  br i1 %more, label %loop, label %exit",
        "exit:",
    ]
    for j in range(accumulators):
        lines.append(f"  store {vec} %acc{j}.{last}, ptr %p{j}, align 4")
    lines += ["  ret void", "}"]
    return "\n".join(lines) + "\n"


class FmaProbe:
    """The compiled probe for each lane count; `gflops(lanes, threads)`."""

    def __init__(self, lane_counts: list[int], vector_registers: int):
        from graphcompiler.runtime.jit.engine import JitEngine

        # Accumulators fill the register file but for m, a and two spares.
        self.accumulators = min(24, vector_registers - 4)
        ir = "".join(fma_probe_ir(lanes, self.accumulators) for lanes in lane_counts)
        self.engine = JitEngine(ir, 1)
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)
        self.functions = {
            lanes: prototype(self.engine.function_address(f"fma_peak_{lanes}"))
            for lanes in lane_counts
        }

    def _buffer(self, lanes: int) -> np.ndarray:
        io = np.empty((self.accumulators + 2, lanes), np.float32)
        io[0], io[1] = 0.999, 1e-3  # converges to a / (1 - m): no overflow, no denormals
        io[2:] = np.arange(1, self.accumulators + 1, dtype=np.float32)[:, None]
        return io

    def gflops(self, lanes: int, threads: int, seconds: float, burst: float = 0.02) -> float:
        """The best rate over bursts of `burst` seconds run for `seconds` in all
        (at least 5), `threads` threads calling the probe at once: short
        bursts find the moments no other process holds the cores."""
        function = self.functions[lanes]
        flops_per_iteration = 2 * lanes * self.accumulators * _UNROLL
        calibration, fastest = self._buffer(lanes), float("inf")
        for _ in range(3):
            start = time.perf_counter()
            function(100_000, calibration.ctypes.data)
            fastest = min(fastest, time.perf_counter() - start)
        iterations = max(1000, int(100_000 / max(fastest, 1e-9) * burst))
        buffers = [self._buffer(lanes) for _ in range(threads)]

        def work(io: np.ndarray, barrier: threading.Barrier) -> None:
            barrier.wait()
            function(iterations, io.ctypes.data)

        best, bursts, deadline = 0.0, 0, time.perf_counter() + seconds
        while bursts < 5 or time.perf_counter() < deadline:
            barrier = threading.Barrier(threads + 1)
            workers = [threading.Thread(target=work, args=(io, barrier)) for io in buffers]
            for worker in workers:
                worker.start()
            barrier.wait()
            start = time.perf_counter()
            for worker in workers:
                worker.join()
            elapsed = time.perf_counter() - start
            best = max(best, threads * iterations * flops_per_iteration / elapsed / 1e9)
            bursts += 1
        return best


def copy_bandwidth(threads: int, seconds: float, mebibytes: int = 64) -> float:
    """GB/s (read + written bytes) of numpy copying a `mebibytes` array, split
    in `threads` chunks copied by as many threads (numpy releases the GIL)."""
    source = np.ones(mebibytes * 2**20 // 4, np.float32)
    target = np.empty_like(source)
    chunks = np.array_split(np.arange(source.size), threads)
    bounds = [(c[0], c[-1] + 1) for c in chunks]

    def copy(lo: int, hi: int) -> None:
        np.copyto(target[lo:hi], source[lo:hi])

    copy(0, source.size)  # first touch of the target pages
    best, deadline, runs = float("inf"), time.perf_counter() + seconds, 0
    while runs < 3 or time.perf_counter() < deadline:
        workers = [threading.Thread(target=copy, args=bound) for bound in bounds]
        start = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        best = min(best, time.perf_counter() - start)
        runs += 1
    return 2 * source.nbytes / best / 1e9
