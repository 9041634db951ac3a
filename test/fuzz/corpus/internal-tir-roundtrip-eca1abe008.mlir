// fuzz-class: internal at tir-roundtrip: the printed tir stage does not parse back: tir stage:131:11: 'tir.brgemm_tile' op a 8192 x 16 tile needs 8192 vector accumulators, more than 256
// fuzz-signature: internal|tir-roundtrip|the printed tir stage does not parse back: tir stage:N:N: 'tir.brgemm_tile' op a N x N tile needs N 
// fuzz-pipeline: default
// fuzz-origin: mutant 1129:8935 of test/Transforms/graph-integer-matmul.mlir:0 resize2
func.func @per_column(%qa: tensor<2147483648x8xui8>, %za: tensor<ui8>, %sa: tensor<f32>, %sb: tensor<16xf32>) -> tensor<2147483648x16xf32> {
  %qb = graph.constant dense<3> : tensor<8x16xi8>
  %af = graph.cast %qa : tensor<2147483648x8xui8> -> tensor<2147483648x8xf32>
  %zaf = graph.cast %za : tensor<ui8> -> tensor<f32>
  %ac = graph.sub %af, %zaf : (tensor<2147483648x8xf32>, tensor<f32>) -> tensor<2147483648x8xf32>
  %a = graph.mul %ac, %sa : (tensor<2147483648x8xf32>, tensor<f32>) -> tensor<2147483648x8xf32>
  %bf = graph.cast %qb : tensor<8x16xi8> -> tensor<8x16xf32>
  %b = graph.mul %bf, %sb : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %y = graph.matmul %a, %b : (tensor<2147483648x8xf32>, tensor<8x16xf32>) -> tensor<2147483648x16xf32>
  func.return %y : tensor<2147483648x16xf32>
}
