// fuzz-class: internal at llvm-roundtrip: the printed llvm stage does not parse back: llvm stage:41:11: error: 'llvm.fcmp' op operand 'lhs' at position 0 does not verify: Unexpected attribute vector<16xf32>
// fuzz-signature: internal|llvm-roundtrip|the printed llvm stage does not parse back: llvm stage:N:N: error: 'llvm.fcmp' op operand 'lhs' at p
// fuzz-pipeline: default
// fuzz-origin: mutant 1:39 of test/Transforms/graph-fuse.mlir:0 dim2
func.func @chain(%x: tensor<169x64xf32>) -> (tensor<169x64xf32>, tensor<169x64xf32>) {
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %0 = graph.mul %x, %two : (tensor<169x64xf32>, tensor<1xf32>) -> tensor<169x64xf32>
  %1 = graph.relu %0 : tensor<169x64xf32>
  %2 = graph.exp %1 : tensor<169x64xf32>
  %3 = graph.sub %2, %x : (tensor<169x64xf32>, tensor<169x64xf32>) -> tensor<169x64xf32>
  func.return %3, %1 : tensor<169x64xf32>, tensor<169x64xf32>
}
