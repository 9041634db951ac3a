// Graph ops are Pure, so xDSL's cse merges identical ones, per function.
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse))' | filecheck %s

// CHECK-LABEL: func.func @duplicates
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x : tensor<4x8xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %[[R]], %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[M]], %[[M]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @duplicates(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.relu %x : tensor<4x8xf32>
  %1 = graph.relu %x : tensor<4x8xf32>
  %2 = graph.matmul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = graph.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = graph.add %2, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %4 : tensor<4x8xf32>
}

// Ops that differ in a property or an operand are not merged.
// CHECK-LABEL: func.func @different
// CHECK-COUNT-2: graph.softmax
// CHECK-COUNT-2: graph.add
func.func @different(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = graph.softmax %x {axis = 0 : i64} : tensor<4x8xf32>
  %1 = graph.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  %2 = graph.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = graph.add %y, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
