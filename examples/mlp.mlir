// A 3-layer MLP: (matmul + bias add + relu) x 2, then matmul + bias add.
// gc-run examples/mlp.mlir --random-inputs --check-reference --bench 20
func.func @main(%x: tensor<64x256xf32>,
                %w1: tensor<256x512xf32>, %b1: tensor<512xf32>,
                %w2: tensor<512x256xf32>, %b2: tensor<256xf32>,
                %w3: tensor<256x64xf32>, %b3: tensor<64xf32>) -> tensor<64x64xf32> {
  %0 = graph.matmul %x, %w1 : (tensor<64x256xf32>, tensor<256x512xf32>) -> tensor<64x512xf32>
  %1 = graph.add %0, %b1 : (tensor<64x512xf32>, tensor<512xf32>) -> tensor<64x512xf32>
  %2 = graph.relu %1 : tensor<64x512xf32>
  %3 = graph.matmul %2, %w2 : (tensor<64x512xf32>, tensor<512x256xf32>) -> tensor<64x256xf32>
  %4 = graph.add %3, %b2 : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %5 = graph.relu %4 : tensor<64x256xf32>
  %6 = graph.matmul %5, %w3 : (tensor<64x256xf32>, tensor<256x64xf32>) -> tensor<64x64xf32>
  %7 = graph.add %6, %b3 : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  func.return %7 : tensor<64x64xf32>
}
