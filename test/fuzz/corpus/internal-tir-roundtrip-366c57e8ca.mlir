// fuzz-class: internal at tir-roundtrip: the printed tir stage changes when parsed and printed again
// fuzz-signature: internal|tir-roundtrip|the printed tir stage changes when parsed and printed again
// fuzz-pipeline: default
// fuzz-origin: mutant 1:762 of test/Conversion/convert-graph-to-tir.mlir:4 dtype
func.func @columns(%x: tensor<300x128xf16>) -> tensor<128xf16> {
  %0 = graph.reduce_max %x {axes = array<i64: 0>} : tensor<300x128xf16> -> tensor<128xf16>
  func.return %0 : tensor<128xf16>
}
