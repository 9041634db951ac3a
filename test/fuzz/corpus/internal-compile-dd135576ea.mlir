// fuzz-class: internal at compile: internal error in pass 'graph-rewrite-rules': OverflowError: float too large to pack with f format
// fuzz-signature: internal|compile|internal error in pass 'graph-rewrite-rules': OverflowError: float too large to pack with f format
// fuzz-pipeline: default
// fuzz-origin: mutant 21:18355 of test/Transforms/graph-rewrite-rules.mlir:3 number+resize+resize2
func.func @attention_key_transposed(%q: tensor<16x0xf32>, %kt: tensor<0x24xf32>, %v: tensor<24x2147483648xf32>) -> tensor<16x2147483648xf32> {
  %s = graph.matmul %q, %kt : (tensor<16x0xf32>, tensor<0x24xf32>) -> tensor<16x24xf32>
  %c = graph.constant dense<1.0e-45> : tensor<f32>
  %scaled = graph.div %s, %c : (tensor<16x24xf32>, tensor<f32>) -> tensor<16x24xf32>
  %p = graph.softmax %scaled {axis = 1 : i64} : tensor<16x24xf32>
  %o = graph.matmul %p, %v : (tensor<16x24xf32>, tensor<24x2147483648xf32>) -> tensor<16x2147483648xf32>
  func.return %o : tensor<16x2147483648xf32>
}
