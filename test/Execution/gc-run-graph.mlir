// gc-run on a graph: inputs from .npy files by name or index, printing,
// benchmarking, and clear errors.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.array([[1, -25, 3]], np.float32)); np.save('%t.b.npy', np.array([10, 20, 30], np.float32))"
// RUN: gc-run %s --input x=%t.x.npy --input 1=%t.b.npy --print-output | filecheck %s --check-prefix=PRINT
// RUN: gc-run %s --random-inputs --seed 3 --bench 3 --check-reference | filecheck %s --check-prefix=BENCH
// RUN: not gc-run %s 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not gc-run %s --input y=%t.x.npy 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not gc-run %s -e nope --random-inputs 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not gc-run %s --input x=%t.b.npy --input b=%t.b.npy 2>&1 | filecheck %s --check-prefix=SHAPE

// PRINT:      output #0: float32[1, 3]
// PRINT-NEXT: {{\[\[}}11. 0. 33.]]
// PRINT-NEXT: output #1: float32[1, 3]
// PRINT-NEXT: {{\[\[}}11. -5. 33.]]
// BENCH: output #0: matches the reference
// BENCH: output #1: matches the reference
// BENCH: bench: 3 calls, median {{[0-9.]+}} ms, min {{[0-9.]+}} ms
// MISSING: gc-run: error: input #0 ('%x') has no value: give --input or --random-inputs
// NAME: gc-run: error: @main has no input 'y' (inputs: %x, %b)
// ENTRY: gc-run: error: no function @nope (functions: main)
// SHAPE: gc-run: error: argument #0 ('%x') of @main has shape [3], expected [1, 3]
func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>) {
  %0 = graph.add %x, %b : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %1 = graph.relu %0 : tensor<1x3xf32>
  func.return %1, %0 : tensor<1x3xf32>, tensor<1x3xf32>
}
