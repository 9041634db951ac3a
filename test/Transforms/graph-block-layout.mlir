// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-block-layout{target=avx512})' | filecheck %s
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-block-layout{block=8})' | filecheck %s --check-prefix=BLOCK8

// A residual block: the blocked form flows from convolution to
// convolution through the bias adds, the relus and the residual add; one
// reorder in (shared by the first convolution and the residual), one out.
// The per-channel bias is reordered at compile time.
// CHECK-LABEL: func.func @residual
// CHECK:         %[[IN:.*]] = graph.to_blocked %x {block = 16 : i64} : tensor<1x32x8x8xf32> -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[C1:.*]] = graph.blocked_conv2d %[[IN]], %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<{{.*}}> : tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[A1:.*]] = graph.add %[[C1]], %[[B]] : (tensor<1x2x8x8x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[R1:.*]] = graph.relu %[[A1]] : tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[C2:.*]] = graph.blocked_conv2d %[[R1]], %w2 : (tensor<1x2x8x8x16xf32>, tensor<32x32x1x1xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[A2:.*]] = graph.add %[[C2]], %[[IN]] : (tensor<1x2x8x8x16xf32>, tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[R2:.*]] = graph.relu %[[A2]] : tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[OUT:.*]] = graph.from_blocked %[[R2]] : tensor<1x2x8x8x16xf32> -> tensor<1x32x8x8xf32>
// CHECK-NEXT:    func.return %[[OUT]]
// BLOCK8-LABEL: func.func @residual
// BLOCK8:         graph.to_blocked %x {block = 8 : i64} : tensor<1x32x8x8xf32> -> tensor<1x4x8x8x8xf32>
// BLOCK8-COUNT-2: graph.blocked_conv2d
// BLOCK8-COUNT-1: graph.from_blocked
func.func @residual(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = graph.constant dense<0.01> : tensor<32x32x3x3xf32>
  %w2 = graph.constant dense<0.02> : tensor<32x32x1x1xf32>
  %b = graph.constant dense<0.5> : tensor<32x1x1xf32>
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x32x8x8xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x8x8xf32>
  %1 = graph.add %0, %b : (tensor<1x32x8x8xf32>, tensor<32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %2 = graph.relu %1 : tensor<1x32x8x8xf32>
  %3 = graph.conv2d %2, %w2 : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %4 = graph.add %3, %x : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %5 = graph.relu %4 : tensor<1x32x8x8xf32>
  func.return %5 : tensor<1x32x8x8xf32>
}

// -----

// Depthwise convolutions are blocked too. An operand broadcast along the
// channels (a [1, 1, H, W] mask) keeps a block of one; a scalar stays as
// it is; a pooling op pools the blocks (each lane a channel).
// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[DW:.*]] = graph.blocked_conv2d %{{.*}}, %w {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x1x6x6x16xf32>, tensor<16x1x3x3xf32>) -> tensor<1x1x6x6x16xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.reshape %mask : tensor<1x1x6x6xf32> -> tensor<1x1x6x6x1xf32>
// CHECK-NEXT:    %[[MUL:.*]] = graph.mul %[[DW]], %[[M]] : (tensor<1x1x6x6x16xf32>, tensor<1x1x6x6x1xf32>) -> tensor<1x1x6x6x16xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.mul %[[MUL]], %s : (tensor<1x1x6x6x16xf32>, tensor<f32>) -> tensor<1x1x6x6x16xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.max_pool2d %[[S]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x1x6x6x16xf32> -> tensor<1x1x3x3x16xf32>
// CHECK-NEXT:    graph.from_blocked %[[P]] : tensor<1x1x3x3x16xf32> -> tensor<1x16x3x3xf32>
func.func @depthwise(%x: tensor<1x16x6x6xf32>, %mask: tensor<1x1x6x6xf32>, %s: tensor<f32>) -> tensor<1x16x3x3xf32> {
  %w = graph.constant dense<0.1> : tensor<16x1x3x3xf32>
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x6x6xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x6x6xf32>
  %1 = graph.mul %0, %mask : (tensor<1x16x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x16x6x6xf32>
  %2 = graph.mul %1, %s : (tensor<1x16x6x6xf32>, tensor<f32>) -> tensor<1x16x6x6xf32>
  %3 = graph.max_pool2d %2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x16x6x6xf32> -> tensor<1x16x3x3xf32>
  func.return %3 : tensor<1x16x3x3xf32>
}

// -----

// An RGB stem (fewer channels than a block) reads its plain input and
// writes blocks; its average pool runs on them.
// CHECK-LABEL: func.func @stem
// CHECK:         %[[C:.*]] = graph.blocked_conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x3x16x16xf32>, tensor<32x3x7x7xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.avg_pool2d %[[C]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x8x8x16xf32> -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[OUT:.*]] = graph.from_blocked %[[P]] : tensor<1x2x4x4x16xf32> -> tensor<1x32x4x4xf32>
// CHECK-NEXT:    func.return %[[OUT]]
// BLOCK8-LABEL: func.func @stem
// BLOCK8:         graph.blocked_conv2d %x, %w {{.*}} -> tensor<1x4x8x8x8xf32>
func.func @stem(%x: tensor<1x3x16x16xf32>) -> tensor<1x32x4x4xf32> {
  %w = graph.constant dense<0.1> : tensor<32x3x7x7xf32>
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>} : (tensor<1x3x16x16xf32>, tensor<32x3x7x7xf32>) -> tensor<1x32x8x8xf32>
  %1 = graph.avg_pool2d %0 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x32x8x8xf32> -> tensor<1x32x4x4xf32>
  func.return %1 : tensor<1x32x4x4xf32>
}

// -----

// Left plain: networks with weights that are not constants, grouped
// convolutions whose groups are not whole blocks (4 channels a group), or
// integer convolutions (then
// an RGB stem too, and narrow convolutions always: 3 channels in and out).
// CHECK-LABEL: func.func @plain
// CHECK-NOT:     blocked
// CHECK-COUNT-4: graph.conv2d
// CHECK-NOT:     blocked
// CHECK-LABEL: func.func @narrow
// CHECK-NOT:     blocked
// CHECK:         graph.conv2d
// CHECK-NOT:     blocked
func.func @plain(%x: tensor<1x3x8x8xf32>, %y: tensor<1x32x8x8xf32>, %v: tensor<32x32x1x1xf32>, %i: tensor<1x32x8x8xi32>) -> (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>, tensor<1x32x8x8xi32>) {
  %w = graph.constant dense<0.1> : tensor<32x3x1x1xf32>
  %g = graph.constant dense<0.1> : tensor<32x4x1x1xf32>
  %k = graph.constant dense<1> : tensor<32x32x1x1xi32>
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<32x3x1x1xf32>) -> tensor<1x32x8x8xf32>
  %1 = graph.conv2d %y, %v : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %2 = graph.conv2d %y, %g {groups = 8 : i64} : (tensor<1x32x8x8xf32>, tensor<32x4x1x1xf32>) -> tensor<1x32x8x8xf32>
  %3 = graph.conv2d %i, %k : (tensor<1x32x8x8xi32>, tensor<32x32x1x1xi32>) -> tensor<1x32x8x8xi32>
  func.return %0, %1, %2, %3 : tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>, tensor<1x32x8x8xi32>
}

