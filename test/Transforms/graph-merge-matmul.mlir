// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-merge-matmul)' | filecheck %s

// Q, K and V projections of one input become one matmul over [wq wk wv].
// CHECK-LABEL: func.func @projections
// CHECK-NEXT:    %[[W:.*]] = graph.concat %wq, %wk, %wv {axis = 1 : i64} : (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x32xf32>) -> tensor<64x64xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %x, %[[W]] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    %[[Q:.*]] = graph.slice %[[M]] {starts = array<i64: 0, 0>, ends = array<i64: 8, 16>} : tensor<8x64xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %[[K:.*]] = graph.slice %[[M]] {starts = array<i64: 0, 16>, ends = array<i64: 8, 32>} : tensor<8x64xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %[[V:.*]] = graph.slice %[[M]] {starts = array<i64: 0, 32>, ends = array<i64: 8, 64>} : tensor<8x64xf32> -> tensor<8x32xf32>
// CHECK-NEXT:    func.return %[[Q]], %[[K]], %[[V]]
func.func @projections(%x: tensor<8x64xf32>, %wq: tensor<64x16xf32>, %wk: tensor<64x16xf32>, %wv: tensor<64x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x32xf32>) {
  %q = graph.matmul %x, %wq : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %k = graph.matmul %x, %wk : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %v = graph.matmul %x, %wv : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  func.return %q, %k, %v : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x32xf32>
}

// -----

// Not merged: different left operands, a transposed matmul, and a weight
// computed after the first matmul.
// CHECK-LABEL: func.func @negative
// CHECK-NOT:     graph.concat
// CHECK-COUNT-4: graph.matmul
func.func @negative(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>, %w: tensor<64x16xf32>, %wt: tensor<16x64xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = graph.matmul %x, %w : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %1 = graph.matmul %y, %w : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %2 = graph.matmul %x, %wt {transpose_b = true} : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
  %late = graph.neg %w : tensor<64x16xf32>
  %3 = graph.matmul %x, %late : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  func.return %0, %1, %2, %3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}
