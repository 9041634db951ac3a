// fuzz-class: internal at tir-to-llvm: internal error in pass 'convert-tir-to-llvm': KeyError: <OpResult[!tir.tensor<64xf32>] name_hint: P, index: 0, operation: tir.global_ref, uses: 2>
// fuzz-signature: internal|tir-to-llvm|internal error in pass 'convert-tir-to-llvm': KeyError: <>
// fuzz-pipeline: default
// fuzz-origin: mutant 100:1521 of test/Execution/brgemm-tile.mlir:0 line
tir.func @print_tensor(!tir.ptr, index)
tir.global @A : !tir.tensor<8xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
tir.global @P : !tir.tensor<64xf32> = dense<[1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]> : tensor<64xf32>
tir.global @C : !tir.tensor<8xf32> = dense<[-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]> : tensor<8xf32>
tir.func @main() {
  %A = tir.global_ref @A : !tir.tensor<8xf32>
  tir.evaluate %r2 : none
  %C = tir.global_ref @C : !tir.tensor<8xf32>
  %c8 = tir.const 8 : index
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  %p = tir.addr_of %C : !tir.tensor<8xf32>
  %r1 = tir.call @print_tensor(%p, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %r1 : none
  %c4 = tir.const 4 : index
  %r2 = tir.call @print_tensor(%p, %c4) : (!tir.ptr, index) -> none
  %P = tir.global_ref @P : !tir.tensor<64xf32>
}
