// fuzz-class: internal at llvm-roundtrip: the printed llvm stage changes when parsed and printed again
// fuzz-signature: internal|llvm-roundtrip|the printed llvm stage changes when parsed and printed again
// fuzz-pipeline: default
// fuzz-origin: mutant 1:16 of test/Transforms/graph-fuse.mlir:0 resize2
func.func @chain(%x: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<1x1xf32>) {
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %0 = graph.mul %x, %two : (tensor<1x1xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %1 = graph.relu %0 : tensor<1x1xf32>
  %2 = graph.exp %1 : tensor<1x1xf32>
  %3 = graph.sub %2, %x : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  func.return %3, %1 : tensor<1x1xf32>, tensor<1x1xf32>
}
