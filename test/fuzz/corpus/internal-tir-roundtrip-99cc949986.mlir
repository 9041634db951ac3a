// fuzz-class: internal at tir-roundtrip: the printed tir stage does not parse back: tir stage:71:13: 'tir.brgemm_tile' op !tir.tensor<112xf16> is neither C's element type f32 nor i32 pairs
// fuzz-signature: internal|tir-roundtrip|the printed tir stage does not parse back: tir stage:N:N: 'tir.brgemm_tile' op !tir.tensor<> is neit
// fuzz-pipeline: default
// fuzz-origin: mutant 1129202:822 of test/Transforms/graph-rewrite-rules.mlir:9 dtype
func.func @attention_decode_groups(%q: tensor<1x1x6x8xf16>, %q2: tensor<1x6x1x8xf16>, %p: tensor<1x6x16x8xf16>, %k: tensor<1x2x24x8xf16>, %v: tensor<1x2x24x4xf16>, %m: tensor<1x6x1x24xf16>, %s: tensor<1x1x1x24xf16>) -> (tensor<1x1x6x4xf16>, tensor<1x6x1x4xf16>, tensor<1x6x16x4xf16>) {
  %o = graph.attention %q, %k, %v, %m {scale = 0.5 : f32, sequence_major = ["query", "result"]} : (tensor<1x1x6x8xf16>, tensor<1x2x24x8xf16>, tensor<1x2x24x4xf16>, tensor<1x6x1x24xf16>) -> tensor<1x1x6x4xf16>
  %o2 = graph.attention %q2, %k, %v, %s : (tensor<1x6x1x8xf16>, tensor<1x2x24x8xf16>, tensor<1x2x24x4xf16>, tensor<1x1x1x24xf16>) -> tensor<1x6x1x4xf16>
  %o3 = graph.attention %p, %k, %v : (tensor<1x6x16x8xf16>, tensor<1x2x24x8xf16>, tensor<1x2x24x4xf16>) -> tensor<1x6x16x4xf16>
  func.return %o, %o2, %o3 : tensor<1x1x6x4xf16>, tensor<1x6x1x4xf16>, tensor<1x6x16x4xf16>
}
