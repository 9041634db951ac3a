// A small CNN: conv2d + relu + max_pool2d twice, flatten, then a dense layer.
func.func @main(%image: tensor<2x3x16x16xf32>,
                %k1: tensor<8x3x3x3xf32>, %k2: tensor<16x8x3x3xf32>,
                %w: tensor<256x10xf32>, %b: tensor<10xf32>) -> tensor<2x10xf32> {
  %c1 = graph.conv2d %image, %k1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x16x16xf32>
  %r1 = graph.relu %c1 : tensor<2x8x16x16xf32>
  %p1 = graph.max_pool2d %r1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x8x16x16xf32> -> tensor<2x8x8x8xf32>
  %c2 = graph.conv2d %p1, %k2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x8x8xf32>
  %r2 = graph.relu %c2 : tensor<2x16x8x8xf32>
  %p2 = graph.max_pool2d %r2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x16x8x8xf32> -> tensor<2x16x4x4xf32>
  %flat = graph.reshape %p2 : tensor<2x16x4x4xf32> -> tensor<2x256xf32>
  %logits = graph.matmul %flat, %w : (tensor<2x256xf32>, tensor<256x10xf32>) -> tensor<2x10xf32>
  %out = graph.add %logits, %b : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  func.return %out : tensor<2x10xf32>
}
