// --mlir-timing prints a per-pass wall-time report, nested like the pipeline.
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize),dce)' --mlir-timing 2>&1 >/dev/null | filecheck %s

// CHECK:      ... Execution time report ...
// CHECK:      Total Execution Time: {{[0-9.]+}} seconds
// CHECK:      ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Verifier
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  'func.func' Pipeline
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    cse
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    (A) Verifier
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    canonicalize
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  dce
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  (A) Verifier
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// CHECK-NEXT: {{[0-9.]+}} (100.0%)  Total

func.func @f() {
  func.return
}
