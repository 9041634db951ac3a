// fuzz-class: internal at compile: internal error in pass 'convert-graph-to-tir': KeyError: <BlockArgument[tensor<8x1x1xf32>] name_hint: bias, index: 2, uses: 2>
// fuzz-signature: internal|compile|internal error in pass 'convert-graph-to-tir': KeyError: <>
// fuzz-pipeline: default
// fuzz-origin: mutant 1129:8885 of test/Conversion/convert-graph-to-tir.mlir:14 value
func.func @strided_conv_epilogue(%x: tensor<1x16x14x14xf32>, %w: tensor<8x16x3x3xf32>, %bias: tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32> {
  %0 = graph.fused %x, %w, %bias : (tensor<1x16x14x14xf32>, tensor<8x16x3x3xf32>, tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32> {
  ^bb0(%a: tensor<1x16x14x14xf32>, %b: tensor<8x16x3x3xf32>, %c: tensor<8x1x1xf32>):
    %1 = graph.conv2d %a, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x14x14xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x7x7xf32>
    %2 = graph.add %1, %bias : (tensor<1x8x7x7xf32>, tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32>
    %3 = graph.relu %2 : tensor<1x8x7x7xf32>
    graph.yield %3 : tensor<1x8x7x7xf32>
  }
  func.return %0 : tensor<1x8x7x7xf32>
}
