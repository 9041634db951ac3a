// RUN: gc-opt %s --pass-pipeline='builtin.module(graph-constant-fold)' --mlir-pass-statistics 2>%t.stats | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.stats
// RUN: gc-opt %s --pass-pipeline='builtin.module(graph-constant-fold{max-elements=4})' | filecheck %s --check-prefix=LIMIT

// A chain of ops on constants folds to one constant; an op with a real
// input stays.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[2.000000e+00, 5.000000e+00, 1.000000e+01]> : tensor<3xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.add %x, %[[C]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @chain(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = graph.mul %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %one = graph.constant dense<1.0> : tensor<1xf32>
  %c = graph.add %b, %one : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
  %d = graph.add %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %d : tensor<2x3xf32>
}

// Broadcasting a scalar: the folded result is a splat; above max-elements
// it is not folded at all (it would cost memory).
// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<3.000000e+00> : tensor<8x8xf32>
// LIMIT-LABEL: func.func @broadcast
// LIMIT:         graph.broadcast_to
func.func @broadcast() -> tensor<8x8xf32> {
  %three = graph.constant dense<3.0> : tensor<1xf32>
  %0 = graph.broadcast_to %three : tensor<1xf32> -> tensor<8x8xf32>
  func.return %0 : tensor<8x8xf32>
}

// An op that does not grow the data (a concat of weights, as
// graph-merge-matmul makes) is folded whatever max-elements says.
// CHECK-LABEL: func.func @concat_weights
// CHECK-NEXT:    graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// LIMIT-LABEL: func.func @concat_weights
// LIMIT-NEXT:    graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// LIMIT-NOT:     graph.concat
func.func @concat_weights() -> tensor<2x3xf32> {
  %a = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = graph.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// STATS: graph-constant-fold
// STATS-NEXT: (S) 4 folded-ops - ops evaluated at compile time
// STATS-NEXT: (S) 0 too-big - foldable ops left because of max-elements
