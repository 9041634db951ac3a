// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-bf16-fpmath)' | filecheck %s
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-bf16-fpmath,graph-constant-fold)' | filecheck %s --check-prefix=FOLD
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-bf16-fpmath{convolutions=true})' | filecheck %s --check-prefix=CONV

// A layer (constant weight, here transposed as a Linear's): both operands
// are cast to bf16 and the matmul widens to f32. The weight's cast folds
// into a bf16 constant.
// CHECK-LABEL: func.func @linear
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT:    %w = graph.constant
// CHECK-NEXT:    %[[W:.*]] = graph.cast %w : tensor<16x8xf32> -> tensor<16x8xbf16>
// CHECK-NEXT:    %y = graph.matmul %[[X]], %[[W]] {transpose_b = true} : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xf32>
// FOLD-LABEL: func.func @linear
// FOLD:         graph.constant dense<{{.*}}> : tensor<16x8xbf16>
// FOLD-NOT:     graph.cast %w
func.func @linear(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = graph.constant dense<0.3> : tensor<16x8xf32>
  %y = graph.matmul %x, %w {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// Two layers reading one activation share its cast; a weight computed from
// constants (a transpose) is a weight too.
// CHECK-LABEL: func.func @shared_activation
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NOT:     graph.cast %x
// CHECK:         graph.matmul %[[X]], %{{.*}} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xf32>
// CHECK:         graph.matmul %[[X]], %{{.*}} : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
func.func @shared_activation(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x2xf32>) {
  %w = graph.constant dense<0.5> : tensor<8x16xf32>
  %v = graph.constant dense<0.25> : tensor<2x8xf32>
  %vt = graph.transpose %v {perm = array<i64: 1, 0>} : tensor<2x8xf32> -> tensor<8x2xf32>
  %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %z = graph.matmul %x, %vt : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  func.return %y, %z : tensor<4x16xf32>, tensor<4x2xf32>
}

// -----

// A product of two activations (attention's scores) stays f32, and so
// does a matmul that is not f32.
// CHECK-LABEL: func.func @activations
// CHECK-NOT:     bf16
// CHECK:         func.return
func.func @activations(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %a: tensor<4x8xf16>) -> (tensor<4x4xf32>, tensor<4x2xf16>) {
  %s = graph.matmul %q, %k {transpose_b = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %w = graph.constant dense<1.0> : tensor<8x2xf16>
  %h = graph.matmul %a, %w : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  func.return %s, %h : tensor<4x4xf32>, tensor<4x2xf16>
}

// -----

// A convolution with a constant filter stays f32 by default. Asked for
// (convolutions=true, which the driver gives on AMX-BF16 targets): input and
// filter in bf16, the result f32; its attributes are kept.
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %f = graph.constant
// CHECK-NEXT:    %c = graph.conv2d %i, %f {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x5x5xf32>, tensor<3x16x3x3xf32>) -> tensor<1x3x5x5xf32>
// CONV-LABEL: func.func @conv
// CONV-NEXT:    %[[I:.*]] = graph.cast %i : tensor<1x16x5x5xf32> -> tensor<1x16x5x5xbf16>
// CONV-NEXT:    %f = graph.constant
// CONV-NEXT:    %[[F:.*]] = graph.cast %f : tensor<3x16x3x3xf32> -> tensor<3x16x3x3xbf16>
// CONV-NEXT:    %c = graph.conv2d %[[I]], %[[F]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x5x5xbf16>, tensor<3x16x3x3xbf16>) -> tensor<1x3x5x5xf32>
func.func @conv(%i: tensor<1x16x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %f = graph.constant dense<0.25> : tensor<3x16x3x3xf32>
  %c = graph.conv2d %i, %f {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x5x5xf32>, tensor<3x16x3x3xf32>) -> tensor<1x3x5x5xf32>
  func.return %c : tensor<1x3x5x5xf32>
}

// -----

// Even asked for, a convolution of fewer input channels than a block (an
// RGB stem) and a depthwise one stay f32: the tiles would fill a 64-byte
// row with a few channels, or leave the blocked layout.
// CONV-LABEL: func.func @narrow_and_depthwise
// CONV-NOT:     bf16
// CONV:         func.return
func.func @narrow_and_depthwise(%i: tensor<1x3x8x8xf32>, %d: tensor<1x32x8x8xf32>) -> (tensor<1x16x6x6xf32>, tensor<1x32x6x6xf32>) {
  %f = graph.constant dense<0.25> : tensor<16x3x3x3xf32>
  %c = graph.conv2d %i, %f : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  %g = graph.constant dense<0.5> : tensor<32x1x3x3xf32>
  %e = graph.conv2d %d, %g {groups = 32 : i64} : (tensor<1x32x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x6x6xf32>
  func.return %c, %e : tensor<1x16x6x6xf32>, tensor<1x32x6x6xf32>
}

// -----

// A grouped convolution (not depthwise) keeps the whole network plain
// (graph-block-layout), where bf16 convolutions would run on the f32
// kernels: then no convolution of the function is rounded.
// CONV-LABEL: func.func @grouped_network
// CONV-NOT:     bf16
// CONV:         func.return
func.func @grouped_network(%i: tensor<1x32x8x8xf32>) -> tensor<1x32x6x6xf32> {
  %f = graph.constant dense<0.25> : tensor<32x32x1x1xf32>
  %c = graph.conv2d %i, %f : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %g = graph.constant dense<0.5> : tensor<32x16x3x3xf32>
  %e = graph.conv2d %c, %g {groups = 2 : i64} : (tensor<1x32x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x6x6xf32>
  func.return %e : tensor<1x32x6x6xf32>
}
