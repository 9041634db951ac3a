// fuzz-class: traceback at run: ValueError: argument #2 ('%sx') of @conv_run_time_zero_point must be a numpy array for !tir.tensor<1xbf16>, got float32 [program.py:check_array]
// fuzz-signature: traceback|run|ValueError|program.py:check_array
// fuzz-pipeline: builtin.module(graph-block-layout,convert-graph-to-tir,tir-plan-memory,tir-outline-parallel,tir-parallel-regions,tir-legalize-types,tir-expand-math,convert-tir-to-llvm)
// fuzz-origin: mutant 29112026:3562 of test/Transforms/graph-integer-matmul.mlir:9 dtype
func.func @conv_run_time_zero_point(%qx: tensor<1x8x6x6xui8>, %zx: tensor<ui8>, %sx: tensor<bf16>) -> tensor<1x16x4x4xbf16> {
  %qw = graph.constant dense<3> : tensor<16x8x3x3xi8>
  %xf = graph.cast %qx : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xbf16>
  %zxf = graph.cast %zx : tensor<ui8> -> tensor<bf16>
  %xc = graph.sub %xf, %zxf : (tensor<1x8x6x6xbf16>, tensor<bf16>) -> tensor<1x8x6x6xbf16>
  %x = graph.mul %xc, %sx : (tensor<1x8x6x6xbf16>, tensor<bf16>) -> tensor<1x8x6x6xbf16>
  %wf = graph.cast %qw : tensor<16x8x3x3xi8> -> tensor<16x8x3x3xbf16>
  %w = graph.mul %wf, %sx : (tensor<16x8x3x3xbf16>, tensor<bf16>) -> tensor<16x8x3x3xbf16>
  %y = graph.conv2d %x, %w : (tensor<1x8x6x6xbf16>, tensor<16x8x3x3xbf16>) -> tensor<1x16x4x4xbf16>
  func.return %y : tensor<1x16x4x4xbf16>
}
