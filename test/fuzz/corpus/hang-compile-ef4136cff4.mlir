// fuzz-class: hang at compile: no result within 10 s
// fuzz-signature: hang|compile|no result within N s
// fuzz-pipeline: default
// fuzz-origin: mutant 20261129:8544 of test/Transforms/graph-integer-matmul.mlir:5 resize2
func.func @conv_qdq(%qx: tensor<1x100000x6x6xui8>, %sx: tensor<f32>, %sw: tensor<16x1x1x1xf32>) -> tensor<1x16x6x6xf32> {
  %zx = graph.constant dense<7> : tensor<ui8>
  %qw = graph.constant dense<2> : tensor<16x100000x3x3xi8>
  %zw = graph.constant dense<0> : tensor<16x1x1x1xi8>
  %xf = graph.cast %qx : tensor<1x100000x6x6xui8> -> tensor<1x100000x6x6xf32>
  %zxf = graph.cast %zx : tensor<ui8> -> tensor<f32>
  %xc = graph.sub %xf, %zxf : (tensor<1x100000x6x6xf32>, tensor<f32>) -> tensor<1x100000x6x6xf32>
  %x = graph.mul %xc, %sx : (tensor<1x100000x6x6xf32>, tensor<f32>) -> tensor<1x100000x6x6xf32>
  %wf = graph.cast %qw : tensor<16x100000x3x3xi8> -> tensor<16x100000x3x3xf32>
  %zwf = graph.cast %zw : tensor<16x1x1x1xi8> -> tensor<16x1x1x1xf32>
  %wc = graph.sub %wf, %zwf : (tensor<16x100000x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x100000x3x3xf32>
  %w = graph.mul %wc, %sw : (tensor<16x100000x3x3xf32>, tensor<16x1x1x1xf32>) -> tensor<16x100000x3x3xf32>
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x100000x6x6xf32>, tensor<16x100000x3x3xf32>) -> tensor<1x16x6x6xf32>
  func.return %y : tensor<1x16x6x6xf32>
}
