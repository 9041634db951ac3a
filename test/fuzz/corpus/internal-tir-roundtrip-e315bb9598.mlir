// fuzz-class: internal at tir-roundtrip: the printed tir stage does not parse back: tir stage:99:11: 'tir.brgemm_tile' op ldc = 16 must be at least n = 32
// fuzz-signature: internal|tir-roundtrip|the printed tir stage does not parse back: tir stage:N:N: 'tir.brgemm_tile' op ldc = N must be at le
// fuzz-pipeline: default
// fuzz-origin: mutant 1129:13852 of test/Transforms/graph-block-layout.mlir:8 resize
func.func @pixel_reductions(%x: tensor<1x32x1x1xf32>) -> (tensor<1x24xf32>, tensor<1x1x1xf32>) {
  %w = graph.constant dense<0.01> : tensor<24x32x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x32x1x1xf32>, tensor<24x32x1x1xf32>) -> tensor<1x24x1x1xf32>
  %1 = graph.reduce_mean %0 {axes = array<i64: 2, 3>, keep_dims = true} : tensor<1x24x1x1xf32> -> tensor<1x24x1x1xf32>
  %2 = graph.sigmoid %1 : tensor<1x24x1x1xf32>
  %3 = graph.mul %0, %2 : (tensor<1x24x1x1xf32>, tensor<1x24x1x1xf32>) -> tensor<1x24x1x1xf32>
  %4 = graph.reduce_max %3 {axes = array<i64: -1, -2>} : tensor<1x24x1x1xf32> -> tensor<1x24xf32>
  %5 = graph.reduce_sum %3 {axes = array<i64: 1>} : tensor<1x24x1x1xf32> -> tensor<1x1x1xf32>
  func.return %4, %5 : tensor<1x24xf32>, tensor<1x1x1xf32>
}
