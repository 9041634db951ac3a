// A func.func with branches is rejected by the verifier, at the function,
// before any pass runs: graph passes that walk a function's one block
// reported it as an internal error, with or without graph ops in it.
// RUN: not gc-opt %s --split-input-file --pass-pipeline='builtin.module(gc-cpu-pipeline)' 2>&1 | filecheck %s
// RUN: not gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-merge-matmul)' 2>&1 | filecheck %s
// RUN: not gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-rewrite-rules)' 2>&1 | filecheck %s
// RUN: not gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-graph-to-tir)' 2>&1 | filecheck %s
// RUN: gc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gc-cpu-pipeline)'

// CHECK-NOT: internal error
// CHECK:     two-block-function.mlir:[[# @LINE + 2]]:1: error: 'func.func' op a graph function must have a single block (no branches)
// expected-error @+1 {{'func.func' op a graph function must have a single block (no branches)}}
func.func @no_graph_ops(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  cf.br ^bb1
^bb1:
  func.return %a : tensor<4x4xf32>
}

// -----

// CHECK-NOT: internal error
// CHECK:     two-block-function.mlir:[[# @LINE + 2]]:1: error: 'func.func' op a graph function must have a single block (no branches)
// expected-error @+1 {{'func.func' op a graph function must have a single block (no branches)}}
func.func @matmul(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = graph.matmul %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  cf.br ^bb1
^bb1:
  func.return %0 : tensor<4x4xf32>
}
// CHECK-NOT: internal error
