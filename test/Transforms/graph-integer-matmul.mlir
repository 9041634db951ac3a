// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-integer-matmul{convolutions=all})' | filecheck %s
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-integer-matmul{target=avx2})' | filecheck %s --check-prefix=AVX2

// A u8 activation (one scale, one zero point) times i8 weights with one
// scale per output column: an integer matmul on the 8-bit values, the zero
// point times B's column sums subtracted (computed before the matmul, so that
// graph-fuse makes the subtraction part of its epilogue), then one f32 multiply.
// CHECK-LABEL: func.func @per_column
// CHECK:         %qb = graph.constant
// CHECK-NEXT:    %[[ZA16:.*]] = graph.cast %za : tensor<ui8> -> tensor<i16>
// CHECK-NEXT:    %[[B32:.*]] = graph.cast %qb : tensor<8x16xi8> -> tensor<8x16xi32>
// CHECK-NEXT:    %[[COLUMNS:.*]] = graph.reduce_sum %[[B32]] {axes = array<i64: -2>, keep_dims = true} : tensor<8x16xi32> -> tensor<1x16xi32>
// CHECK-NEXT:    %[[ZA:.*]] = graph.cast %[[ZA16]] : tensor<i16> -> tensor<i32>
// CHECK-NEXT:    %[[SHARE:.*]] = graph.mul %[[ZA]], %[[COLUMNS]] : (tensor<i32>, tensor<1x16xi32>) -> tensor<1x16xi32>
// CHECK-NEXT:    %[[ACC:.*]] = graph.matmul %qa, %qb : (tensor<4x8xui8>, tensor<8x16xi8>) -> tensor<4x16xi32>
// CHECK-NEXT:    %[[SUM:.*]] = graph.sub %[[ACC]], %[[SHARE]] : (tensor<4x16xi32>, tensor<1x16xi32>) -> tensor<4x16xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[SUM]] : tensor<4x16xi32> -> tensor<4x16xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.mul %sa, %sb : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[F]], %[[S]] : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @per_column(%qa: tensor<4x8xui8>, %za: tensor<ui8>, %sa: tensor<f32>, %sb: tensor<16xf32>) -> tensor<4x16xf32> {
  %qb = graph.constant dense<3> : tensor<8x16xi8>
  %af = graph.cast %qa : tensor<4x8xui8> -> tensor<4x8xf32>
  %zaf = graph.cast %za : tensor<ui8> -> tensor<f32>
  %ac = graph.sub %af, %zaf : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %a = graph.mul %ac, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %bf = graph.cast %qb : tensor<8x16xi8> -> tensor<8x16xf32>
  %b = graph.mul %bf, %sb : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// A transposed B (a Gemm weight [N, K]) with per-row scales [N, 1]: the
