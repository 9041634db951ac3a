// fuzz-class: internal at llvm-roundtrip: the printed llvm stage does not parse back: llvm stage:1422:21: error: operand is used with type vector<16xi1>, but has been previously used or defined with type i1
// fuzz-signature: internal|llvm-roundtrip|the printed llvm stage does not parse back: llvm stage:N:N: error: operand is used with type vector<
// fuzz-pipeline: default
// fuzz-origin: mutant 1:262 of examples/transformer.mlir:0 flip
func.func @main(%x: tensor<32x64xf32>,
                %g1: tensor<64xf32>, %b1: tensor<64xf32>,
                %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>,
                %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>,
                %g2: tensor<64xf32>, %b2: tensor<64xf32>,
                %w_up: tensor<64x256xf32>, %bias_up: tensor<256xf32>,
                %w_down: tensor<256x64xf32>, %bias_down: tensor<64xf32>) -> tensor<32x64xf32> {
  %n1 = graph.layer_norm %x, %g1, %b1 {axis = 1 : i64} : (tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
  %q = graph.matmul %n1, %wq : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %k = graph.matmul %n1, %wk : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %v = graph.matmul %n1, %wv : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %q4 = graph.reshape %q : tensor<32x64xf32> -> tensor<32x4x16xf32>
  %k4 = graph.reshape %k : tensor<32x64xf32> -> tensor<32x4x16xf32>
  %v4 = graph.reshape %v : tensor<32x64xf32> -> tensor<32x4x16xf32>
  %qh = graph.transpose %q4 {perm = array<i64: 1, 0, 2>} : tensor<32x4x16xf32> -> tensor<4x32x16xf32>
  %kh = graph.transpose %k4 {perm = array<i64: 1, 0, 2>} : tensor<32x4x16xf32> -> tensor<4x32x16xf32>
  %vh = graph.transpose %v4 {perm = array<i64: 1, 0, 2>} : tensor<32x4x16xf32> -> tensor<4x32x16xf32>
  %scores = graph.matmul %qh, %kh {transpose_b = true} : (tensor<4x32x16xf32>, tensor<4x32x16xf32>) -> tensor<4x32x32xf32>
  %scale = graph.constant dense<0.25> : tensor<1xf32>
  %scaled = graph.mul %scores, %scale : (tensor<4x32x32xf32>, tensor<1xf32>) -> tensor<4x32x32xf32>
  %weights = graph.softmax %scaled {axis = -1 : i64} : tensor<4x32x32xf32>
  %context = graph.matmul %weights, %vh : (tensor<4x32x32xf32>, tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  %merged = graph.transpose %context {perm = array<i64: 1, 0, 2>} : tensor<4x32x16xf32> -> tensor<32x4x16xf32>
  %flat = graph.reshape %merged : tensor<32x4x16xf32> -> tensor<32x64xf32>
  %attn = graph.matmul %flat, %wo : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %h = graph.add %x, %attn : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %n2 = graph.layer_norm %h, %g2, %b2 {axis = 1 : i64} : (tensor<32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
  %up = graph.matmul %n2, %w_up : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %up_b = graph.add %up, %bias_up : (tensor<32x256xf32>, tensor<256xf32>) -> tensor<32x256xf32>
  %act = graph.gelu %up_b : tensor<32x256xf32>
  %down = graph.matmul %act, %w_down : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
  %down_b = graph.add %down, %bias_down : (tensor<32x64xf32>, tensor<64xf32>) -> tensor<32x64xf32>
  %out = graph.add %h, %down_b : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  func.return %out : tensor<32x64xf32>
}
