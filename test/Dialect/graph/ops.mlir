// Every graph op in its custom form round-trips: print -> parse -> print is
// identical, and the generic form parses to the same ops.
// RUN: gc-opt %s | filecheck %s
// RUN: gc-opt %s | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | gc-opt | filecheck %s

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<7xi32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %0 = graph.relu %x : tensor<4x8xf32>
  %0 = graph.relu %x : tensor<4x8xf32>
  // CHECK-NEXT: %1 = graph.sigmoid %0 : tensor<4x8xf32>
  %1 = graph.sigmoid %0 : tensor<4x8xf32>
  // CHECK-NEXT: %2 = graph.tanh %1 : tensor<4x8xf32>
  %2 = graph.tanh %1 : tensor<4x8xf32>
  // CHECK-NEXT: %3 = graph.exp %2 : tensor<4x8xf32>
  %3 = graph.exp %2 : tensor<4x8xf32>
  // CHECK-NEXT: %4 = graph.log %3 : tensor<4x8xf32>
  %4 = graph.log %3 : tensor<4x8xf32>
  // CHECK-NEXT: %5 = graph.sqrt %4 : tensor<4x8xf32>
  %5 = graph.sqrt %4 : tensor<4x8xf32>
  // CHECK-NEXT: %6 = graph.rsqrt %5 : tensor<4x8xf32>
  %6 = graph.rsqrt %5 : tensor<4x8xf32>
  // CHECK-NEXT: %7 = graph.abs %6 : tensor<4x8xf32>
  %7 = graph.abs %6 : tensor<4x8xf32>
  // CHECK-NEXT: %8 = graph.neg %7 : tensor<4x8xf32>
  %8 = graph.neg %7 : tensor<4x8xf32>
  // CHECK-NEXT: %9 = graph.erf %8 : tensor<4x8xf32>
  %9 = graph.erf %8 : tensor<4x8xf32>
  // CHECK-NEXT: %10 = graph.reciprocal %9 : tensor<4x8xf32>
  %10 = graph.reciprocal %9 : tensor<4x8xf32>
  // CHECK-NEXT: %11 = graph.square %10 : tensor<4x8xf32>
  %11 = graph.square %10 : tensor<4x8xf32>
  // CHECK-NEXT: %12 = graph.gelu %11 : tensor<4x8xf32>
  %12 = graph.gelu %11 : tensor<4x8xf32>
  // CHECK-NEXT: %13 = graph.gelu %12 {approximate = "tanh"} : tensor<4x8xf32>
  %13 = graph.gelu %12 {approximate = "tanh"} : tensor<4x8xf32>
  // CHECK-NEXT: %14 = graph.leaky_relu %13 {alpha = 2.000000e-01 : f32} : tensor<4x8xf32>
  %14 = graph.leaky_relu %13 {alpha = 0.2 : f32} : tensor<4x8xf32>
  // CHECK-NEXT: %15 = graph.clamp %14 {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32} : tensor<4x8xf32>
  %15 = graph.clamp %14 {min = -1.0 : f32, max = 1.0 : f32} : tensor<4x8xf32>
  // CHECK-NEXT: %16 = graph.cast %15 : tensor<4x8xf32> -> tensor<4x8xbf16>
  %16 = graph.cast %15 : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK-NEXT: %17 = graph.neg %i : tensor<7xi32>
  %17 = graph.neg %i : tensor<7xi32>
  // CHECK-NEXT: %18 = graph.bitcast %15 : tensor<4x8xf32> -> tensor<4x8xi32>
  %18 = graph.bitcast %15 : tensor<4x8xf32> -> tensor<4x8xi32>
  // CHECK-NEXT: %19 = graph.cast %15 : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
  %19 = graph.cast %15 : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
  // CHECK-NEXT: %20 = graph.bitcast %19 : tensor<4x8xf8E4M3FN> -> tensor<4x8xui8>
  %20 = graph.bitcast %19 : tensor<4x8xf8E4M3FN> -> tensor<4x8xui8>
  func.return %15 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %0 = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %1 = graph.sub %0, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %1 = graph.sub %0, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %2 = graph.mul %1, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = graph.mul %1, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %3 = graph.div %2, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = graph.div %2, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %4 = graph.pow %3, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %4 = graph.pow %3, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %5 = graph.maximum %c, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %5 = graph.maximum %c, %b : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %6 = graph.minimum %4, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = graph.minimum %4, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %7 = graph.greater %6, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %7 = graph.greater %6, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: %8 = graph.less %6, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
  %8 = graph.less %6, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: %9 = graph.equal %7, %8 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %9 = graph.equal %7, %8 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: %10 = graph.select %9, %6, %b : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %10 = graph.select %9, %6, %b : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %10 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bt: tensor<16x8xf32>, %batched: tensor<3x1x4x8xf32>, %w: tensor<5x8x16xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: %0 = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %0 = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %1 = graph.matmul %a, %bt {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %1 = graph.matmul %a, %bt {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: %2 = graph.matmul %batched, %w : (tensor<3x1x4x8xf32>, tensor<5x8x16xf32>) -> tensor<3x5x4x16xf32>
  %2 = graph.matmul %batched, %w : (tensor<3x1x4x8xf32>, tensor<5x8x16xf32>) -> tensor<3x5x4x16xf32>
  // CHECK-NEXT: %3 = graph.matmul %a, %a {transpose_a = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %3 = graph.matmul %a, %a {transpose_a = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  func.return %1 : tensor<4x16xf32>
}

// u8 x i8 (VNNI's operands) widens to i32.
// CHECK-LABEL: func.func @matmul_u8_i8
func.func @matmul_u8_i8(%a: tensor<4x8xui8>, %b: tensor<8x16xi8>) -> tensor<4x16xi32> {
  // CHECK-NEXT: %0 = graph.matmul %a, %b : (tensor<4x8xui8>, tensor<8x16xi8>) -> tensor<4x16xi32>
  %0 = graph.matmul %a, %b : (tensor<4x8xui8>, tensor<8x16xi8>) -> tensor<4x16xi32>
  func.return %0 : tensor<4x16xi32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %c: tensor<3xf32>, %q6: tensor<6x3x4xf32>) -> tensor<2xf32> {
  // CHECK-NEXT: %0 = graph.reduce_sum %x {axes = array<i64: 1, 2>} : tensor<2x3x4xf32> -> tensor<2xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 1, 2>} : tensor<2x3x4xf32> -> tensor<2xf32>
  // CHECK-NEXT: %1 = graph.reduce_mean %x {axes = array<i64: -1>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: -1>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
  // CHECK-NEXT: %2 = graph.reduce_max %x : tensor<2x3x4xf32> -> tensor<f32>
  %2 = graph.reduce_max %x : tensor<2x3x4xf32> -> tensor<f32>
  // CHECK-NEXT: %3 = graph.reduce_min %x {axes = array<i64: 0>} : tensor<2x3x4xf32> -> tensor<3x4xf32>
  %3 = graph.reduce_min %x {axes = array<i64: 0>} : tensor<2x3x4xf32> -> tensor<3x4xf32>
  // CHECK-NEXT: %4 = graph.reduce_prod %x {axes = array<i64: 0, 2>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %4 = graph.reduce_prod %x {axes = array<i64: 0, 2>, keep_dims = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  // CHECK-NEXT: %5 = graph.softmax %x : tensor<2x3x4xf32>
  %5 = graph.softmax %x {axis = -1 : i64} : tensor<2x3x4xf32>
  // CHECK-NEXT: %6 = graph.log_softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
  %6 = graph.log_softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
  // CHECK-NEXT: %7 = graph.layer_norm %x, %g, %g {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %7 = graph.layer_norm %x, %g, %g {axis = 1 : i64, epsilon = 0.001 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %x, %x, %x {scale = 5.000000e-01 : f32} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %att = graph.attention %x, %x, %x {scale = 0.5 : f32} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %x, %x, %x, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %att_masked = graph.attention %x, %x, %x, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %{{.*}} = graph.attention %q6, %x, %x : (tensor<6x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<6x3x4xf32>
  %att_grouped = graph.attention %q6, %x, %x : (tensor<6x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<6x3x4xf32>
  // CHECK-NEXT: %8 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %8 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>) -> tensor<4x2x3xf32> {
  // CHECK-NEXT: %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK-NEXT: %1 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK-NEXT: %2 = graph.broadcast_to %1 : tensor<6x4xf32> -> tensor<5x6x4xf32>
  %2 = graph.broadcast_to %1 : tensor<6x4xf32> -> tensor<5x6x4xf32>
  // CHECK-NEXT: %3 = graph.concat %x, %y, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  %3 = graph.concat %x, %y, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  // CHECK-NEXT: %4 = graph.slice %3 {starts = array<i64: 0, 1, 0>, ends = array<i64: 2, 11, 4>, steps = array<i64: 1, 3, 2>} : tensor<2x11x4xf32> -> tensor<2x4x2xf32>
  %4 = graph.slice %3 {starts = array<i64: 0, 1, 0>, ends = array<i64: 2, 11, 4>, steps = array<i64: 1, 3, 2>} : tensor<2x11x4xf32> -> tensor<2x4x2xf32>
  // CHECK-NEXT: %5 = graph.slice %3 {starts = array<i64: 0, -3, 0>, ends = array<i64: 1, 100, 4>} : tensor<2x11x4xf32> -> tensor<1x3x4xf32>
  %5 = graph.slice %3 {starts = array<i64: 0, -3, 0>, ends = array<i64: 1, 100, 4>} : tensor<2x11x4xf32> -> tensor<1x3x4xf32>
  // CHECK-NEXT: %6 = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %6 = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK-NEXT: %7 = graph.constant dense<0> : tensor<2x3xi64>
  %7 = graph.constant dense<0> : tensor<2x3xi64>
  func.return %0 : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @convolution
func.func @convolution(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32> {
  // CHECK-NEXT: %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  // CHECK-NEXT: %1 = graph.conv2d %x, %w {dilations = array<i64: 2, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  %1 = graph.conv2d %x, %w {dilations = array<i64: 2, 2>, groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  // CHECK-NEXT: %2 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x4x4xf32>
  %2 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %3 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>} : tensor<1x4x9x9xf32> -> tensor<1x4x9x9xf32>
  %3 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>} : tensor<1x4x9x9xf32> -> tensor<1x4x9x9xf32>
  func.return %0 : tensor<1x6x5x5xf32>
}

// Channel-blocked tensors: the reorders and the convolution between them.
// CHECK-LABEL: func.func @channel_blocks
func.func @channel_blocks(%x: tensor<1x32x7x7xf32>, %w: tensor<32x32x3x3xf32>, %d: tensor<32x1x3x3xf32>, %g: tensor<32x16x1x1xf32>) -> tensor<1x32x4x4xf32> {
  // CHECK-NEXT: %0 = graph.to_blocked %x {block = 16 : i64} : tensor<1x32x7x7xf32> -> tensor<1x2x7x7x16xf32>
  %0 = graph.to_blocked %x {block = 16 : i64} : tensor<1x32x7x7xf32> -> tensor<1x2x7x7x16xf32>
  // CHECK-NEXT: %1 = graph.blocked_conv2d %0, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x7x7x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x2x4x4x16xf32>
  %1 = graph.blocked_conv2d %0, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x7x7x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x2x4x4x16xf32>
  // CHECK-NEXT: %2 = graph.blocked_conv2d %1, %d {padding = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x2x4x4x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x2x4x4x16xf32>
  %2 = graph.blocked_conv2d %1, %d {padding = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x2x4x4x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x2x4x4x16xf32>
  // CHECK-NEXT: %3 = graph.blocked_conv2d %2, %g {groups = 2 : i64} : (tensor<1x2x4x4x16xf32>, tensor<32x16x1x1xf32>) -> tensor<1x2x4x4x16xf32>
  %3 = graph.blocked_conv2d %2, %g {groups = 2 : i64} : (tensor<1x2x4x4x16xf32>, tensor<32x16x1x1xf32>) -> tensor<1x2x4x4x16xf32>
  // CHECK-NEXT: %4 = graph.from_blocked %3 : tensor<1x2x4x4x16xf32> -> tensor<1x32x4x4xf32>
  %4 = graph.from_blocked %3 : tensor<1x2x4x4x16xf32> -> tensor<1x32x4x4xf32>
  func.return %4 : tensor<1x32x4x4xf32>
}

// Channels a block does not divide: the last block is padded.
// CHECK-LABEL: func.func @padded_channel_blocks
func.func @padded_channel_blocks(%x: tensor<1x24x7x7xf32>, %w: tensor<40x24x1x1xf32>) -> tensor<1x40x7x7xf32> {
  // CHECK-NEXT: %0 = graph.to_blocked %x {block = 16 : i64} : tensor<1x24x7x7xf32> -> tensor<1x2x7x7x16xf32>
  %0 = graph.to_blocked %x {block = 16 : i64} : tensor<1x24x7x7xf32> -> tensor<1x2x7x7x16xf32>
  // CHECK-NEXT: %1 = graph.blocked_conv2d %0, %w : (tensor<1x2x7x7x16xf32>, tensor<40x24x1x1xf32>) -> tensor<1x3x7x7x16xf32>
  %1 = graph.blocked_conv2d %0, %w : (tensor<1x2x7x7x16xf32>, tensor<40x24x1x1xf32>) -> tensor<1x3x7x7x16xf32>
  // CHECK-NEXT: %2 = graph.from_blocked %1 : tensor<1x3x7x7x16xf32> -> tensor<1x40x7x7xf32>
  %2 = graph.from_blocked %1 : tensor<1x3x7x7x16xf32> -> tensor<1x40x7x7xf32>
  func.return %2 : tensor<1x40x7x7xf32>
}

// A narrow plain input into blocks (the result type gives the block), and
// pools of blocked tensors (each lane a channel).
// CHECK-LABEL: func.func @stem_blocks
func.func @stem_blocks(%x: tensor<1x3x16x16xf32>, %w: tensor<20x3x7x7xf32>) -> (tensor<1x3x4x4x8xf32>, tensor<1x3x8x8x8xf32>) {
  // CHECK-NEXT: %0 = graph.blocked_conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x3x16x16xf32>, tensor<20x3x7x7xf32>) -> tensor<1x3x8x8x8xf32>
  %0 = graph.blocked_conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x3x16x16xf32>, tensor<20x3x7x7xf32>) -> tensor<1x3x8x8x8xf32>
  // CHECK-NEXT: %1 = graph.max_pool2d %0 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8x8xf32> -> tensor<1x3x4x4x8xf32>
  %1 = graph.max_pool2d %0 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x8x8x8xf32> -> tensor<1x3x4x4x8xf32>
  // CHECK-NEXT: %2 = graph.avg_pool2d %0 {kernel = array<i64: 1, 1>} : tensor<1x3x8x8x8xf32> -> tensor<1x3x8x8x8xf32>
  %2 = graph.avg_pool2d %0 {kernel = array<i64: 1, 1>} : tensor<1x3x8x8x8xf32> -> tensor<1x3x8x8x8xf32>
  func.return %1, %2 : tensor<1x3x4x4x8xf32>, tensor<1x3x8x8x8xf32>
}

// Blocked formats are tensor encodings; plain tensors print without one.
// CHECK-LABEL: func.func @formats
// CHECK-SAME: tensor<64x32xf32, #graph.format<"KN" -> "NK16k16n">>
// CHECK-SAME: tensor<32x64xf32, #graph.format<"AB16b16a">>
func.func @formats(%w: tensor<64x32xf32, #graph.format<"KN" -> "NK16k16n">>, %v: tensor<32x64xf32, #graph.format<"AB16b16a">>) -> tensor<64x64xf32> {
  // CHECK-NEXT: %0 = graph.matmul %w, %v : (tensor<64x32xf32, #graph.format<"KN" -> "NK16k16n">>, tensor<32x64xf32, #graph.format<"AB16b16a">>) -> tensor<64x64xf32>
  %0 = graph.matmul %w, %v : (tensor<64x32xf32, #graph.format<"KN" -> "NK16k16n">>, tensor<32x64xf32, #graph.format<"AB16b16a">>) -> tensor<64x64xf32>
  func.return %0 : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @element_types
func.func @element_types(%a: tensor<3xf16>, %b: tensor<3xbf16>, %c: tensor<3xi64>, %d: tensor<3xi8>, %e: tensor<3xi1>) -> tensor<3xf16> {
  // CHECK-NEXT: graph.add %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %0 = graph.add %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  // CHECK-NEXT: graph.mul %b, %b : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  %1 = graph.mul %b, %b : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  // CHECK-NEXT: graph.sub %c, %c : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %2 = graph.sub %c, %c : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  // CHECK-NEXT: graph.maximum %d, %d : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %3 = graph.maximum %d, %d : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  // CHECK-NEXT: graph.select %e, %a, %a : (tensor<3xi1>, tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %4 = graph.select %e, %a, %a : (tensor<3xi1>, tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return %4 : tensor<3xf16>
}

// The generic form parses too.
// CHECK-LABEL: func.func @generic
func.func @generic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %0 = graph.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  %0 = "graph.softmax"(%x) <{axis = 1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
