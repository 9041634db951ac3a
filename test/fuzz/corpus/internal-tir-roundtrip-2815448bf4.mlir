// fuzz-class: internal at tir-roundtrip: the printed tir stage does not parse back: tir stage:2:77: #tir.blob<"blob0">: no such constant in this process (a blob's bytes are not in the text; lower from the graph again)
// fuzz-signature: internal|tir-roundtrip|the printed tir stage does not parse back: tir stage:N:N: %v<>: no such constant in this process (a 
// fuzz-pipeline: default
// fuzz-origin: mutant 1129:670 of test/Transforms/graph-bf16-fpmath.mlir:2 resize2
func.func @activations(%q: tensor<4x100000xf32>, %k: tensor<4x100000xf32>, %a: tensor<4x100000xf16>) -> (tensor<4x4xf32>, tensor<4x2xf16>) {
  %s = graph.matmul %q, %k {transpose_b = true} : (tensor<4x100000xf32>, tensor<4x100000xf32>) -> tensor<4x4xf32>
  %w = graph.constant dense<1.0> : tensor<100000x2xf16>
  %h = graph.matmul %a, %w : (tensor<4x100000xf16>, tensor<100000x2xf16>) -> tensor<4x2xf16>
  func.return %s, %h : tensor<4x4xf32>, tensor<4x2xf16>
}
