// The ops ONNX's math converters build round-trip: print -> parse -> print is
// identical (default properties omitted), and the generic form parses to the
// same ops.
// RUN: gc-opt %s | filecheck %s
// RUN: gc-opt %s | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | gc-opt | filecheck %s

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<8xf32>, %i: tensor<4x8xi32>, %u: tensor<8xui8>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %0 = graph.sin %x : tensor<4x8xf32>
  %0 = graph.sin %x : tensor<4x8xf32>
  // CHECK-NEXT: %1 = graph.cos %0 : tensor<4x8xf32>
  %1 = graph.cos %0 : tensor<4x8xf32>
  // CHECK-NEXT: %2 = graph.round %1 : tensor<4x8xf32>
  %2 = graph.round %1 : tensor<4x8xf32>
  // CHECK-NEXT: %3 = graph.floor %2 : tensor<4x8xf32>
  %3 = graph.floor %2 : tensor<4x8xf32>
  // CHECK-NEXT: %4 = graph.ceil %3 : tensor<4x8xf32>
  %4 = graph.ceil %3 : tensor<4x8xf32>
  // CHECK-NEXT: %5 = graph.sign %4 : tensor<4x8xf32>
  %5 = graph.sign %4 : tensor<4x8xf32>
  // CHECK-NEXT: %6 = graph.sign %i : tensor<4x8xi32>
  %6 = graph.sign %i : tensor<4x8xi32>
  // CHECK-NEXT: %7 = graph.mod %5, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %7 = graph.mod %5, %y {fmod = false} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %8 = graph.mod %7, %y {fmod = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %8 = graph.mod %7, %y {fmod = true} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %9 = graph.mod %u, %u : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xui8>
  %9 = graph.mod %u, %u : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xui8>
  func.return %8 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @along_an_axis
func.func @along_an_axis(%x: tensor<4x8xf32>, %i: tensor<4x8xi8>) -> tensor<4x3xi64> {
  // CHECK-NEXT: %0 = graph.argmax %x : tensor<4x8xf32> -> tensor<8xi64>
  %0 = graph.argmax %x {axis = 0 : i64} : tensor<4x8xf32> -> tensor<8xi64>
  // CHECK-NEXT: %1 = graph.argmin %i {axis = -1 : i64, keep_dims = true, select_last_index = true} : tensor<4x8xi8> -> tensor<4x1xi64>
  %1 = graph.argmin %i {axis = -1 : i64, keep_dims = true, select_last_index = true} : tensor<4x8xi8> -> tensor<4x1xi64>
  // CHECK-NEXT: %2 = graph.cumsum %x {axis = 1 : i64} : tensor<4x8xf32>
  %2 = graph.cumsum %x {axis = 1 : i64} : tensor<4x8xf32>
  // CHECK-NEXT: %3 = graph.cumsum %i {axis = 0 : i64, exclusive = true, reverse = true} : tensor<4x8xi8>
  %3 = graph.cumsum %i {axis = 0 : i64, exclusive = true, reverse = true} : tensor<4x8xi8>
  // CHECK-NEXT: %{{.*}} = graph.cumprod %x {axis = -1 : i64, reverse = true} : tensor<4x8xf32>
  %p = graph.cumprod %x {axis = -1 : i64, reverse = true} : tensor<4x8xf32>
  // CHECK-NEXT: %4 = graph.top_k_indices %x {k = 3 : i64} : tensor<4x8xf32> -> tensor<4x3xi64>
  %4 = graph.top_k_indices %x {k = 3 : i64, axis = -1 : i64, largest = true} : tensor<4x8xf32> -> tensor<4x3xi64>
  // CHECK-NEXT: %5 = graph.top_k_indices %i {k = 2 : i64, axis = 0 : i64, largest = false} : tensor<4x8xi8> -> tensor<2x8xi64>
  %5 = graph.top_k_indices %i {k = 2 : i64, axis = 0 : i64, largest = false} : tensor<4x8xi8> -> tensor<2x8xi64>
  func.return %4 : tensor<4x3xi64>
}

// CHECK-LABEL: func.func @bitwise
func.func @bitwise(%x: tensor<4x8xi32>, %y: tensor<8xi32>, %u: tensor<4x8xui8>) -> tensor<4x8xi32> {
  // CHECK-NEXT: %0 = graph.bitwise_and %x, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %0 = graph.bitwise_and %x, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  // CHECK-NEXT: %1 = graph.bitwise_or %0, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %1 = graph.bitwise_or %0, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  // CHECK-NEXT: %2 = graph.bitwise_xor %1, %x : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %2 = graph.bitwise_xor %1, %x : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  // CHECK-NEXT: %3 = graph.bitwise_not %u : tensor<4x8xui8>
  %3 = graph.bitwise_not %u : tensor<4x8xui8>
  // CHECK-NEXT: %4 = graph.shift_left %2, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %4 = graph.shift_left %2, %y : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  // CHECK-NEXT: %5 = graph.shift_right %3, %u : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xui8>
  %5 = graph.shift_right %3, %u : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xui8>
  func.return %4 : tensor<4x8xi32>
}
