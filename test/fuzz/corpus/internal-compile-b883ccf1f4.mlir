// fuzz-class: internal at compile: internal error in pass 'convert-graph-to-tir': ZeroDivisionError: division by zero
// fuzz-signature: internal|compile|internal error in pass 'convert-graph-to-tir': ZeroDivisionError: division by zero
// fuzz-pipeline: default
// fuzz-origin: mutant 2:676 of examples/mlp.mlir:0 resize (minimized by hand: a matmul over K = 0)
func.func @main(%x: tensor<4x0xf32>, %w: tensor<0x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.matmul %x, %w : (tensor<4x0xf32>, tensor<0x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
