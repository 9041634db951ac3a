// fuzz-class: internal at llvm-roundtrip: the printed llvm stage does not parse back: llvm stage:155:5: error: Expected attribute i1 but got vector<16xi1>
// fuzz-signature: internal|llvm-roundtrip|the printed llvm stage does not parse back: llvm stage:N:N: error: Expected attribute iN but got vec
// fuzz-pipeline: default
// fuzz-origin: mutant 1:152 of test/Transforms/graph-schedule-ops.mlir:0 op-family2+op-family2
func.func @branches(%x: tensor<128x128xf32>, %y: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %a1 = graph.relu %x : tensor<128x128xf32>
  %b1 = graph.matmul %y, %w : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %a2 = graph.add %a1, %x : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %b2 = graph.relu %b1 : tensor<128x128xf32>
  %out = graph.maximum %a2, %b2 : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %out : tensor<128x128xf32>
}
