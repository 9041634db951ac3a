// fuzz-class: hang at compile: no result within 10 s
// fuzz-signature: hang|compile|no result within N s
// fuzz-pipeline: default
// fuzz-origin: mutant 21:12374 of test/Transforms/graph-rewrite-rules.mlir:2 resize2
func.func @attention_mask(%q: tensor<2x16x8xf32>, %k: tensor<2x24x8xf32>, %v: tensor<2x24x100000xf32>, %mask: tensor<16x24xf32>) -> tensor<2x16x100000xf32> {
  %s = graph.matmul %q, %k {transpose_b = true} : (tensor<2x16x8xf32>, tensor<2x24x8xf32>) -> tensor<2x16x24xf32>
  %c = graph.constant dense<0.125> : tensor<1xf32>
  %scaled = graph.mul %s, %c : (tensor<2x16x24xf32>, tensor<1xf32>) -> tensor<2x16x24xf32>
  %masked = graph.add %mask, %scaled : (tensor<16x24xf32>, tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
  %p = graph.softmax %masked {axis = -1} : tensor<2x16x24xf32>
  %o = graph.matmul %p, %v : (tensor<2x16x24xf32>, tensor<2x24x100000xf32>) -> tensor<2x16x100000xf32>
  func.return %o : tensor<2x16x100000xf32>
}
