// --mlir-elide-elementsattrs-if-larger=N prints dense constants of more than
// N elements as dense_resource<__elided__> (smaller ones as they are).
// RUN: gc-opt %s --mlir-elide-elementsattrs-if-larger=4 | filecheck %s
// RUN: gc-opt %s | filecheck %s --check-prefix=FULL

// CHECK:      %big = graph.constant dense_resource<__elided__> : tensor<2x4xf32>
// CHECK-NEXT: %small = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// FULL:       %big = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00
func.func @main() -> (tensor<2x4xf32>, tensor<2xf32>) {
  %big = graph.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %small = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %big, %small : tensor<2x4xf32>, tensor<2xf32>
}
