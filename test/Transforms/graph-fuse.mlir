// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-fuse)' | filecheck %s

// An element-wise chain becomes one graph.fused; a value also used outside
// the group becomes a second result.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %two = graph.constant
// CHECK-NEXT:    %[[R:.*]], %[[S:.*]] = graph.fused %x, %two : (tensor<64x64xf32>, tensor<1xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<64x64xf32>, %{{.*}}: tensor<1xf32>):
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.exp
// CHECK-NEXT:      graph.sub
// CHECK-NEXT:      graph.yield
// CHECK:         func.return %[[S]], %[[R]]
func.func @chain(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %0 = graph.mul %x, %two : (tensor<64x64xf32>, tensor<1xf32>) -> tensor<64x64xf32>
  %1 = graph.relu %0 : tensor<64x64xf32>
  %2 = graph.exp %1 : tensor<64x64xf32>
  %3 = graph.sub %2, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %3, %1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A matmul epilogue (bias add + relu) joins the matmul.
// CHECK-LABEL: func.func @epilogue
// CHECK-NEXT:    %{{.*}} = graph.fused %a, %w, %b
// CHECK:         graph.matmul
// CHECK-NEXT:    graph.add
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.yield
func.func @epilogue(%a: tensor<32x64xf32>, %w: tensor<64x16xf32>, %b: tensor<16xf32>) -> tensor<32x16xf32> {
  %0 = graph.matmul %a, %w : (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>
  %1 = graph.add %0, %b : (tensor<32x16xf32>, tensor<16xf32>) -> tensor<32x16xf32>
  %2 = graph.relu %1 : tensor<32x16xf32>
  func.return %2 : tensor<32x16xf32>
}

// -----

// Not fused: a lone element-wise op; ops of different shapes (the reduce is
// not element-wise; the broadcast add changes the shape); a transposed
// matmul (no brgemm); an op whose other input comes from after the group
// started.
// CHECK-LABEL: func.func @negative
// CHECK-NOT:     graph.fused
func.func @negative(%x: tensor<8x8xf32>, %y: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>, tensor<2x8x8xf32>, tensor<8x8xf32>) {
  %0 = graph.relu %x : tensor<8x8xf32>
  %1 = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<8x8xf32> -> tensor<8xf32>
  %2 = graph.exp %1 : tensor<8xf32>
  %3 = graph.broadcast_to %x : tensor<8x8xf32> -> tensor<2x8x8xf32>
  %4 = graph.matmul %x, %x {transpose_b = true} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = graph.tanh %4 : tensor<8x8xf32>
  func.return %0, %2, %3, %5 : tensor<8x8xf32>, tensor<8xf32>, tensor<2x8x8xf32>, tensor<8x8xf32>
}

// -----

// A dead chain is left for DCE, not fused into a graph.fused of no results
// (which the lowering cannot index); the live chain beside it is fused.
// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT:    %{{.*}} = graph.relu %x
// CHECK-NEXT:    %{{.*}} = graph.exp
// CHECK-NEXT:    %[[F:.*]] = graph.fused %x
// CHECK:         func.return %[[F]]
func.func @dead_chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.relu %x : tensor<8xf32>
  %1 = graph.exp %0 : tensor<8xf32>
  %2 = graph.tanh %x : tensor<8xf32>
  %3 = graph.neg %2 : tensor<8xf32>
  func.return %3 : tensor<8xf32>
}

// -----

// Constants written between the chain's ops (as the ONNX importer and the
// bench emit them) are moved up to the fused op: the whole chain is one group.
// CHECK-LABEL: func.func @late_constants
// CHECK-NEXT:    %two = graph.constant
// CHECK-NEXT:    %one = graph.constant
// CHECK-NEXT:    %[[R:.*]] = graph.fused %x, %two, %one
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.exp
// CHECK-NEXT:      graph.sub
// CHECK-NEXT:      graph.yield
// CHECK:         func.return %[[R]]
func.func @late_constants(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %0 = graph.mul %x, %two : (tensor<64x64xf32>, tensor<1xf32>) -> tensor<64x64xf32>
  %one = graph.constant dense<1.0> : tensor<1xf32>
  %1 = graph.add %0, %one : (tensor<64x64xf32>, tensor<1xf32>) -> tensor<64x64xf32>
  %2 = graph.relu %1 : tensor<64x64xf32>
  %3 = graph.exp %2 : tensor<64x64xf32>
  %4 = graph.sub %3, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %4 : tensor<64x64xf32>
}
