// graph.loop round-trips: print -> parse -> print is identical, and the
// generic form parses to the same op (its properties: the step function,
// how many operands are states and sequences, reverse).
// RUN: gc-opt %s | filecheck %s
// RUN: gc-opt %s | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @running_sum
// CHECK-NEXT: %total, %sums = graph.loop @add_row(%zero) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
// GENERIC: "graph.loop"(%{{.*}}, %{{.*}}) <{body = @add_row, states = 1 : i64, sequences = 1 : i64}>
func.func @running_sum(%zero: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>) {
  %total, %sums = graph.loop @add_row(%zero) over (%xs) : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  func.return %total, %sums : tensor<4xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func.func private @add_row
func.func private @add_row(%sum: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %next = graph.add %sum, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %next, %next : tensor<4xf32>, tensor<4xf32>
}

// Two states, an invariant, walked from the last step.
// CHECK-LABEL: func.func @cell
// CHECK-NEXT: %h, %c, %ys = graph.loop @cell_step(%h0, %c0) over (%xs) with (%u) reverse : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<5x2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<5x2x8xf32>)
// GENERIC: "graph.loop"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{body = @cell_step, states = 2 : i64, sequences = 1 : i64, reverse = true}>
func.func @cell(%h0: tensor<2x8xf32>, %c0: tensor<2x8xf32>, %xs: tensor<5x2x8xf32>, %u: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<5x2x8xf32>) {
  %h, %c, %ys = graph.loop @cell_step(%h0, %c0) over (%xs) with (%u) reverse : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<5x2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<5x2x8xf32>)
  func.return %c, %ys : tensor<2x8xf32>, tensor<5x2x8xf32>
}

func.func private @cell_step(%h: tensor<2x8xf32>, %c: tensor<2x8xf32>, %x: tensor<2x8xf32>, %u: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %a = graph.add %h, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = graph.add %a, %u : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %t = graph.tanh %b : tensor<2x8xf32>
  %c1 = graph.add %c, %t : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %t, %c1, %t : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
