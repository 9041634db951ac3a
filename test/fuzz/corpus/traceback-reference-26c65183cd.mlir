// fuzz-class: traceback at reference: ValueError: the reference interpreter does not know 'arith.constant' [reference.py:_run_block]
// fuzz-signature: traceback|reference|ValueError|reference.py:_run_block
// fuzz-pipeline: default
// fuzz-origin: mutant 20261129:12596 of test/gc-opt/split-input-file.mlir:2 dtype
func.func @three() {
  %0 = "arith.constant"() <{value = 1 : i32}> : () -> i32
  func.return
}