func.func @narrow(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %w = graph.constant dense<0.1> : tensor<3x3x3x3xf32>
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

// An element-wise op whose operand broadcasts the blocked value (a
// [N, C, 1, 1] result against a [N, C, H, W] one) stays plain, after a reorder.
// CHECK-LABEL: func.func @broadcast_blocked
// CHECK:         graph.blocked_conv2d
// CHECK-NEXT:    %[[P:.*]] = graph.from_blocked
// CHECK-NEXT:    graph.add %[[P]], %big : (tensor<1x16x1x1xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
func.func @broadcast_blocked(%x: tensor<1x16x1x1xf32>, %big: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = graph.constant dense<0.1> : tensor<16x16x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x16x1x1xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x1x1xf32>
  %1 = graph.add %0, %big : (tensor<1x16x1x1xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  func.return %1 : tensor<1x16x4x4xf32>
}

// -----

// Channels that a block does not divide (24 with blocks of 16) are padded
// to whole blocks: 2 blocks, the second with 8 padding lanes, which
// to_blocked fills with zeros, the bias's constant too, and from_blocked
// drops. With blocks of 8 the same layers fill 3 whole blocks.
// CHECK-LABEL: func.func @padded
// CHECK:         %[[IN:.*]] = graph.to_blocked %x {block = 16 : i64} : tensor<1x32x8x8xf32> -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[C1:.*]] = graph.blocked_conv2d %[[IN]], %w : (tensor<1x2x8x8x16xf32>, tensor<24x32x1x1xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<{{\[\[\[\[\[}}5.000000e-01, {{.*}}, 5.000000e-01]]], {{\[\[\[}}5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]]]> : tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[C1]], %[[B]] : (tensor<1x2x8x8x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[A]] : tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[C2:.*]] = graph.blocked_conv2d %[[R]], %w2 : (tensor<1x2x8x8x16xf32>, tensor<24x24x1x1xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[OUT:.*]] = graph.from_blocked %[[C2]] : tensor<1x2x8x8x16xf32> -> tensor<1x24x8x8xf32>
// CHECK-NEXT:    func.return %[[OUT]]
// BLOCK8-LABEL: func.func @padded
// BLOCK8:         graph.blocked_conv2d %{{.*}}, %w : (tensor<1x4x8x8x8xf32>, tensor<24x32x1x1xf32>) -> tensor<1x3x8x8x8xf32>
// BLOCK8:         graph.from_blocked %{{.*}} : tensor<1x3x8x8x8xf32> -> tensor<1x24x8x8xf32>
func.func @padded(%x: tensor<1x32x8x8xf32>) -> tensor<1x24x8x8xf32> {
  %w = graph.constant dense<0.01> : tensor<24x32x1x1xf32>
  %w2 = graph.constant dense<0.02> : tensor<24x24x1x1xf32>
  %b = graph.constant dense<0.5> : tensor<24x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x32x8x8xf32>, tensor<24x32x1x1xf32>) -> tensor<1x24x8x8xf32>
  %1 = graph.add %0, %b : (tensor<1x24x8x8xf32>, tensor<24x1x1xf32>) -> tensor<1x24x8x8xf32>
  %2 = graph.relu %1 : tensor<1x24x8x8xf32>
  %3 = graph.conv2d %2, %w2 : (tensor<1x24x8x8xf32>, tensor<24x24x1x1xf32>) -> tensor<1x24x8x8xf32>
  func.return %3 : tensor<1x24x8x8xf32>
}

// -----

// One layer that cannot be blocked (groups of 4 channels) keeps the whole
// function plain: islands of blocked layers would pay a reorder at each end.
// CHECK-LABEL: func.func @islands
// CHECK-NOT:     blocked
// BLOCK8-LABEL: func.func @islands
// BLOCK8-NOT:     blocked
func.func @islands(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = graph.constant dense<0.01> : tensor<32x32x1x1xf32>
  %g = graph.constant dense<0.02> : tensor<32x4x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %1 = graph.relu %0 : tensor<1x32x8x8xf32>
  %2 = graph.conv2d %1, %g {groups = 8 : i64} : (tensor<1x32x8x8xf32>, tensor<32x4x1x1xf32>) -> tensor<1x32x8x8xf32>
  func.return %2 : tensor<1x32x8x8xf32>
}

// -----

// Groups of whole blocks (RegNet's, ResNeXt's wide ones) are blocked, each
// group reducing over its own blocks: 2 groups of 16 channels with 16
// lanes and with 8; 4 groups of 8 only with 8 lanes, which then blocks the
// whole chain (with 16 none of it).
// CHECK-LABEL: func.func @grouped
// CHECK:         graph.blocked_conv2d %{{.*}}, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x8x8x16xf32>, tensor<32x16x3x3xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-LABEL: func.func @grouped_in_eights
// CHECK-NOT:     blocked
// BLOCK8-LABEL: func.func @grouped
// BLOCK8:         graph.blocked_conv2d %{{.*}}, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x4x8x8x8xf32>
// BLOCK8-LABEL: func.func @grouped_in_eights
// BLOCK8:         graph.blocked_conv2d %{{.*}}, %v {groups = 4 : i64} : (tensor<1x4x8x8x8xf32>, tensor<32x8x1x1xf32>) -> tensor<1x4x8x8x8xf32>
func.func @grouped(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = graph.constant dense<0.02> : tensor<32x16x3x3xf32>
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x32x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  %1 = graph.relu %0 : tensor<1x32x8x8xf32>
  func.return %1 : tensor<1x32x8x8xf32>
}

func.func @grouped_in_eights(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %v = graph.constant dense<0.02> : tensor<32x8x1x1xf32>
  %0 = graph.conv2d %x, %v {groups = 4 : i64} : (tensor<1x32x8x8xf32>, tensor<32x8x1x1xf32>) -> tensor<1x32x8x8xf32>
  func.return %0 : tensor<1x32x8x8xf32>
}

// -----

// A reduction over every pixel (a global pool, squeeze-and-excitation's
// mean) runs on the blocked tensor, lane by lane: the sigmoid and the
// channel-wise scale after it stay blocked, and a pooled result is
// reordered back as one pixel per channel, to 24 channels. A reduction
// over the channels takes the plain form.
// CHECK-LABEL: func.func @pixel_reductions
// CHECK:         %[[C:.*]] = graph.blocked_conv2d
// CHECK-NEXT:    %[[M:.*]] = graph.reduce_mean %[[C]] {axes = array<i64: 2, 3>, keep_dims = true} : tensor<1x2x8x8x16xf32> -> tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.sigmoid %[[M]] : tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = graph.mul %[[C]], %[[S]] : (tensor<1x2x8x8x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[PLAIN:.*]] = graph.from_blocked %[[SCALED]] : tensor<1x2x8x8x16xf32> -> tensor<1x24x8x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = graph.reduce_max %[[SCALED]] {axes = array<i64: 2, 3>} : tensor<1x2x8x8x16xf32> -> tensor<1x2x16xf32>
// CHECK-NEXT:    %[[PM:.*]] = graph.from_blocked %[[MAX]] : tensor<1x2x16xf32> -> tensor<1x24xf32>
// CHECK-NEXT:    %[[SUM:.*]] = graph.reduce_sum %[[PLAIN]] {axes = array<i64: 1>} : tensor<1x24x8x8xf32> -> tensor<1x8x8xf32>
// CHECK-NEXT:    func.return %[[PM]], %[[SUM]]
// BLOCK8-LABEL: func.func @pixel_reductions
// BLOCK8:         graph.reduce_mean %{{.*}} {axes = array<i64: 2, 3>, keep_dims = true} : tensor<1x3x8x8x8xf32> -> tensor<1x3x1x1x8xf32>
func.func @pixel_reductions(%x: tensor<1x32x8x8xf32>) -> (tensor<1x24xf32>, tensor<1x8x8xf32>) {
  %w = graph.constant dense<0.01> : tensor<24x32x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x32x8x8xf32>, tensor<24x32x1x1xf32>) -> tensor<1x24x8x8xf32>
  %1 = graph.reduce_mean %0 {axes = array<i64: 2, 3>, keep_dims = true} : tensor<1x24x8x8xf32> -> tensor<1x24x1x1xf32>
  %2 = graph.sigmoid %1 : tensor<1x24x1x1xf32>
  %3 = graph.mul %0, %2 : (tensor<1x24x8x8xf32>, tensor<1x24x1x1xf32>) -> tensor<1x24x8x8xf32>
  %4 = graph.reduce_max %3 {axes = array<i64: -1, -2>} : tensor<1x24x8x8xf32> -> tensor<1x24xf32>
  %5 = graph.reduce_sum %3 {axes = array<i64: 1>} : tensor<1x24x8x8xf32> -> tensor<1x8x8xf32>
  func.return %4, %5 : tensor<1x24xf32>, tensor<1x8x8xf32>
}

