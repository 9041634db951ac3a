// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(canonicalize))' | filecheck %s

// Seed 003: X * 0 -> 0, X * Broadcast(0) -> 0 of the result's shape (which
// the broadcast zero made bigger than X), for integers; a float X * 0 stays
// (NaN and the infinities times 0 are NaN).
// CHECK-LABEL: func.func @mul_zero
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0> : tensor<4x8xi32>
// CHECK-NEXT:    %[[ZB:.*]] = graph.constant dense<0> : tensor<3x4x8xi32>
// CHECK-NEXT:    %[[F0:.*]] = graph.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[F:.*]] = graph.mul %f, %[[F0]]
// CHECK-NEXT:    func.return %[[Z]], %[[ZB]], %[[F]]
func.func @mul_zero(%x: tensor<4x8xi32>, %f: tensor<4x8xf32>) -> (tensor<4x8xi32>, tensor<3x4x8xi32>, tensor<4x8xf32>) {
  %zero = graph.constant dense<0> : tensor<1xi32>
  %0 = graph.mul %x, %zero : (tensor<4x8xi32>, tensor<1xi32>) -> tensor<4x8xi32>
  %zeros = graph.broadcast_to %zero : tensor<1xi32> -> tensor<3x4x8xi32>
  %1 = graph.mul %zeros, %x : (tensor<3x4x8xi32>, tensor<4x8xi32>) -> tensor<3x4x8xi32>
  %fzero = graph.constant dense<0.0> : tensor<1xf32>
  %2 = graph.mul %f, %fzero : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2 : tensor<4x8xi32>, tensor<3x4x8xi32>, tensor<4x8xf32>
}

// -----

