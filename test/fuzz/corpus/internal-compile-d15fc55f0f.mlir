// fuzz-class: internal at compile: internal error in pass 'canonicalize': MemoryError:
// fuzz-signature: internal|compile|internal error in pass 'canonicalize': MemoryError:
// fuzz-pipeline: default
// fuzz-origin: mutant 11:379 of test/Transforms/canonicalize.mlir:0 resize
func.func @mul_zero(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2147483648x4x8xf32>) {
  %zero = graph.constant dense<0.0> : tensor<1xf32>
  %0 = graph.mul %x, %zero : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %zeros = graph.broadcast_to %zero : tensor<1xf32> -> tensor<2147483648x4x8xf32>
  %1 = graph.mul %zeros, %x : (tensor<2147483648x4x8xf32>, tensor<4x8xf32>) -> tensor<2147483648x4x8xf32>
  func.return %0, %1 : tensor<4x8xf32>, tensor<2147483648x4x8xf32>
}
