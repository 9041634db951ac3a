// fuzz-class: traceback at verify: ZeroDivisionError: integer modulo by zero [layout.py:infer_type]
// fuzz-signature: traceback|verify|ZeroDivisionError|layout.py:infer_type
// fuzz-pipeline: builtin.module(graph-rewrite-rules,convert-graph-to-tir,tir-plan-memory,tir-outline-parallel,tir-parallel-regions,tir-legalize-types,tir-expand-math,convert-tir-to-llvm)
// fuzz-origin: mutant 1129:5371 of test/Conversion/convert-graph-to-tir.mlir:18 resize2
func.func @blocked_conv(%x: tensor<1x4x14x14x0xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x4x14x14x0xf32> {
  %0 = graph.blocked_conv2d %x, %w {padding = array<i64>} : (tensor<1x4x14x14x0xf32>, tensor<32x32x3x3xf32>) -> tensor<1x4x14x14x0xf32>
  func.return %0 : tensor<1x4x14x14x0xf32>
}