// X * 1 -> X, X * Broadcast(1) -> X, X + 0 -> X; when the constant makes
// the result bigger, X is broadcast to the result's shape.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast_to %x : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    func.return %x, %x, %[[B]], %x
func.func @identities(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>) {
  %one = graph.constant dense<1.0> : tensor<8xf32>
  %0 = graph.mul %x, %one : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %ones = graph.broadcast_to %one : tensor<8xf32> -> tensor<4x8xf32>
  %1 = graph.mul %ones, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %zero = graph.constant dense<0.0> : tensor<2x1x8xf32>
  %2 = graph.add %x, %zero : (tensor<4x8xf32>, tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
  %small_zero = graph.constant dense<0.0> : tensor<1xf32>
  %3 = graph.add %small_zero, %x : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>
}

// -----

// select by an all-false (all-true) condition is its false (true) side,
// broadcast where the condition made the result bigger (an expanded ONNX
// Attention's guard for fully masked rows, given no mask); a mixed
// condition stays.
// CHECK-LABEL: func.func @select_constant
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast_to %y : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MIXED:.*]] = graph.constant dense<[true, false, true, false, true, false, true, false]>
// CHECK-NEXT:    %[[S:.*]] = graph.select %[[MIXED]], %x, %y
// CHECK-NEXT:    func.return %x, %[[B]], %[[S]]
func.func @select_constant(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %true = graph.constant dense<true> : tensor<4x1xi1>
  %0 = graph.select %true, %x, %y : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %false = graph.constant dense<false> : tensor<4x1xi1>
  %1 = graph.select %false, %x, %y : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %mixed = graph.constant dense<[true, false, true, false, true, false, true, false]> : tensor<8xi1>
  %2 = graph.select %mixed, %x, %y : (tensor<8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Seed 003: Log(Exp(X) / Y) -> X - Log(Y).
// CHECK-LABEL: func.func @log_exp
// CHECK-NEXT:    %[[L:.*]] = graph.log %y : tensor<8xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.sub %x, %[[L]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[S]]
func.func @log_exp(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = graph.exp %x : tensor<4x8xf32>
  %1 = graph.div %0, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = graph.log %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// Data movement chains and identities.
// CHECK-LABEL: func.func @movement
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT:    func.return %x, %[[T]], %[[R]], %x, %x, %x, %x
func.func @movement(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %t1 = graph.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %t2 = graph.transpose %t1 {perm = array<i64: 1, 0, 2>} : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  %t3 = graph.transpose %t1 {perm = array<i64: 2, 1, 0>} : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  %r1 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %r2 = graph.reshape %r1 : tensor<6x4xf32> -> tensor<24xf32>
  %r3 = graph.reshape %r1 : tensor<6x4xf32> -> tensor<2x3x4xf32>
  %i1 = graph.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %i2 = graph.broadcast_to %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %i3 = graph.cast %x : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %t2, %t3, %r2, %r3, %i1, %i2, %i3 : tensor<2x3x4xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// A transpose that moves only dims of size 1 is a reshape (a view); one
// that also swaps two dims of more than one element stays.
// CHECK-LABEL: func.func @unit_dims
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %x : tensor<2x5x1x4xf32> -> tensor<2x1x5x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<2x5x1x4xf32> -> tensor<2x1x4x5xf32>
// CHECK-NEXT:    func.return %[[R]], %[[T]]
func.func @unit_dims(%x: tensor<2x5x1x4xf32>) -> (tensor<2x1x5x4xf32>, tensor<2x1x4x5xf32>) {
  %r = graph.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x5x1x4xf32> -> tensor<2x1x5x4xf32>
  %t = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<2x5x1x4xf32> -> tensor<2x1x4x5xf32>
  func.return %r, %t : tensor<2x1x5x4xf32>, tensor<2x1x4x5xf32>
}

// -----

// neg(neg x) -> x, relu(relu x) -> relu x.
// CHECK-LABEL: func.func @unary
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x : tensor<8xf32>
// CHECK-NEXT:    func.return %x, %[[R]]
func.func @unary(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = graph.neg %x : tensor<8xf32>
  %1 = graph.neg %0 : tensor<8xf32>
  %2 = graph.relu %x : tensor<8xf32>
  %3 = graph.relu %2 : tensor<8xf32>
  func.return %1, %3 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Patterns that must not fire: a constant that is not all zeros or ones,
// a division that is not of an exp, a transpose of a reshape, a cast that
// changes the type, a single neg.
// CHECK-LABEL: func.func @negative
// CHECK:         graph.mul %x, %c
// CHECK:         graph.add %x, %c
// CHECK:         graph.div %x, %y
// CHECK:         graph.log
// CHECK:         graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK:         graph.neg %x
func.func @negative(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>) {
  %c = graph.constant dense<[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]> : tensor<8xf32>
  %0 = graph.mul %x, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = graph.add %x, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = graph.div %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = graph.log %2 : tensor<4x8xf32>
  %4 = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %5 = graph.neg %x : tensor<4x8xf32>
  func.return %0, %1, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>
}

// -----

// X * 0 over more than 16M elements: a one-element zero broadcast to the
// result (xDSL would store every element of a splat: out of memory).
// CHECK-LABEL: func.func @mul_zero_huge
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0> : tensor<1x1x1xi32>
// CHECK-NEXT:    %[[ZB:.*]] = graph.broadcast_to %[[Z]] : tensor<1x1x1xi32> -> tensor<2147483648x4x8xi32>
// CHECK-NEXT:    func.return %[[ZB]]
func.func @mul_zero_huge(%x: tensor<4x8xi32>) -> tensor<2147483648x4x8xi32> {
  %zero = graph.constant dense<0> : tensor<1xi32>
  %zeros = graph.broadcast_to %zero : tensor<1xi32> -> tensor<2147483648x4x8xi32>
  %1 = graph.mul %zeros, %x : (tensor<2147483648x4x8xi32>, tensor<4x8xi32>) -> tensor<2147483648x4x8xi32>
  func.return %1 : tensor<2147483648x4x8xi32>
}

// -----

// X ** 2 and X ** 3 become multiplies; other exponents, and an exponent that
// broadcasts X to a bigger result, stay pow.
// CHECK-LABEL: func.func @small_powers
// CHECK-NOT:     dense<2.000000e+00>
// CHECK:         %[[SQ:.*]] = graph.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SQ3:.*]] = graph.mul %x, %x
// CHECK-NEXT:    %[[CUBE:.*]] = graph.mul %[[SQ3]], %x
// CHECK-NEXT:    %[[OTHER:.*]] = graph.pow %x, %{{.*}} : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[WIDER:.*]] = graph.pow %v, %{{.*}} : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[SQ]], %[[CUBE]], %[[OTHER]], %[[WIDER]]
func.func @small_powers(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %three = graph.constant dense<3.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<1xf32>
  %threes = graph.constant dense<3.0> : tensor<4x8xf32>
  %0 = graph.pow %x, %two : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %1 = graph.pow %x, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.pow %x, %half : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %3 = graph.pow %v, %threes : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// batch_norm with constant parameters -> X * S + T with per-channel
// constants S = scale / sqrt(var + epsilon) = [1, 3] and T = bias - mean * S
// = [0.5, -6] (computed in f64), which fuse into the producer's epilogue.
// Left alone: parameters known only at run time, and a zero variance
// without epsilon (S would be inf: X * S + T would not give the op's NaNs).
// CHECK-LABEL: func.func @batch_norm_of_constants
// CHECK-DAG:     %[[S:.*]] = graph.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}3.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG:     %[[T:.*]] = graph.constant dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}-6.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK:         %[[XS:.*]] = graph.mul %x, %[[S]] : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %[[XS]], %[[T]] : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[KEPT:.*]] = graph.batch_norm %x, %{{.*}}, %{{.*}}, %{{.*}}, %var
// CHECK-NEXT:    %[[ZERO:.*]] = graph.batch_norm %x, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 0.000000e+00 : f32}
// CHECK-NEXT:    func.return %[[Y]], %[[KEPT]], %[[ZERO]]
func.func @batch_norm_of_constants(%x: tensor<1x2x4x4xf32>, %var: tensor<2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %scale = graph.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.5, 2.0]> : tensor<2xf32>
  %variance = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %0 = graph.batch_norm %x, %scale, %bias, %mean, %variance {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %1 = graph.batch_norm %x, %scale, %bias, %mean, %var : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %2 = graph.batch_norm %x, %scale, %bias, %mean, %variance {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %0, %1, %2 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// conv2d(pad(X)) with zeros before and after H and W only -> one conv2d
// with the amounts added to its padding. Kept: a pad of another value, of
// the channels, or a negative amount (a crop).
// CHECK-LABEL: func.func @pad_into_convolution
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 1, 3, 2>} : (tensor<1x2x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT:    %[[ONES:.*]] = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, value = 1.000000e+00 : f32}
// CHECK-NEXT:    %[[KEPT:.*]] = graph.conv2d %[[ONES]], %w
// CHECK-NEXT:    %[[CHANNELS:.*]] = graph.pad %x {pads = array<i64: 0, 1, 0, 0, 0, 0, 0, 0>}
// CHECK-NEXT:    %[[KEPT2:.*]] = graph.conv2d %[[CHANNELS]], %w3
// CHECK-NEXT:    %[[CROP:.*]] = graph.pad %x {pads = array<i64: 0, 0, 0, -1, 0, 0, 1, 0>}
// CHECK-NEXT:    %[[KEPT3:.*]] = graph.conv2d %[[CROP]], %w
// CHECK-NEXT:    func.return %[[C]], %[[KEPT]], %[[KEPT2]], %[[KEPT3]]
func.func @pad_into_convolution(%x: tensor<1x2x9x9xf32>, %w: tensor<4x2x3x3xf32>, %w3: tensor<4x3x3x3xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x9x9xf32>, tensor<1x4x7x7xf32>, tensor<1x4x8x6xf32>) {
  %p = graph.pad %x {pads = array<i64: 0, 0, 0, 1, 0, 0, 2, 1>} : tensor<1x2x9x9xf32> -> tensor<1x2x11x11xf32>
  %0 = graph.conv2d %p, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : (tensor<1x2x11x11xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
  %ones = graph.pad %x {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, value = 1.0 : f32} : tensor<1x2x9x9xf32> -> tensor<1x2x10x10xf32>
  %1 = graph.conv2d %ones, %w {padding = array<i64: 1, 1, 0, 0>} : (tensor<1x2x10x10xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x9x9xf32>
  %channels = graph.pad %x {pads = array<i64: 0, 1, 0, 0, 0, 0, 0, 0>} : tensor<1x2x9x9xf32> -> tensor<1x3x9x9xf32>
  %2 = graph.conv2d %channels, %w3 : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x7x7xf32>
  %crop = graph.pad %x {pads = array<i64: 0, 0, 0, -1, 0, 0, 1, 0>} : tensor<1x2x9x9xf32> -> tensor<1x2x10x8xf32>
  %3 = graph.conv2d %crop, %w : (tensor<1x2x10x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x6xf32>
  func.return %0, %1, %2, %3 : tensor<1x4x5x5xf32>, tensor<1x4x9x9xf32>, tensor<1x4x7x7xf32>, tensor<1x4x8x6xf32>
}

// -----

// An integer convolution pads with its pad_value: a pad of that value
// merges into it, a zero pad does not.
// CHECK-LABEL: func.func @pad_value_into_convolution
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w {pad_value = 5 : i64, padding = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:    %[[ZEROS:.*]] = graph.pad %x
// CHECK-NEXT:    %[[KEPT:.*]] = graph.conv2d %[[ZEROS]], %w {pad_value = 5 : i64}
// CHECK-NEXT:    func.return %[[C]], %[[KEPT]]
func.func @pad_value_into_convolution(%x: tensor<1x4x6x6xui8>, %w: tensor<8x4x3x3xi8>) -> (tensor<1x8x6x6xi32>, tensor<1x8x6x6xi32>) {
  %p = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 5.0 : f32} : tensor<1x4x6x6xui8> -> tensor<1x4x8x8xui8>
  %0 = graph.conv2d %p, %w {pad_value = 5 : i64} : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xi32>
  %zeros = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>} : tensor<1x4x6x6xui8> -> tensor<1x4x8x8xui8>
  %1 = graph.conv2d %zeros, %w {pad_value = 5 : i64} : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xi32>
  func.return %0, %1 : tensor<1x8x6x6xi32>, tensor<1x8x6x6xi32>
}

// -----

// A Linear layer exported as a 2-D Gemm between reshapes (GPT-2's Conv1D):
// its activation and the residual add move to the matmul's 2-D shape (the
// bias broadcasts alike; the full-shaped residual is reshaped, right after
// its definition), and the reshape back before the next matmul cancels.
// CHECK-LABEL: func.func @elementwise_before_reshape
// CHECK-NEXT:    %[[RES:.*]] = graph.reshape %res : tensor<2x8x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:    %[[X:.*]] = graph.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %[[X]], %w : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.add %[[M]], %bias : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.tanh %[[B]] : tensor<16x32xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[T]], %[[RES]] : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[O:.*]] = graph.reshape %[[S]] : tensor<16x32xf32> -> tensor<2x8x32xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.matmul %[[S]], %w2 : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    func.return %[[N]], %[[O]]
func.func @elementwise_before_reshape(%x: tensor<2x8x16xf32>, %w: tensor<16x32xf32>, %bias: tensor<32xf32>, %res: tensor<2x8x32xf32>, %w2: tensor<32x16xf32>) -> (tensor<16x16xf32>, tensor<2x8x32xf32>) {
  %x2 = graph.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %m = graph.matmul %x2, %w : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %m3 = graph.reshape %m : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %b = graph.add %m3, %bias : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %t = graph.tanh %b : tensor<2x8x32xf32>
  %s = graph.add %t, %res : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %s2 = graph.reshape %s : tensor<2x8x32xf32> -> tensor<16x32xf32>
  %n = graph.matmul %s2, %w2 : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
  func.return %n, %s : tensor<16x16xf32>, tensor<2x8x32xf32>
}

// -----

// Not moved: a reshape that changes the last dim (a row vector would
// broadcast differently), an operand broadcast along a leading dim, and a
// reshape to a lower rank (moving it would only undo this pattern).
// CHECK-LABEL: func.func @elementwise_stays_after_reshape
// CHECK:         graph.add %[[A:.*]], %c : (tensor<2x8x8xf32>, tensor<8xf32>)
// CHECK:         graph.mul %[[B:.*]], %col : (tensor<2x8x32xf32>, tensor<2x1x32xf32>)
// CHECK:         graph.neg %[[C:.*]] : tensor<16x32xf32>
func.func @elementwise_stays_after_reshape(%x: tensor<8x16xf32>, %c: tensor<8xf32>, %y: tensor<16x32xf32>, %col: tensor<2x1x32xf32>, %z: tensor<2x8x32xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x32xf32>, tensor<16x32xf32>) {
  %a = graph.reshape %x : tensor<8x16xf32> -> tensor<2x8x8xf32>
  %0 = graph.add %a, %c : (tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<2x8x8xf32>
  %b = graph.reshape %y : tensor<16x32xf32> -> tensor<2x8x32xf32>
  %1 = graph.mul %b, %col : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  %d = graph.reshape %z : tensor<2x8x32xf32> -> tensor<16x32xf32>
  %2 = graph.neg %d : tensor<16x32xf32>
  func.return %0, %1, %2 : tensor<2x8x8xf32>, tensor<2x8x32xf32>, tensor<16x32xf32>
}
