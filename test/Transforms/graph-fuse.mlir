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

// A widening (integer) matmul anchors its epilogue too, its B transposed or
// not: the zero point's share subtracted, the sum converted and scaled.
// CHECK-LABEL: func.func @integer_epilogue
// CHECK-NEXT:    %{{.*}} = graph.fused %a, %w, %share, %scale
// CHECK:         graph.matmul %{{.*}} {transpose_b = true} : (tensor<32x64xui8>, tensor<16x64xi8>) -> tensor<32x16xi32>
// CHECK-NEXT:    graph.sub
// CHECK-NEXT:    graph.cast
// CHECK-NEXT:    graph.mul
// CHECK-NEXT:    graph.yield
func.func @integer_epilogue(%a: tensor<32x64xui8>, %w: tensor<16x64xi8>, %share: tensor<1x16xi32>, %scale: tensor<f32>) -> tensor<32x16xf32> {
  %0 = graph.matmul %a, %w {transpose_b = true} : (tensor<32x64xui8>, tensor<16x64xi8>) -> tensor<32x16xi32>
  %1 = graph.sub %0, %share : (tensor<32x16xi32>, tensor<1x16xi32>) -> tensor<32x16xi32>
  %2 = graph.cast %1 : tensor<32x16xi32> -> tensor<32x16xf32>
  %3 = graph.mul %2, %scale : (tensor<32x16xf32>, tensor<f32>) -> tensor<32x16xf32>
  func.return %3 : tensor<32x16xf32>
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

// -----

// softmax as a row anchor: its producers (scale, additive mask broadcast
// over batch and heads) come before it in the region, its consumer after.
// CHECK-LABEL: func.func @softmax_anchor
// CHECK-NEXT:    %s = graph.constant
// CHECK-NEXT:    %[[R:.*]] = graph.fused %x, %s, %mask : (tensor<2x4x8x8xf32>, tensor<1xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32> {
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.softmax
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.yield
// CHECK:         func.return %[[R]]
func.func @softmax_anchor(%x: tensor<2x4x8x8xf32>, %mask: tensor<8x8xf32>) -> tensor<2x4x8x8xf32> {
  %s = graph.constant dense<0.125> : tensor<1xf32>
  %0 = graph.mul %x, %s : (tensor<2x4x8x8xf32>, tensor<1xf32>) -> tensor<2x4x8x8xf32>
  %1 = graph.add %0, %mask : (tensor<2x4x8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
  %2 = graph.softmax %1 {axis = -1 : i64} : tensor<2x4x8x8xf32>
  %3 = graph.relu %2 : tensor<2x4x8x8xf32>
  func.return %3 : tensor<2x4x8x8xf32>
}

// -----

// The residual add + layer_norm of a transformer, with a gelu and a cast
// after it: gamma and beta stay plain inputs; the fused op sits where the
// layer_norm was; both consumers used outside are results.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK-NEXT:    %[[Y:.*]], %[[C:.*]] = graph.fused %x, %a, %g, %b : (tensor<6x40xf32>, tensor<6x40xf32>, tensor<40xf32>, tensor<40xf32>) -> (tensor<6x40xf32>, tensor<6x40xf16>) {
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.layer_norm
// CHECK-NEXT:      graph.gelu
// CHECK-NEXT:      graph.cast
// CHECK-NEXT:      graph.yield
// CHECK:         func.return %[[Y]], %[[C]]
func.func @residual_layer_norm(%x: tensor<6x40xf32>, %a: tensor<6x40xf32>, %g: tensor<40xf32>, %b: tensor<40xf32>) -> (tensor<6x40xf32>, tensor<6x40xf16>) {
  %h = graph.add %x, %a : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %n = graph.layer_norm %h, %g, %b {axis = 1 : i64} : (tensor<6x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<6x40xf32>
  %y = graph.gelu %n : tensor<6x40xf32>
  %c = graph.cast %y : tensor<6x40xf32> -> tensor<6x40xf16>
  func.return %y, %c : tensor<6x40xf32>, tensor<6x40xf16>
}

// -----

// Not producers: an add whose result is also returned (another user), a
// mul computing gamma (not the normalized operand); a softmax over an
// outer axis is no anchor (its scale stays a lone op).
// CHECK-LABEL: func.func @not_producers
// CHECK-NEXT:    %h = graph.add %x, %a
// CHECK-NEXT:    %g2 = graph.mul %g, %g
// CHECK-NEXT:    %[[N:.*]] = graph.fused %h, %g2, %b
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.layer_norm
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.yield
// CHECK:         %t = graph.mul %x, %x
// CHECK-NEXT:    %s = graph.softmax %t {axis = 0 : i64}
// CHECK-NOT:     graph.fused
func.func @not_producers(%x: tensor<6x40xf32>, %a: tensor<6x40xf32>, %g: tensor<40xf32>, %b: tensor<40xf32>) -> (tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x40xf32>) {
  %h = graph.add %x, %a : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %g2 = graph.mul %g, %g : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
  %n = graph.layer_norm %h, %g2, %b {axis = 1 : i64} : (tensor<6x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<6x40xf32>
  %r = graph.relu %n : tensor<6x40xf32>
  %t = graph.mul %x, %x : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  %s = graph.softmax %t {axis = 0 : i64} : tensor<6x40xf32>
  func.return %r, %h, %s : tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x40xf32>
}

// -----

// sin, cos, sign, round, floor, ceil and mod are element-wise ops like the
// others: a chain of them is one group; argmax, which reads whole lines,
// stays out of it.
// CHECK-LABEL: func.func @rounding_chain
// CHECK-NEXT:    %[[F:.*]] = graph.fused %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8xf32>):
// CHECK-NEXT:      graph.sin
// CHECK-NEXT:      graph.cos
// CHECK-NEXT:      graph.mod
// CHECK-NEXT:      graph.round
// CHECK-NEXT:      graph.floor
// CHECK-NEXT:      graph.ceil
// CHECK-NEXT:      graph.sign
// CHECK-NEXT:      graph.yield
// CHECK:         graph.argmax %[[F]]
func.func @rounding_chain(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<8xi64> {
  %0 = graph.sin %x : tensor<4x8xf32>
  %1 = graph.cos %0 : tensor<4x8xf32>
  %2 = graph.mod %1, %y {fmod = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = graph.round %2 : tensor<4x8xf32>
  %4 = graph.floor %3 : tensor<4x8xf32>
  %5 = graph.ceil %4 : tensor<4x8xf32>
  %6 = graph.sign %5 : tensor<4x8xf32>
  %7 = graph.argmax %6 : tensor<4x8xf32> -> tensor<8xi64>
  func.return %7 : tensor<8xi64>
}

// -----

// A value one group hands to another, computed from a narrower one by a
// short tail (a dequantization of the u8 a quantization made), crosses
// memory narrow: the consumer group recomputes the tail from the u8.
// CHECK-LABEL: func.func @narrow_boundary
// CHECK:         %[[Q:.*]] = graph.fused %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xui8> {
// CHECK:           %[[Q1:.*]] = graph.cast %{{.*}} : tensor<4x16xf32> -> tensor<4x16xui8>
// CHECK-NEXT:      graph.yield %[[Q1]] : tensor<4x16xui8>
// CHECK:         graph.fused %p, %w, %[[Q]], %s : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xui8>, tensor<f32>) -> tensor<4x16xf32> {
// CHECK:           %[[M:.*]] = graph.matmul
// CHECK-NEXT:      %[[D:.*]] = graph.cast %{{.*}} : tensor<4x16xui8> -> tensor<4x16xf32>
// CHECK-NEXT:      %[[D2:.*]] = graph.mul %[[D]], %{{.*}} : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
// CHECK-NEXT:      graph.add %[[M]], %[[D2]]
func.func @narrow_boundary(%x: tensor<4x16xf32>, %p: tensor<4x8xf32>, %w: tensor<8x16xf32>, %s: tensor<f32>) -> tensor<4x16xf32> {
  %a = graph.div %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %r = graph.round %a : tensor<4x16xf32>
  %q = graph.cast %r : tensor<4x16xf32> -> tensor<4x16xui8>
  %d = graph.cast %q : tensor<4x16xui8> -> tensor<4x16xf32>
  %d2 = graph.mul %d, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m = graph.matmul %p, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %o = graph.add %m, %d2 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %o : tensor<4x16xf32>
}

// -----

// Where an op outside any group reads the value too, it stays the output.
// CHECK-LABEL: func.func @wide_value_also_returned
// CHECK:         %[[D2:.*]] = graph.fused %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32> {
// CHECK:         graph.fused %p, %w, %[[D2]] : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
func.func @wide_value_also_returned(%x: tensor<4x16xf32>, %p: tensor<4x8xf32>, %w: tensor<8x16xf32>, %s: tensor<f32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %a = graph.div %x, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %r = graph.round %a : tensor<4x16xf32>
  %q = graph.cast %r : tensor<4x16xf32> -> tensor<4x16xui8>
  %d = graph.cast %q : tensor<4x16xui8> -> tensor<4x16xf32>
  %d2 = graph.mul %d, %s : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %m = graph.matmul %p, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %o = graph.add %m, %d2 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %o, %d2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// An op whose operands are all from before (x, constants) joins the group
// of the op just before it: formulas written op by op (the ONNX importer's
// Atan, Asin, ...) are one kernel, though their branches start apart. After
// another op (the reduction) such an op starts a group of its own.
// CHECK-LABEL: func.func @adjacent_branches
// CHECK-NEXT:    %[[ZERO:.*]] = graph.constant
// CHECK-NEXT:    %[[S:.*]] = graph.fused %x, %[[ZERO]]
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.abs
// CHECK-NEXT:      graph.less
// CHECK-NEXT:      graph.neg
// CHECK-NEXT:      graph.select
// CHECK-NEXT:      graph.exp
// CHECK-NEXT:      graph.yield
// CHECK:         %[[R:.*]] = graph.reduce_sum %[[S]]
// CHECK-NEXT:    %[[M:.*]] = graph.fused %x
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.neg
// CHECK-NEXT:      graph.yield
// CHECK:         func.return %[[R]], %[[M]]
func.func @adjacent_branches(%x: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>) {
  %a = graph.abs %x : tensor<8xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %negative = graph.less %x, %zero : (tensor<8xf32>, tensor<f32>) -> tensor<8xi1>
  %n = graph.neg %a : tensor<8xf32>
  %s = graph.select %negative, %n, %a : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %e = graph.exp %s : tensor<8xf32>
  %r = graph.reduce_sum %e : tensor<8xf32> -> tensor<f32>
  %m = graph.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %m2 = graph.neg %m : tensor<8xf32>
  func.return %r, %m2 : tensor<f32>, tensor<8xf32>
}
