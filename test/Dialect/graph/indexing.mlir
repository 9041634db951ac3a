// The indexing ops round-trip: print -> parse -> print is identical (default
// properties omitted), and the generic form parses to the same ops.
// RUN: gc-opt %s | filecheck %s
// RUN: gc-opt %s | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | gc-opt | filecheck %s

// CHECK-LABEL: func.func @gathers
func.func @gathers(%x: tensor<2x5x8xf32>, %e: tensor<2x3x8xi64>, %t: tensor<2x3x1xi32>, %p: tensor<4x3xi8>) -> tensor<2x3x8xf32> {
  // CHECK-NEXT: %0 = graph.gather_elements %x, %e {axis = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x8xi64>) -> tensor<2x3x8xf32>
  %0 = graph.gather_elements %x, %e {axis = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x8xi64>) -> tensor<2x3x8xf32>
  // CHECK-NEXT: %1 = graph.gather_elements %x, %e : (tensor<2x5x8xf32>, tensor<2x3x8xi64>) -> tensor<2x3x8xf32>
  %1 = graph.gather_elements %x, %e {axis = 0 : i64} : (tensor<2x5x8xf32>, tensor<2x3x8xi64>) -> tensor<2x3x8xf32>
  // CHECK-NEXT: %2 = graph.gather_nd %x, %t {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi32>) -> tensor<2x3x8xf32>
  %2 = graph.gather_nd %x, %t {batch_dims = 1 : i64} : (tensor<2x5x8xf32>, tensor<2x3x1xi32>) -> tensor<2x3x8xf32>
  // CHECK-NEXT: %3 = graph.gather_nd %x, %p : (tensor<2x5x8xf32>, tensor<4x3xi8>) -> tensor<4xf32>
  %3 = graph.gather_nd %x, %p : (tensor<2x5x8xf32>, tensor<4x3xi8>) -> tensor<4xf32>
  func.return %2 : tensor<2x3x8xf32>
}

// CHECK-LABEL: func.func @scatters
func.func @scatters(%x: tensor<4x8xf32>, %i: tensor<4x3xi64>, %u: tensor<4x3xf32>, %t: tensor<3x1xi32>, %v: tensor<3x8xf32>, %b: tensor<4x8xi1>, %c: tensor<3x8xi1>) -> tensor<4x8xi1> {
  // CHECK-NEXT: %0 = graph.scatter_elements %x, %i, %u {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
  %0 = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %1 = graph.scatter_elements %0, %i, %u {axis = -1 : i64, reduction = "mul"} : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
  %1 = graph.scatter_elements %0, %i, %u {axis = -1 : i64, reduction = "mul"} : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %2 = graph.scatter_nd %1, %t, %v {reduction = "add"} : (tensor<4x8xf32>, tensor<3x1xi32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  %2 = graph.scatter_nd %1, %t, %v {reduction = "add"} : (tensor<4x8xf32>, tensor<3x1xi32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %3 = graph.scatter_nd %b, %t, %c : (tensor<4x8xi1>, tensor<3x1xi32>, tensor<3x8xi1>) -> tensor<4x8xi1>
  %3 = graph.scatter_nd %b, %t, %c : (tensor<4x8xi1>, tensor<3x1xi32>, tensor<3x8xi1>) -> tensor<4x8xi1>
  func.return %3 : tensor<4x8xi1>
}

// A lookup's result takes the table's element type and the input's shape.
// CHECK-LABEL: func.func @lookup
// CHECK-NEXT: %0 = graph.lookup %x {table = dense<7> : tensor<256xui8>} : tensor<2x3xui8> -> tensor<2x3xui8>
// CHECK-NEXT: %1 = graph.lookup %s {table = dense<2.500000e-01> : tensor<256xf32>} : tensor<4xi8> -> tensor<4xf32>
func.func @lookup(%x: tensor<2x3xui8>, %s: tensor<4xi8>) -> tensor<4xf32> {
  %0 = graph.lookup %x {table = dense<7> : tensor<256xui8>} : tensor<2x3xui8> -> tensor<2x3xui8>
  %1 = graph.lookup %s {table = dense<0.25> : tensor<256xf32>} : tensor<4xi8> -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
