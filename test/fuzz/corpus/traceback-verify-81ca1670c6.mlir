// fuzz-class: traceback at verify: NotImplementedError: [parsing.py:verify_module]
// fuzz-signature: traceback|verify|NotImplementedError|parsing.py:verify_module
// fuzz-pipeline: default
// fuzz-origin: mutant 100:1947 of test/gc-opt/split-input-file.mlir:2 dtype
func.func @three() {
  %0 = "arith.constant"() <{value = 1 : f80}> : () -> i32
  func.return
}
