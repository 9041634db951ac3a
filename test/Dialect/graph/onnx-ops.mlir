// The ops added for the ONNX frontend round-trip: print -> parse -> print is
// identical, and the generic form parses to the same ops.
// RUN: gc-opt %s | filecheck %s
// RUN: gc-opt %s | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | gc-opt | filecheck %s

// CHECK-LABEL: func.func @compare_and_logic
func.func @compare_and_logic(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %p: tensor<4x8xi1>, %q: tensor<1x8xi1>) -> tensor<4x8xi1> {
  // CHECK-NEXT: %0 = graph.greater_equal %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %0 = graph.greater_equal %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: %1 = graph.less_equal %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %1 = graph.less_equal %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK-NEXT: %2 = graph.not_equal %p, %q : (tensor<4x8xi1>, tensor<1x8xi1>) -> tensor<4x8xi1>
  %2 = graph.not_equal %p, %q : (tensor<4x8xi1>, tensor<1x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: %3 = graph.logical_and %0, %1 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %3 = graph.logical_and %0, %1 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: %4 = graph.logical_or %3, %q : (tensor<4x8xi1>, tensor<1x8xi1>) -> tensor<4x8xi1>
  %4 = graph.logical_or %3, %q : (tensor<4x8xi1>, tensor<1x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: %5 = graph.logical_xor %4, %2 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %5 = graph.logical_xor %4, %2 : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  // CHECK-NEXT: %6 = graph.logical_not %5 : tensor<4x8xi1>
  %6 = graph.logical_not %5 : tensor<4x8xi1>
  func.return %6 : tensor<4x8xi1>
}

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %0 = graph.elu %x : tensor<4x8xf32>
  %0 = graph.elu %x : tensor<4x8xf32>
  // CHECK-NEXT: %1 = graph.elu %0 {alpha = 5.000000e-01 : f32} : tensor<4x8xf32>
  %1 = graph.elu %0 {alpha = 0.5 : f32} : tensor<4x8xf32>
  // CHECK-NEXT: %2 = graph.selu %1 : tensor<4x8xf32>
  %2 = graph.selu %1 : tensor<4x8xf32>
  // CHECK-NEXT: %3 = graph.selu %2 {alpha = 2.000000e+00 : f32, gamma = 3.000000e+00 : f32} : tensor<4x8xf32>
  %3 = graph.selu %2 {alpha = 2.0 : f32, gamma = 3.0 : f32} : tensor<4x8xf32>
  // CHECK-NEXT: %4 = graph.softplus %3 : tensor<4x8xf32>
  %4 = graph.softplus %3 : tensor<4x8xf32>
  // CHECK-NEXT: %5 = graph.hard_sigmoid %4 {alpha = 5.000000e-01 : f32} : tensor<4x8xf32>
  %5 = graph.hard_sigmoid %4 {alpha = 0.5 : f32} : tensor<4x8xf32>
  // CHECK-NEXT: %6 = graph.hard_swish %5 : tensor<4x8xf32>
  %6 = graph.hard_swish %5 : tensor<4x8xf32>
  // CHECK-NEXT: %7 = graph.prelu %6, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %7 = graph.prelu %6, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %7 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%table: tensor<100x16xf32>, %ids: tensor<2x3xi64>, %x: tensor<2x3x4xi32>) -> tensor<2x3x16xf32> {
  // CHECK-NEXT: %0 = graph.gather %table, %ids : (tensor<100x16xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
  %0 = graph.gather %table, %ids : (tensor<100x16xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
  // CHECK-NEXT: %1 = graph.gather %x, %ids {axis = -1 : i64} : (tensor<2x3x4xi32>, tensor<2x3xi64>) -> tensor<2x3x2x3xi32>
  %1 = graph.gather %x, %ids {axis = -1 : i64} : (tensor<2x3x4xi32>, tensor<2x3xi64>) -> tensor<2x3x2x3xi32>
  // CHECK-NEXT: %2 = graph.pad %0 {pads = array<i64: 0, 1, 2, 0, -1, 3>} : tensor<2x3x16xf32> -> tensor<2x3x21xf32>
  %2 = graph.pad %0 {pads = array<i64: 0, 1, 2, 0, -1, 3>} : tensor<2x3x16xf32> -> tensor<2x3x21xf32>
  // CHECK-NEXT: %3 = graph.pad %x {pads = array<i64: 1, 0, 0, 1, 0, 0>, value = -1.000000e+00 : f32} : tensor<2x3x4xi32> -> tensor<4x3x4xi32>
  %3 = graph.pad %x {pads = array<i64: 1, 0, 0, 1, 0, 0>, value = -1.0 : f32} : tensor<2x3x4xi32> -> tensor<4x3x4xi32>
  // CHECK-NEXT: %4 = graph.pad %x {pads = array<i64: 0, 2, 3, 0, 2, 3>, mode = "reflect"} : tensor<2x3x4xi32> -> tensor<2x7x10xi32>
  %4 = graph.pad %x {pads = array<i64: 0, 2, 3, 0, 2, 3>, mode = "reflect"} : tensor<2x3x4xi32> -> tensor<2x7x10xi32>
  // CHECK-NEXT: %5 = graph.pad %x {pads = array<i64: 0, 0, 5, 0, 0, 5>, mode = "wrap"} : tensor<2x3x4xi32> -> tensor<2x3x14xi32>
  %5 = graph.pad %x {pads = array<i64: 0, 0, 5, 0, 0, 5>, mode = "wrap"} : tensor<2x3x4xi32> -> tensor<2x3x14xi32>
  func.return %0 : tensor<2x3x16xf32>
}

// CHECK-LABEL: func.func @normalizations
func.func @normalizations(%x: tensor<2x3x8xf32>, %s: tensor<3x8xf32>, %c: tensor<3xf32>) -> tensor<2x3x8xf32> {
  // CHECK-NEXT: %0 = graph.rms_norm %x, %s {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
  %0 = graph.rms_norm %x, %s {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
  // CHECK-NEXT: %1 = graph.instance_norm %0, %c, %c {epsilon = 1.000000e-03 : f32} : (tensor<2x3x8xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8xf32>
  %1 = graph.instance_norm %0, %c, %c {epsilon = 1.0e-03 : f32} : (tensor<2x3x8xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8xf32>
  func.return %1 : tensor<2x3x8xf32>
}

// CHECK-LABEL: func.func @element_types
func.func @element_types(%d: tensor<4xf64>, %u: tensor<4xui8>, %s: tensor<4xi16>) -> tensor<4xf64> {
  // CHECK-NEXT: %0 = graph.add %d, %d : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %0 = graph.add %d, %d : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  // CHECK-NEXT: %1 = graph.maximum %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = graph.maximum %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  // CHECK-NEXT: %2 = graph.cast %1 : tensor<4xui8> -> tensor<4xi16>
  %2 = graph.cast %1 : tensor<4xui8> -> tensor<4xi16>
  // CHECK-NEXT: %3 = graph.sub %2, %s : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  %3 = graph.sub %2, %s : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  // CHECK-NEXT: %4 = graph.cast %3 : tensor<4xi16> -> tensor<4xf64>
  %4 = graph.cast %3 : tensor<4xi16> -> tensor<4xf64>
  // CHECK-NEXT: %5 = graph.constant dense<[0, 255, 7, 1]> : tensor<4xui8>
  %5 = graph.constant dense<[0, 255, 7, 1]> : tensor<4xui8>
  func.return %4 : tensor<4xf64>
}
