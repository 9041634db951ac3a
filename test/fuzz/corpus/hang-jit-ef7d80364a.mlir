// fuzz-class: hang at jit: no result within 10 s
// fuzz-signature: hang|jit|no result within N s
// fuzz-pipeline: default
// fuzz-origin: mutant 21:1733 of test/Conversion/convert-tir-to-llvm.mlir:4 number+line+line
tir.func @packed(%A: !tir.tensor<8xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<8xf32>) {
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4294967296 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64, accumulate = true} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
}