// -----

// A u8 x s8 convolution (graph-integer-matmul's) is blocked whatever its
// input channels (its tiles read the words holding them: one for an RGB
// stem), keeping its pad value; i32 sums come out blocked.
// CHECK-LABEL: func.func @byte_quads
// CHECK:         %[[IN:.*]] = graph.to_blocked %x {block = 16 : i64} : tensor<1x3x8x8xui8> -> tensor<1x1x8x8x16xui8>
// CHECK-NEXT:    %[[C:.*]] = graph.blocked_conv2d %[[IN]], %w {padding = array<i64: 1, 1, 1, 1>, pad_value = 9 : i64} : (tensor<1x1x8x8x16xui8>, tensor<16x3x3x3xi8>) -> tensor<1x1x8x8x16xi32>
// CHECK-NEXT:    %[[OUT:.*]] = graph.from_blocked %[[C]] : tensor<1x1x8x8x16xi32> -> tensor<1x16x8x8xi32>
// BLOCK8-LABEL: func.func @byte_quads
// BLOCK8:         graph.blocked_conv2d %{{.*}} : (tensor<1x1x8x8x8xui8>, tensor<16x3x3x3xi8>) -> tensor<1x2x8x8x8xi32>
func.func @byte_quads(%x: tensor<1x3x8x8xui8>) -> tensor<1x16x8x8xi32> {
  %w = graph.constant dense<3> : tensor<16x3x3x3xi8>
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, pad_value = 9 : i64} : (tensor<1x3x8x8xui8>, tensor<16x3x3x3xi8>) -> tensor<1x16x8x8xi32>
  func.return %y : tensor<1x16x8x8xi32>
}

