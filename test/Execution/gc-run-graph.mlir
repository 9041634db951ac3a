// gc-run on a graph: inputs from .npy files by name or index, printing,
// benchmarking, and clear errors.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.array([[1, -25, 3]], np.float32)); np.save('%t.b.npy', np.array([10, 20, 30], np.float32))"
// RUN: gc-run %s --input x=%t.x.npy --input 1=%t.b.npy --print-output | filecheck %s --check-prefix=PRINT
// RUN: gc-run %s --random-inputs --seed 3 --bench 3 --check-reference | filecheck %s --check-prefix=BENCH
// RUN: not gc-run %s 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not gc-run %s --input y=%t.x.npy 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not gc-run %s -e nope --random-inputs 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not gc-run %s --input x=%t.b.npy --input b=%t.b.npy 2>&1 | filecheck %s --check-prefix=SHAPE
// Inputs alone print each output's shape and a checksum; missing ones are listed.
// RUN: gc-run %s --input x=%t.x.npy --input b=%t.b.npy | filecheck %s --check-prefix=CHECKSUM
// RUN: not gc-run %s --input b=%t.b.npy 2>&1 | filecheck %s --check-prefix=MISSING-X
// Flags are checked before compiling: counts, and a pipeline that cannot reach the JIT.
// RUN: not gc-run %s --random-inputs --threads -1 2>&1 | filecheck %s --check-prefix=THREADS
// RUN: not gc-run %s --random-inputs --bench -5 2>&1 | filecheck %s --check-prefix=BENCH-COUNT
// RUN: not gc-run %s --random-inputs --pass-pipeline='builtin.module(canonicalize)' 2>&1 | filecheck %s --check-prefix=LLVM
// RUN: not env PATH=%t.nowhere %python -m graphcompiler.tools.gc_run %s --random-inputs --graph-svg %t.svg 2>&1 | filecheck %s --check-prefix=SVG
// A plugin's pass in gc-run's pipeline.
// RUN: gc-run %s --random-inputs --check-reference --load-plugin=%plugins/toy_plugin.py --pass-pipeline='builtin.module(toy-scale-constants,gc-cpu-pipeline)' | filecheck %s --check-prefix=PLUGIN
// RUN: not gc-run %s --random-inputs --pass-pipeline='builtin.module(toy-scale-constants,gc-cpu-pipeline)' 2>&1 | filecheck %s --check-prefix=NOPLUGIN

// PRINT:      output #0: float32[1, 3]
// PRINT-NEXT: {{\[\[}}11. 0. 33.]]
// PRINT-NEXT: output #1: float32[1, 3]
// PRINT-NEXT: {{\[\[}}11. -5. 33.]]
// BENCH: output #0: matches the reference
// BENCH: output #1: matches the reference
// BENCH: bench: 3 calls, median {{[0-9.]+}} ms, min {{[0-9.]+}} ms
// MISSING: gc-run: error: @main has inputs without a value: #0 ('%x'), #1 ('%b'); give --input NAME=FILE.npy for each, or --random-inputs for the rest
// MISSING-X: gc-run: error: @main has inputs without a value: #0 ('%x');
// CHECKSUM:      output #0: float32[1, 3] sum 44
// CHECKSUM-NEXT: output #1: float32[1, 3] sum 39
// THREADS: gc-run: error: argument --threads/-threads: expected 1..{{[0-9]+}} (or 0 for all cores), got '-1'
// BENCH-COUNT: gc-run: error: argument --bench/-bench: expected a count >= 1, got '-5'
// LLVM: gc-run: error: the pipeline must end in the llvm dialect, but its last pass is 'canonicalize': end it with tir-to-llvm
// SVG: gc-run: error: the Graphviz 'dot' executable is not on PATH
// PLUGIN: output #1: matches the reference
// NOPLUGIN: gc-run: error: unknown pass or pipeline 'toy-scale-constants'
// NAME: gc-run: error: @main has no input 'y' (inputs: %x, %b)
// ENTRY: gc-run: error: no function @nope (functions: main)
// SHAPE: gc-run: error: argument #0 ('%x') of @main has shape [3], expected [1, 3]
func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>) {
  %0 = graph.add %x, %b : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %1 = graph.relu %0 : tensor<1x3xf32>
  func.return %1, %0 : tensor<1x3xf32>, tensor<1x3xf32>
}
