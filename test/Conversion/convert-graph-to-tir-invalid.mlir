// What convert-graph-to-tir cannot lower is a located diagnostic.
// RUN: gc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-graph-to-tir)'

func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' op cannot be converted to Tensor IR: no lowering template}}
  %0 = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @blocked_matmul(%a: tensor<16x16xf32, #graph.format<"AB8a8b">>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // expected-error @+1 {{'graph.matmul' op blocked memory formats are only supported by element-wise ops so far}}
  %0 = graph.matmul %a, %b : (tensor<16x16xf32, #graph.format<"AB8a8b">>, tensor<16x16xf32>) -> tensor<16x16xf32>
  func.return %0 : tensor<16x16xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0 has type f32: graph functions take and return tensors}}
func.func @scalar(%s: f32, %t: tensor<4xf32>) -> tensor<4xf32> {
  func.return %t : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op a graph function needs a body of exactly one block}}
func.func private @declared(%t: tensor<4xf32>) -> tensor<4xf32>