// -----

// Other integer convolutions (i16 values) stay plain.
// CHECK-LABEL: func.func @integer_pairs_stay_plain
// CHECK-NOT:     blocked
// BLOCK8-LABEL: func.func @integer_pairs_stay_plain
// BLOCK8-NOT:     blocked
func.func @integer_pairs_stay_plain(%x: tensor<1x16x8x8xi16>) -> tensor<1x16x6x6xi32> {
  %w = graph.constant dense<3> : tensor<16x16x3x3xi16>
  %y = graph.conv2d %x, %w : (tensor<1x16x8x8xi16>, tensor<16x16x3x3xi16>) -> tensor<1x16x6x6xi32>
  func.return %y : tensor<1x16x6x6xi32>
}

// -----

// A widening bf16 convolution (graph-bf16-fpmath's) is blocked in blocks of
// 16 channels, its bf16 pairs' tiles (conv_amx.py) taking them. With
// 8-channel blocks it stays plain.
// CHECK-LABEL: func.func @bf16_pairs
// CHECK:         %[[IN:.*]] = graph.to_blocked %r {block = 16 : i64} : tensor<1x32x8x8xbf16> -> tensor<1x2x8x8x16xbf16>
// CHECK-NEXT:    %[[C:.*]] = graph.blocked_conv2d %[[IN]], %w : (tensor<1x2x8x8x16xbf16>, tensor<16x32x3x3xbf16>) -> tensor<1x1x6x6x16xf32>
// CHECK-NEXT:    graph.from_blocked %[[C]] : tensor<1x1x6x6x16xf32> -> tensor<1x16x6x6xf32>
// BLOCK8-LABEL: func.func @bf16_pairs
// BLOCK8-NOT:     blocked
func.func @bf16_pairs(%x: tensor<1x32x8x8xf32>) -> tensor<1x16x6x6xf32> {
  %w = graph.constant dense<0.5> : tensor<16x32x3x3xbf16>
  %r = graph.cast %x : tensor<1x32x8x8xf32> -> tensor<1x32x8x8xbf16>
  %y = graph.conv2d %r, %w : (tensor<1x32x8x8xbf16>, tensor<16x32x3x3xbf16>) -> tensor<1x16x6x6xf32>
  func.return %y : tensor<1x16x6x6xf32>
}
