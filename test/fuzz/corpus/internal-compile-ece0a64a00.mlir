// fuzz-class: internal at compile: loc(unknown): 'tir.brgemm_tile' op k = 0 must be positive
// fuzz-signature: internal|compile|loc(unknown): 'tir.brgemm_tile' op k = N must be positive
// fuzz-pipeline: default
// fuzz-origin: CI sample mutant 0:239 of test/Transforms/graph-rewrite-rules.mlir:3 resize
func.func @attention_key_transposed(%q: tensor<16x0xf32>, %kt: tensor<0x24xf32>, %v: tensor<24x4xf32>) -> tensor<16x4xf32> {
  %s = graph.matmul %q, %kt : (tensor<16x0xf32>, tensor<0x24xf32>) -> tensor<16x24xf32>
  %c = graph.constant dense<4.0> : tensor<f32>
  %scaled = graph.div %s, %c : (tensor<16x24xf32>, tensor<f32>) -> tensor<16x24xf32>
  %p = graph.softmax %scaled {axis = 1 : i64} : tensor<16x24xf32>
  %o = graph.matmul %p, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  func.return %o : tensor<16x4xf32>
}
