// Every example graph compiles, runs on random inputs and matches the
// reference interpreter; a wrong tolerance makes gc-run fail.
// RUN: gc-run %S/../../examples/mlp.mlir --random-inputs --check-reference | filecheck %s
// RUN: gc-run %S/../../examples/attention.mlir --random-inputs --check-reference --threads 2 | filecheck %s
// RUN: gc-run %S/../../examples/transformer.mlir --random-inputs --check-reference | filecheck %s
// RUN: gc-run %S/../../examples/cnn.mlir --random-inputs --check-reference --threads 1 | filecheck %s
// RUN: not gc-run %S/../../examples/transformer.mlir --random-inputs --check-reference --rtol 0 --atol 0 | filecheck %s --check-prefix=STRICT

// CHECK: output #0: matches the reference (max abs error {{.*}})
// STRICT: output #0: MISMATCH with the reference (max abs error {{.*}})
