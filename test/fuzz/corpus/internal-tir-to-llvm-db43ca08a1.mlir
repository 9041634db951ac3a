// fuzz-class: internal at tir-to-llvm: loc(unknown): 'tir.call' op a call is an expression: consume its result, or wrap a call made for its effect in tir.evaluate
// fuzz-signature: internal|tir-to-llvm|loc(unknown): 'tir.call' op a call is an expression: consume its result, or wrap a call made for its
// fuzz-pipeline: default
// fuzz-origin: mutant 1129:5551 of test/Conversion/convert-tir-to-llvm.mlir:15 value
tir.func @vector_math(%x: vector<16xf32>) -> vector<16xf32> {
  %l = tir.log %x : vector<16xf32> -> vector<16xf32>
  %e = tir.exp %l : vector<16xf32> -> vector<16xf32>
}
