"""Parallel-for scaling of JIT-compiled Tensor IR on this machine.

A compute-bound parallel loop (64 independent reductions of 200000 square
roots) runs with 1, 2, ... up to all cores; prints the median time of 5 runs
per thread count and the speedup over one thread.

    python bench/tir_parallel_scaling.py
"""

import os
import statistics
import time

import numpy as np

from graphcompiler.runtime.program import TirProgram

KERNEL = """
tir.func @work(%out: !tir.tensor<64xf32>) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c64 = tir.const 64 : index
  %n = tir.const 200000 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    %zero = tir.const 0.0 : f32
    %acc = tir.define_var %zero : !tir.var<f32>
    tir.for %j = %c0 to %n step %c1 {
      %x = tir.cast %j : index -> f32
      %s = tir.sqrt %x : f32 -> f32
      %a = tir.read %acc : !tir.var<f32>
      %a2 = tir.add %a, %s : (f32, f32) -> f32
      tir.assign %acc = %a2 : !tir.var<f32>
    }
    %r = tir.read %acc : !tir.var<f32>
    tir.store %r, %out[%i] : !tir.tensor<64xf32>
  }
  tir.return
}
"""


def main() -> None:
    program = TirProgram(KERNEL)
    out = np.zeros(64, np.float32)
    cores = os.cpu_count() or 1
    counts = sorted({1, 2, 4, 8, 16, cores} & set(range(1, cores + 1)))
    baseline = None
    print(f"{'threads':>7}  {'median ms':>9}  speedup")
    for threads in counts:
        program.set_num_threads(threads)
        program["work"](out)  # warm-up: thread pool start
        times = []
        for _ in range(5):
            start = time.perf_counter()
            program["work"](out)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        baseline = baseline or median
        print(f"{threads:>7}  {median * 1e3:9.2f}  {baseline / median:6.2f}x")


if __name__ == "__main__":
    main()
