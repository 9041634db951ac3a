// fuzz-class: internal at compile: internal error in pass 'graph-rewrite-rules': ZeroDivisionError: float division by zero
// fuzz-signature: internal|compile|internal error in pass 'graph-rewrite-rules': ZeroDivisionError: float division by zero
// fuzz-pipeline: default
// fuzz-origin: mutant 21:1159 of test/Transforms/graph-rewrite-rules.mlir:3 number
func.func @attention_key_transposed(%q: tensor<16x8xf32>, %kt: tensor<8x24xf32>, %v: tensor<24x4xf32>) -> tensor<16x4xf32> {
  %s = graph.matmul %q, %kt : (tensor<16x8xf32>, tensor<8x24xf32>) -> tensor<16x24xf32>
  %c = graph.constant dense<0.0> : tensor<f32>
  %scaled = graph.div %s, %c : (tensor<16x24xf32>, tensor<f32>) -> tensor<16x24xf32>
  %p = graph.softmax %scaled {axis = 1 : i64} : tensor<16x24xf32>
  %o = graph.matmul %p, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  func.return %o : tensor<16x4xf32>
}
