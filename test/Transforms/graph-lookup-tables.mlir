// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-lookup-tables)' | filecheck %s

// QDQ GELU (x * erf(x / sqrt 2), requantized): every element a function of
// one byte of x, so the chain is one table of the reference's 256 values
// (the chain's ops, read by nothing else, are erased).
// x = 3 (its zero point) dequantizes to 0, whose GELU is 0: quantized, the
// zero point 3 again, at entry 3.
// CHECK-LABEL: func.func @gelu
// CHECK-NOT:     graph.cast
// CHECK:         %[[Y:.*]] = graph.lookup %x {table = dense<"0x{{......}}03{{.*}}"> : tensor<256xui8>} : tensor<4x8xui8> -> tensor<4x8xui8>
// CHECK-NEXT:    func.return %[[Y]]
func.func @gelu(%x: tensor<4x8xui8>) -> tensor<4x8xui8> {
  %zp = graph.constant dense<3.0> : tensor<f32>
  %s = graph.constant dense<0.05> : tensor<f32>
  %t = graph.constant dense<0.0078> : tensor<f32>
  %c = graph.constant dense<1.41421354> : tensor<f32>
  %0 = graph.cast %x : tensor<4x8xui8> -> tensor<4x8xf32>
  %1 = graph.sub %0, %zp : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.mul %1, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = graph.div %2, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = graph.erf %3 : tensor<4x8xf32>
  %5 = graph.mul %4, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = graph.div %5, %t : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %7 = graph.round %6 : tensor<4x8xf32>
  %8 = graph.add %7, %zp : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %9 = graph.cast %8 : tensor<4x8xf32> -> tensor<4x8xui8>
  func.return %9 : tensor<4x8xui8>
}

// -----

// SiLU as a QDQ model computes it: the sigmoid requantized, then multiplied
// by x dequantized again. The intermediate byte tensor is opened up to
// reach the one source, an i8 tensor (entry i for x = i - 128).
// CHECK-LABEL: func.func @silu
// CHECK-NOT:     graph.sigmoid
// CHECK:         graph.lookup %x {table = {{.*}} : tensor<256xi8>} : tensor<2x16xi8> -> tensor<2x16xi8>
// CHECK-NEXT:    func.return
func.func @silu(%x: tensor<2x16xi8>) -> tensor<2x16xi8> {
  %s = graph.constant dense<0.1> : tensor<f32>
  %q = graph.constant dense<0.00390625> : tensor<f32>
  %0 = graph.cast %x : tensor<2x16xi8> -> tensor<2x16xf32>
  %1 = graph.mul %0, %s : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %2 = graph.sigmoid %1 : tensor<2x16xf32>
  %3 = graph.div %2, %q : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %4 = graph.round %3 : tensor<2x16xf32>
  %5 = graph.cast %4 : tensor<2x16xf32> -> tensor<2x16xui8>
  %6 = graph.cast %5 : tensor<2x16xui8> -> tensor<2x16xf32>
  %7 = graph.mul %6, %q : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %8 = graph.mul %7, %1 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %9 = graph.div %8, %s : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %10 = graph.round %9 : tensor<2x16xf32>
  %11 = graph.cast %10 : tensor<2x16xf32> -> tensor<2x16xi8>
  func.return %11 : tensor<2x16xi8>
}

// -----

// Not tables: a requantization (cheap as it is computed), a sum of two byte
// tensors (no one source), a per-channel scale (the function differs by
// channel), and a chain from a float argument.
// CHECK-LABEL: func.func @not_tables
// CHECK-NOT:     graph.lookup
// CHECK:         func.return
func.func @not_tables(%x: tensor<4x8xui8>, %y: tensor<4x8xui8>, %f: tensor<4x8xf32>) -> (tensor<4x8xui8>, tensor<4x8xui8>, tensor<4x8xui8>, tensor<4x8xui8>) {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<3.0> : tensor<f32>
  %c = graph.constant dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]> : tensor<8xf32>
  %0 = graph.cast %x : tensor<4x8xui8> -> tensor<4x8xf32>
  %1 = graph.sub %0, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.mul %1, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = graph.div %2, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = graph.round %3 : tensor<4x8xf32>
  %requantized = graph.cast %4 : tensor<4x8xf32> -> tensor<4x8xui8>
  %5 = graph.cast %y : tensor<4x8xui8> -> tensor<4x8xf32>
  %6 = graph.add %2, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = graph.exp %6 : tensor<4x8xf32>
  %8 = graph.round %7 : tensor<4x8xf32>
  %9 = graph.add %8, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %two = graph.cast %9 : tensor<4x8xf32> -> tensor<4x8xui8>
  %10 = graph.mul %2, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %11 = graph.exp %10 : tensor<4x8xf32>
  %12 = graph.round %11 : tensor<4x8xf32>
  %13 = graph.add %12, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %channels = graph.cast %13 : tensor<4x8xf32> -> tensor<4x8xui8>
  %14 = graph.exp %f : tensor<4x8xf32>
  %15 = graph.mul %14, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %16 = graph.round %15 : tensor<4x8xf32>
  %17 = graph.add %16, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %18 = graph.div %17, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %float = graph.cast %18 : tensor<4x8xf32> -> tensor<4x8xui8>
  func.return %requantized, %two, %channels, %float : tensor<4x8xui8>, tensor<4x8xui8>, tensor<4x8xui8>, tensor<4x8xui8>
}

// -----

// A chain whose first part became a table (the erf, requantized) goes on:
// times x, requantized, then times 0.5, requantized. The earlier table is
// opened up like a quantize, so one table reads x, and the requantization
// at the end (only quantizing arithmetic after the table) is taken in too.
// CHECK-LABEL: func.func @stages
// CHECK-NOT:     graph.erf
// CHECK:         %[[Y:.*]] = graph.lookup %x {{.*}} : tensor<8xui8> -> tensor<8xui8>
// CHECK-NOT:     graph.lookup
// CHECK:         func.return %[[Y]]
func.func @stages(%x: tensor<8xui8>) -> tensor<8xui8> {
  %s = graph.constant dense<0.05> : tensor<f32>
  %h = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.cast %x : tensor<8xui8> -> tensor<8xf32>
  %1 = graph.mul %0, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = graph.erf %1 : tensor<8xf32>
  %3 = graph.div %2, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %4 = graph.round %3 : tensor<8xf32>
  %erf = graph.cast %4 : tensor<8xf32> -> tensor<8xui8>
  %5 = graph.cast %erf : tensor<8xui8> -> tensor<8xf32>
  %6 = graph.mul %5, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %7 = graph.mul %6, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %8 = graph.div %7, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %9 = graph.round %8 : tensor<8xf32>
  %times_x = graph.cast %9 : tensor<8xf32> -> tensor<8xui8>
  %10 = graph.cast %times_x : tensor<8xui8> -> tensor<8xf32>
  %11 = graph.mul %10, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %12 = graph.mul %11, %h : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %13 = graph.div %12, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %14 = graph.round %13 : tensor<8xf32>
  %half = graph.cast %14 : tensor<8xf32> -> tensor<8xui8>
  func.return %half : tensor<8xui8>
}
