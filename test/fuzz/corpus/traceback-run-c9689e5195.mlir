// fuzz-class: traceback at run: UnicodeEncodeError: 'ascii' codec can't encode character '\xe9' in position 0: ordinal not in range(128) [executionengine.py:get_function_address]
// fuzz-signature: traceback|run|UnicodeEncodeError|executionengine.py:get_function_address
// fuzz-pipeline: default
// fuzz-origin: mutant 1129202:12553 of test/Conversion/convert-graph-to-tir.mlir:12 flip
func.func @é(%x: tensor<3x100xf32>) -> tensor<3xi64> {
  %0 = graph.argmax %x {axis = 1 : i64} : tensor<3x100xf32> -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
