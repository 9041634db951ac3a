// Multi-head self-attention: 4 heads of 16 over a sequence of 32 tokens.
// Q, K, V projections; split heads (reshape + transpose); scaled dot
// product (matmul with K transposed, scaling, softmax); merge heads; output
// projection.
func.func @main(%x: tensor<32x64xf32>,
                %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>,
                %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>) -> tensor<32x64xf32> {
  %q = graph.matmul %x, %wq : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %k = graph.matmul %x, %wk : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  %v = graph.matmul %x, %wv : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
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
  %out = graph.matmul %flat, %wo : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
  func.return %out : tensor<32x64xf32>
}
