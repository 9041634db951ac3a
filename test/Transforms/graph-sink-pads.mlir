// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-sink-pads)' | filecheck %s
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-sink-pads,func.func(canonicalize))' | filecheck %s --check-prefix=MERGED

// A zero pad before a quantize -> dequantize pair moves below it, its
// border what the pair makes of 0 (3 after quantizing, 0 again after
// dequantizing), and canonicalize then makes it the convolution's padding.
// CHECK-LABEL: func.func @pad_through_quantization
// CHECK:         %[[D:.*]] = graph.div %x, %s : (tensor<1x16x8x8xf32>, tensor<f32>) -> tensor<1x16x8x8xf32>
// CHECK:         %[[Q:.*]] = graph.cast %{{.*}} : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xui8>
// CHECK:         %[[DQ:.*]] = graph.mul %{{.*}}, %s : (tensor<1x16x8x8xf32>, tensor<f32>) -> tensor<1x16x8x8xf32>
// CHECK-NEXT:    %dq = graph.pad %[[DQ]] {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>} : tensor<1x16x8x8xf32> -> tensor<1x16x9x9xf32>
// CHECK-NEXT:    graph.conv2d %dq, %w
// MERGED-LABEL: func.func @pad_through_quantization
// MERGED-NOT:     graph.pad
// MERGED:         graph.conv2d %{{.*}}, %w {strides = array<i64: 2, 2>, groups = 16 : i64, padding = array<i64: 0, 0, 1, 1>}
func.func @pad_through_quantization(%x: tensor<1x16x8x8xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<3.0> : tensor<f32>
  %p = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>} : tensor<1x16x8x8xf32> -> tensor<1x16x9x9xf32>
  %d = graph.div %p, %s : (tensor<1x16x9x9xf32>, tensor<f32>) -> tensor<1x16x9x9xf32>
  %r = graph.round %d : tensor<1x16x9x9xf32>
  %a = graph.add %r, %z : (tensor<1x16x9x9xf32>, tensor<f32>) -> tensor<1x16x9x9xf32>
  %q = graph.cast %a : tensor<1x16x9x9xf32> -> tensor<1x16x9x9xui8>
  %f = graph.cast %q : tensor<1x16x9x9xui8> -> tensor<1x16x9x9xf32>
  %c = graph.sub %f, %z : (tensor<1x16x9x9xf32>, tensor<f32>) -> tensor<1x16x9x9xf32>
  %dq = graph.mul %c, %s : (tensor<1x16x9x9xf32>, tensor<f32>) -> tensor<1x16x9x9xf32>
  %y = graph.conv2d %dq, %w {strides = array<i64: 2, 2>, groups = 16 : i64} : (tensor<1x16x9x9xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// -----

// Into a u8 convolution: the border becomes the zero point (3), the
// convolution's pad value, and merges into it.
// MERGED-LABEL: func.func @pad_into_pad_value
// MERGED-NOT:     graph.pad
// MERGED:         graph.conv2d %{{.*}}, %w {pad_value = 3 : i64, padding = array<i64: 1, 1, 1, 1>}
func.func @pad_into_pad_value(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x3x3xi8>) -> tensor<1x16x8x8xi32> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<3.0> : tensor<f32>
  %p = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<1x16x8x8xf32> -> tensor<1x16x10x10xf32>
  %d = graph.div %p, %s : (tensor<1x16x10x10xf32>, tensor<f32>) -> tensor<1x16x10x10xf32>
  %a = graph.add %d, %z : (tensor<1x16x10x10xf32>, tensor<f32>) -> tensor<1x16x10x10xf32>
  %q = graph.cast %a : tensor<1x16x10x10xf32> -> tensor<1x16x10x10xui8>
  %y = graph.conv2d %q, %w {pad_value = 3 : i64} : (tensor<1x16x10x10xui8>, tensor<16x16x3x3xi8>) -> tensor<1x16x8x8xi32>
  func.return %y : tensor<1x16x8x8xi32>
}

// -----

// A pad with another user, or beside a per-channel operand (its border
// would differ by channel), stays.
// CHECK-LABEL: func.func @pads_that_stay
// CHECK:         %p = graph.pad %x
// CHECK-NEXT:    %d = graph.div %p, %s
// CHECK-NEXT:    %e = graph.mul %p, %channels
func.func @pads_that_stay(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %channels = graph.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %p = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x9x9xf32>
  %d = graph.div %p, %s : (tensor<1x4x9x9xf32>, tensor<f32>) -> tensor<1x4x9x9xf32>
  %e = graph.mul %p, %channels : (tensor<1x4x9x9xf32>, tensor<4x1x1xf32>) -> tensor<1x4x9x9xf32>
  func.return %d, %e : tensor<1x4x9x9xf32>, tensor<1x4x9x9xf32>
}