// scales become one per output column. The i8 activation is shifted to u8
// (zero point 128); B's sums along its rows become one per column.
// CHECK-LABEL: func.func @transposed
// CHECK:         %[[COLUMNS:.*]] = graph.reshape %sb : tensor<16x1xf32> -> tensor<16xf32>
// CHECK:         %[[SHIFTED:.*]] = graph.add %{{.*}}, %[[OFFSET:.*]] : (tensor<4x8xi16>, tensor<i16>) -> tensor<4x8xi16>
// CHECK-NEXT:    %[[A:.*]] = graph.cast %[[SHIFTED]] : tensor<4x8xi16> -> tensor<4x8xui8>
// CHECK:         graph.reduce_sum %{{.*}} {axes = array<i64: -1>, keep_dims = true} : tensor<16x8xi32> -> tensor<16x1xi32>
// CHECK-NEXT:    graph.reshape %{{.*}} : tensor<16x1xi32> -> tensor<1x16xi32>
// CHECK-NEXT:    graph.cast %[[OFFSET]] : tensor<i16> -> tensor<i32>
// CHECK:         graph.matmul %[[A]], %qb {transpose_b = true} : (tensor<4x8xui8>, tensor<16x8xi8>) -> tensor<4x16xi32>
// CHECK:         graph.mul %sa, %[[COLUMNS]] : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
func.func @transposed(%qa: tensor<4x8xi8>, %sa: tensor<f32>, %sb: tensor<16x1xf32>) -> tensor<4x16xf32> {
  %qb = graph.constant dense<-2> : tensor<16x8xi8>
  %af = graph.cast %qa : tensor<4x8xi8> -> tensor<4x8xf32>
  %a = graph.mul %af, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %bf = graph.cast %qb : tensor<16x8xi8> -> tensor<16x8xf32>
  %b = graph.mul %bf, %sb : (tensor<16x8xf32>, tensor<16x1xf32>) -> tensor<16x8xf32>
  %y = graph.matmul %a, %b {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// Left alone: a per-row scale of A (it does not factor out of the sum as
// one value), an f32 operand, 16-bit quantized values, and a B computed at
// run time (the integer kernels pack B at compile time).
// CHECK-LABEL: func.func @negative
// CHECK-NOT:     xi32>
// CHECK-COUNT-4: graph.matmul %{{.*}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
func.func @negative(%qa: tensor<4x8xi8>, %sa_rows: tensor<4x1xf32>, %sa: tensor<f32>, %x: tensor<4x8xf32>, %sb: tensor<f32>, %qa16: tensor<4x8xi16>, %qr: tensor<8x16xi8>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %qb = graph.constant dense<1> : tensor<8x16xi8>
  %af = graph.cast %qa : tensor<4x8xi8> -> tensor<4x8xf32>
  %a_rows = graph.mul %af, %sa_rows : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %bf = graph.cast %qb : tensor<8x16xi8> -> tensor<8x16xf32>
  %b = graph.mul %bf, %sb : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %0 = graph.matmul %a_rows, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = graph.matmul %x, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %a16f = graph.cast %qa16 : tensor<4x8xi16> -> tensor<4x8xf32>
  %a16 = graph.mul %a16f, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.matmul %a16, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %af8 = graph.mul %af, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %rf = graph.cast %qr : tensor<8x16xi8> -> tensor<8x16xf32>
  %r = graph.mul %rf, %sb : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %3 = graph.matmul %af8, %r : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %0, %1, %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// MatMulInteger as the importer builds it, with every zero point: an i8 A
// (shifted to u8) and a u8 B (shifted to i8, zero point - 128), one zero
// point per row of A and per column of B. Both sums are subtracted and
// K * za * zb added back.
// CHECK-LABEL: func.func @zero_points
// CHECK:         %[[A:.*]] = graph.cast %{{.*}} : tensor<4x8xi16> -> tensor<4x8xui8>
// CHECK:         %[[B:.*]] = graph.cast %{{.*}} : tensor<8x16xi16> -> tensor<8x16xi8>
// CHECK:         graph.reduce_sum %{{.*}} {axes = array<i64: -2>, keep_dims = true} : tensor<8x16xi32> -> tensor<1x16xi32>
// CHECK:         %[[COLUMNS:.*]] = graph.mul %{{.*}} : (tensor<4x1xi32>, tensor<1x16xi32>) -> tensor<4x16xi32>
// CHECK:         graph.reduce_sum %{{.*}} {axes = array<i64: -1>, keep_dims = true} : tensor<4x8xi32> -> tensor<4x1xi32>
// CHECK:         %[[ROWS:.*]] = graph.mul %{{.*}} : (tensor<16xi32>, tensor<4x1xi32>) -> tensor<4x16xi32>
// CHECK:         %[[K:.*]] = graph.constant dense<8> : tensor<i32>
// CHECK-NEXT:    %[[TERM:.*]] = graph.mul %{{.*}}, %[[K]] : (tensor<4x16xi32>, tensor<i32>) -> tensor<4x16xi32>
// CHECK-NEXT:    %[[ACC:.*]] = graph.matmul %[[A]], %[[B]] : (tensor<4x8xui8>, tensor<8x16xi8>) -> tensor<4x16xi32>
// CHECK-NEXT:    %[[S1:.*]] = graph.sub %[[ACC]], %[[COLUMNS]] : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK-NEXT:    %[[S2:.*]] = graph.sub %[[S1]], %[[ROWS]] : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %[[S2]], %[[TERM]] : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @zero_points(%qa: tensor<4x8xi8>, %za: tensor<4x1xi16>, %zb: tensor<16xi16>) -> tensor<4x16xi32> {
  %qb = graph.constant dense<200> : tensor<8x16xui8>
  %a16 = graph.cast %qa : tensor<4x8xi8> -> tensor<4x8xi16>
  %a = graph.sub %a16, %za : (tensor<4x8xi16>, tensor<4x1xi16>) -> tensor<4x8xi16>
  %b16 = graph.cast %qb : tensor<8x16xui8> -> tensor<8x16xi16>
  %b = graph.sub %b16, %zb : (tensor<8x16xi16>, tensor<16xi16>) -> tensor<8x16xi16>
  %y = graph.matmul %a, %b : (tensor<4x8xi16>, tensor<8x16xi16>) -> tensor<4x16xi32>
  func.return %y : tensor<4x16xi32>
}

// -----

// Left alone: a zero point that varies along K (it does not factor out of
// the sum) and 16-bit values.
// CHECK-LABEL: func.func @integer_negative
// CHECK-NOT:     xui8>, tensor<
// CHECK-COUNT-2: graph.matmul %{{.*}} : (tensor<4x8xi16>, tensor<8x16xi16>) -> tensor<4x16xi32>
func.func @integer_negative(%qa: tensor<4x8xui8>, %za_k: tensor<1x8xi16>, %x: tensor<4x8xi16>) -> (tensor<4x16xi32>, tensor<4x16xi32>) {
  %qb = graph.constant dense<1> : tensor<8x16xi8>
  %a16 = graph.cast %qa : tensor<4x8xui8> -> tensor<4x8xi16>
  %a = graph.sub %a16, %za_k : (tensor<4x8xi16>, tensor<1x8xi16>) -> tensor<4x8xi16>
  %b = graph.cast %qb : tensor<8x16xi8> -> tensor<8x16xi16>
  %0 = graph.matmul %a, %b : (tensor<4x8xi16>, tensor<8x16xi16>) -> tensor<4x16xi32>
  %1 = graph.matmul %x, %b : (tensor<4x8xi16>, tensor<8x16xi16>) -> tensor<4x16xi32>
  func.return %0, %1 : tensor<4x16xi32>, tensor<4x16xi32>
}

// -----

// A convolution of dequantized operands (one input scale and zero point,
// per-output-channel weight scales, weight zero points 0): a u8 x s8
// convolution padded with the input's zero point (so a padded tap adds
// (zx - zx) w = 0), minus zx times each output channel's weight sum
// (computed first), then one f32 multiply by the scales.
// CHECK-LABEL: func.func @conv_qdq
// CHECK:         %qw = graph.constant dense<2> : tensor<16x8x3x3xi8>
// CHECK-NEXT:    %[[SW:.*]] = graph.reshape %sw : tensor<16x1x1x1xf32> -> tensor<16x1x1xf32>
// CHECK-NEXT:    %[[W32:.*]] = graph.cast %qw : tensor<16x8x3x3xi8> -> tensor<16x8x3x3xi32>
// CHECK-NEXT:    %[[SUMS:.*]] = graph.reduce_sum %[[W32]] {axes = array<i64: 1, 2, 3>} : tensor<16x8x3x3xi32> -> tensor<16xi32>
// CHECK-NEXT:    %[[CHANNELS:.*]] = graph.reshape %[[SUMS]] : tensor<16xi32> -> tensor<16x1x1xi32>
// CHECK-NEXT:    %[[ZX:.*]] = graph.constant dense<7> : tensor<i32>
// CHECK-NEXT:    %[[SHARE:.*]] = graph.mul %[[ZX]], %[[CHANNELS]] : (tensor<i32>, tensor<16x1x1xi32>) -> tensor<16x1x1xi32>
// CHECK-NEXT:    %[[ACC:.*]] = graph.conv2d %qx, %qw {padding = array<i64: 1, 1, 1, 1>, pad_value = 7 : i64} : (tensor<1x8x6x6xui8>, tensor<16x8x3x3xi8>) -> tensor<1x16x6x6xi32>
// CHECK-NEXT:    %[[SUM:.*]] = graph.sub %[[ACC]], %[[SHARE]] : (tensor<1x16x6x6xi32>, tensor<16x1x1xi32>) -> tensor<1x16x6x6xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[SUM]] : tensor<1x16x6x6xi32> -> tensor<1x16x6x6xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.mul %sx, %[[SW]] : (tensor<f32>, tensor<16x1x1xf32>) -> tensor<16x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[F]], %[[S]] : (tensor<1x16x6x6xf32>, tensor<16x1x1xf32>) -> tensor<1x16x6x6xf32>
// CHECK-NEXT:    func.return %[[Y]]
// A target without byte-quad instructions keeps the f32 convolution (the
// f32 kernels are faster than emulated quads).
// AVX2-LABEL: func.func @conv_qdq
// AVX2:         graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x6x6xf32>
func.func @conv_qdq(%qx: tensor<1x8x6x6xui8>, %sx: tensor<f32>, %sw: tensor<16x1x1x1xf32>) -> tensor<1x16x6x6xf32> {
  %zx = graph.constant dense<7> : tensor<ui8>
  %qw = graph.constant dense<2> : tensor<16x8x3x3xi8>
  %zw = graph.constant dense<0> : tensor<16x1x1x1xi8>
  %xf = graph.cast %qx : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %zxf = graph.cast %zx : tensor<ui8> -> tensor<f32>
  %xc = graph.sub %xf, %zxf : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %x = graph.mul %xc, %sx : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wf = graph.cast %qw : tensor<16x8x3x3xi8> -> tensor<16x8x3x3xf32>
  %zwf = graph.cast %zw : tensor<16x1x1x1xi8> -> tensor<16x1x1x1xf32>
  %wc = graph.sub %wf, %zwf : (tensor<16x8x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x8x3x3xf32>
  %w = graph.mul %wc, %sw : (tensor<16x8x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x8x3x3xf32>
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %y : tensor<1x16x6x6xf32>
}

// -----

// An s8 input is shifted to u8, its zero point (0) to 128.
// CHECK-LABEL: func.func @conv_s8_input
// CHECK:         %[[SHIFTED:.*]] = graph.add %{{.*}}, %{{.*}} : (tensor<1x8x6x6xi16>, tensor<i16>) -> tensor<1x8x6x6xi16>
// CHECK-NEXT:    %[[X:.*]] = graph.cast %[[SHIFTED]] : tensor<1x8x6x6xi16> -> tensor<1x8x6x6xui8>
// CHECK:         %[[ZX:.*]] = graph.constant dense<128> : tensor<i32>
// CHECK:         graph.conv2d %[[X]], %qw {pad_value = 128 : i64} : (tensor<1x8x6x6xui8>, tensor<16x8x3x3xi8>) -> tensor<1x16x4x4xi32>
func.func @conv_s8_input(%qx: tensor<1x8x6x6xi8>, %sx: tensor<f32>) -> tensor<1x16x4x4xf32> {
  %qw = graph.constant dense<-3> : tensor<16x8x3x3xi8>
  %xf = graph.cast %qx : tensor<1x8x6x6xi8> -> tensor<1x8x6x6xf32>
  %x = graph.mul %xf, %sx : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wf = graph.cast %qw : tensor<16x8x3x3xi8> -> tensor<16x8x3x3xf32>
  %w = graph.mul %wf, %sx : (tensor<16x8x3x3xf32>, tensor<f32>) -> tensor<16x8x3x3xf32>
  %y = graph.conv2d %x, %w : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// -----

// u8 weights with zero point 128 are symmetric too: shifted to s8 (the
// shift folds with the constant), no weight term.
// CHECK-LABEL: func.func @conv_u8_weights
// CHECK:         %[[W:.*]] = graph.cast %{{.*}} : tensor<16x8x3x3xi16> -> tensor<16x8x3x3xi8>
// CHECK-NEXT:    graph.conv2d %qx, %[[W]] : (tensor<1x8x6x6xui8>, tensor<16x8x3x3xi8>) -> tensor<1x16x4x4xi32>
func.func @conv_u8_weights(%qx: tensor<1x8x6x6xui8>, %sx: tensor<f32>) -> tensor<1x16x4x4xf32> {
  %qw = graph.constant dense<3> : tensor<16x8x3x3xui8>
  %zw = graph.constant dense<128> : tensor<ui8>
  %xf = graph.cast %qx : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %x = graph.mul %xf, %sx : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wf = graph.cast %qw : tensor<16x8x3x3xui8> -> tensor<16x8x3x3xf32>
  %zwf = graph.cast %zw : tensor<ui8> -> tensor<f32>
  %wc = graph.sub %wf, %zwf : (tensor<16x8x3x3xf32>, tensor<f32>) -> tensor<16x8x3x3xf32>
  %w = graph.mul %wc, %sx : (tensor<16x8x3x3xf32>, tensor<f32>) -> tensor<16x8x3x3xf32>
  %y = graph.conv2d %x, %w : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// -----

// Other weight zero points keep the convolution on centered i16 values
// (exact, on a direct loop nest).
// CHECK-LABEL: func.func @conv_other_weight_zero_point
// CHECK:         graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x8x6x6xi16>, tensor<16x8x3x3xi16>) -> tensor<1x16x4x4xi32>
func.func @conv_other_weight_zero_point(%qx: tensor<1x8x6x6xui8>, %sx: tensor<f32>) -> tensor<1x16x4x4xf32> {
  %qw = graph.constant dense<3> : tensor<16x8x3x3xui8>
  %zw = graph.constant dense<100> : tensor<ui8>
  %xf = graph.cast %qx : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %x = graph.mul %xf, %sx : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wf = graph.cast %qw : tensor<16x8x3x3xui8> -> tensor<16x8x3x3xf32>
  %zwf = graph.cast %zw : tensor<ui8> -> tensor<f32>
  %wc = graph.sub %wf, %zwf : (tensor<16x8x3x3xf32>, tensor<f32>) -> tensor<16x8x3x3xf32>
  %w = graph.mul %wc, %sx : (tensor<16x8x3x3xf32>, tensor<f32>) -> tensor<16x8x3x3xf32>
  %y = graph.conv2d %x, %w : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// -----

// So does an input zero point known only at run time (it cannot be the
// padding's value).
// CHECK-LABEL: func.func @conv_run_time_zero_point
// CHECK:         %[[X:.*]] = graph.sub %{{.*}}, %{{.*}} : (tensor<1x8x6x6xi16>, tensor<i16>) -> tensor<1x8x6x6xi16>
// CHECK:         graph.conv2d %[[X]], %{{.*}} : (tensor<1x8x6x6xi16>, tensor<16x8x3x3xi16>) -> tensor<1x16x4x4xi32>
func.func @conv_run_time_zero_point(%qx: tensor<1x8x6x6xui8>, %zx: tensor<ui8>, %sx: tensor<f32>) -> tensor<1x16x4x4xf32> {
  %qw = graph.constant dense<3> : tensor<16x8x3x3xi8>
  %xf = graph.cast %qx : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %zxf = graph.cast %zx : tensor<ui8> -> tensor<f32>
  %xc = graph.sub %xf, %zxf : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %x = graph.mul %xc, %sx : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wf = graph.cast %qw : tensor<16x8x3x3xi8> -> tensor<16x8x3x3xf32>
  %w = graph.mul %wf, %sx : (tensor<16x8x3x3xf32>, tensor<f32>) -> tensor<16x8x3x3xf32>
  %y = graph.conv2d %x, %w : (tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  func.return %y : tensor<1x16x4x4xf32>
}

// -----

// A grouped (depthwise) convolution stays f32.
// CHECK-LABEL: func.func @depthwise_stays_f32
// CHECK:         graph.conv2d %x, %w {groups = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
func.func @depthwise_stays_f32(%qx: tensor<1x8x6x6xui8>, %sx: tensor<f32>) -> tensor<1x8x4x4xf32> {
  %qw = graph.constant dense<3> : tensor<8x1x3x3xi8>
  %xf = graph.cast %qx : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %x = graph.mul %xf, %sx : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wf = graph.cast %qw : tensor<8x1x3x3xi8> -> tensor<8x1x3x3xf32>
  %w = graph.mul %wf, %sx : (tensor<8x1x3x3xf32>, tensor<f32>) -> tensor<8x1x3x3xf32>
  %y = graph.conv2d %x, %w {groups = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}

// -----

// A max pool of a dequantized tensor (a positive constant scale) runs on
// the 8-bit values, the dequantization after it: it is increasing, so it
// commutes with the max, and the pool moves bytes.
// CHECK-LABEL: func.func @max_pool_of_dequantized
// CHECK:         %[[P:.*]] = graph.max_pool2d %q {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x8x8xui8> -> tensor<1x4x4x4xui8>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[P]] : tensor<1x4x4x4xui8> -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %[[Z:.*]] = graph.cast %z : tensor<ui8> -> tensor<f32>
// CHECK-NEXT:    %[[C:.*]] = graph.sub %[[F]], %[[Z]]
// CHECK-NEXT:    %y = graph.mul %[[C]], %s
// AVX2-LABEL: func.func @max_pool_of_dequantized
// AVX2:         graph.max_pool2d %q
func.func @max_pool_of_dequantized(%q: tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xf32> {
  %z = graph.constant dense<3> : tensor<ui8>
  %s = graph.constant dense<0.25> : tensor<f32>
  %f = graph.cast %q : tensor<1x4x8x8xui8> -> tensor<1x4x8x8xf32>
  %zf = graph.cast %z : tensor<ui8> -> tensor<f32>
  %c = graph.sub %f, %zf : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %x = graph.mul %c, %s : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// A negative scale reverses the order: the pool stays on the f32 values.
// CHECK-LABEL: func.func @negative_scale_stays
// CHECK:         graph.max_pool2d %x
func.func @negative_scale_stays(%q: tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xf32> {
  %z = graph.constant dense<3> : tensor<ui8>
  %s = graph.constant dense<-0.25> : tensor<f32>
  %f = graph.cast %q : tensor<1x4x8x8xui8> -> tensor<1x4x8x8xf32>
  %zf = graph.cast %z : tensor<ui8> -> tensor<f32>
  %c = graph.sub %f, %zf : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %x = graph.mul %c, %s : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %y = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// A QDQ head split: the reshape and the transpose of a dequantized value
// move its bytes, and quantizing it again to the same scale and zero point
// gives those bytes back.
// CHECK-LABEL: func.func @head_split
// CHECK:         %[[R:.*]] = graph.reshape %q : tensor<2x6xui8> -> tensor<2x3x2xui8>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[R]] {perm = array<i64: 1, 0, 2>} : tensor<2x3x2xui8> -> tensor<3x2x2xui8>
// CHECK:         func.return %[[T]] : tensor<3x2x2xui8>
func.func @head_split(%q: tensor<2x6xui8>) -> tensor<3x2x2xui8> {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<3> : tensor<ui8>
  %c = graph.cast %q : tensor<2x6xui8> -> tensor<2x6xf32>
  %zf = graph.cast %z : tensor<ui8> -> tensor<f32>
  %d = graph.sub %c, %zf : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %x = graph.mul %d, %s : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %r = graph.reshape %x : tensor<2x6xf32> -> tensor<2x3x2xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 0, 2>} : tensor<2x3x2xf32> -> tensor<3x2x2xf32>
  %v = graph.div %t, %s : (tensor<3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
  %o = graph.round %v : tensor<3x2x2xf32>
  %a = graph.add %o, %zf : (tensor<3x2x2xf32>, tensor<f32>) -> tensor<3x2x2xf32>
  %y = graph.cast %a : tensor<3x2x2xf32> -> tensor<3x2x2xui8>
  func.return %y : tensor<3x2x2xui8>
}

// -----

// Left alone: a move of a value dequantized with one scale per channel
// (the scale would have to move too), and a quantization to another scale
// (a requantization: its bytes differ).
// CHECK-LABEL: func.func @other_scales
// CHECK:         graph.transpose %x {{.*}} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK:         %[[V:.*]] = graph.div %{{.*}}, %s2
// CHECK:         %[[O:.*]] = graph.round %[[V]]
// CHECK:         %[[Y:.*]] = graph.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xui8>
// CHECK:         func.return %{{.*}}, %[[Y]]
func.func @other_scales(%q: tensor<2x3xui8>) -> (tensor<3x2xf32>, tensor<2x3xui8>) {
  %channels = graph.constant dense<[0.5, 0.25, 0.125]> : tensor<3xf32>
  %s = graph.constant dense<0.05> : tensor<f32>
  %s2 = graph.constant dense<0.1> : tensor<f32>
  %c = graph.cast %q : tensor<2x3xui8> -> tensor<2x3xf32>
  %x = graph.mul %c, %channels : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %d = graph.mul %c, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %v = graph.div %d, %s2 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %o = graph.round %v : tensor<2x3xf32>
  %y = graph.cast %o : tensor<2x3xf32> -> tensor<2x3xui8>
  func.return %t, %y : tensor<3x2xf32>, tensor<2x3xui8>
}
