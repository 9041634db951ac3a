// fuzz-class: traceback at jit: RuntimeError: LLVM IR parsing error <string>:8:25: error: bitwidth for integer type out of range %".4" = getelementptr i0, ptr %".1", i64 0 ^ [module.py:parse_assembly]
// fuzz-signature: traceback|jit|RuntimeError|module.py:parse_assembly
// fuzz-pipeline: default
// fuzz-origin: mutant 20261129:12342 of test/Dialect/tir/invalid.mlir:54 dim+dtype+dtype
tir.func @prefetch_rank(%A: !tir.tensor<8xi0>) {
  %i = tir.const 0 : index
  tir.prefetch %A[%i] : !tir.tensor<8xi0>
}
