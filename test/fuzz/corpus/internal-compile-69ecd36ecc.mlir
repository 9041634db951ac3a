// fuzz-class: internal at compile: internal error in pass 'graph-merge-matmul': ValueError: graph.concat: result: tensor<64x4294967328xf32> has 1099511635968 bytes, more than the 1099511627776 (1 TiB) supported
// fuzz-signature: internal|compile|internal error in pass 'graph-merge-matmul': ValueError: graph.concat: result: tensor<> has N bytes,
// fuzz-pipeline: default
// fuzz-origin: mutant 21:21223 of test/Transforms/graph-merge-matmul.mlir:0 resize
func.func @projections(%x: tensor<8x64xf32>, %wq: tensor<64x2147483648xf32>, %wk: tensor<64x2147483648xf32>, %wv: tensor<64x32xf32>) -> (tensor<8x2147483648xf32>, tensor<8x2147483648xf32>, tensor<8x32xf32>) {
  %q = graph.matmul %x, %wq : (tensor<8x64xf32>, tensor<64x2147483648xf32>) -> tensor<8x2147483648xf32>
  %k = graph.matmul %x, %wk : (tensor<8x64xf32>, tensor<64x2147483648xf32>) -> tensor<8x2147483648xf32>
  %v = graph.matmul %x, %wv : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  func.return %q, %k, %v : tensor<8x2147483648xf32>, tensor<8x2147483648xf32>, tensor<8x32xf32>
}
