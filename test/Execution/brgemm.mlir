// brgemm and list_brgemm on small blocks with known results.
// A (2 batches of 2x3) = [[1 2 3] [4 5 6]] and [[1 1 1] [2 2 2]];
// B (2 batches of 3x2) = [[1 0] [0 1] [1 1]] and [[1 2] [3 4] [5 6]].
// sum_b A_b x B_b = [[4 5] [10 11]] + [[9 12] [18 24]] = [[13 17] [28 35]].
// RUN: gc-run %s -e main | filecheck %s

tir.func @print_tensor(!tir.ptr, index)

tir.global @A : !tir.tensor<12xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]> : tensor<12xf32>
tir.global @B : !tir.tensor<12xf32> = dense<[1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<12xf32>

// CHECK:      13 17 28 35
// CHECK-NEXT: 26 34 56 70
// CHECK-NEXT: 13 17 28 35
tir.func @main() {
  %A = tir.global_ref @A : !tir.tensor<12xf32>
  %B = tir.global_ref @B : !tir.tensor<12xf32>
  %C = tir.define_tensor : !tir.tensor<4xf32>
  %c0 = tir.const 0 : index
  %c2 = tir.const 2 : index
  %c4 = tir.const 4 : index
  %c6 = tir.const 6 : index
  tir.brgemm %A, %B, %C, %c2 {m = 2 : i64, n = 2 : i64, k = 3 : i64, lda = 3 : i64, ldb = 2 : i64, ldc = 2 : i64, stride_a = 6 : i64, stride_b = 6 : i64} : !tir.tensor<12xf32>, !tir.tensor<12xf32>, !tir.tensor<4xf32>, index
  %p = tir.addr_of %C : !tir.tensor<4xf32>
  %r0 = tir.call @print_tensor(%p, %c4) : (!tir.ptr, index) -> none
  tir.evaluate %r0 : none
  // accumulate = true adds to what C holds
  tir.brgemm %A, %B, %C, %c2 {m = 2 : i64, n = 2 : i64, k = 3 : i64, lda = 3 : i64, ldb = 2 : i64, ldc = 2 : i64, stride_a = 6 : i64, stride_b = 6 : i64, accumulate = true} : !tir.tensor<12xf32>, !tir.tensor<12xf32>, !tir.tensor<4xf32>, index
  %r1 = tir.call @print_tensor(%p, %c4) : (!tir.ptr, index) -> none
  tir.evaluate %r1 : none
  // list_brgemm with the blocks given as pointer lists
  %a_list = tir.define_tensor : !tir.tensor<2x!tir.ptr>
  %b_list = tir.define_tensor : !tir.tensor<2x!tir.ptr>
  %a0 = tir.tensor_ptr %A[%c0] : !tir.tensor<12xf32> -> !tir.tensor<6xf32>
  %a1 = tir.tensor_ptr %A[%c6] : !tir.tensor<12xf32> -> !tir.tensor<6xf32>
  %b0 = tir.tensor_ptr %B[%c0] : !tir.tensor<12xf32> -> !tir.tensor<6xf32>
  %b1 = tir.tensor_ptr %B[%c6] : !tir.tensor<12xf32> -> !tir.tensor<6xf32>
  %c1 = tir.const 1 : index
  %pa0 = tir.addr_of %a0 : !tir.tensor<6xf32>
  tir.store %pa0, %a_list[%c0] : !tir.tensor<2x!tir.ptr>
  %pa1 = tir.addr_of %a1 : !tir.tensor<6xf32>
  tir.store %pa1, %a_list[%c1] : !tir.tensor<2x!tir.ptr>
  %pb0 = tir.addr_of %b0 : !tir.tensor<6xf32>
  tir.store %pb0, %b_list[%c0] : !tir.tensor<2x!tir.ptr>
  %pb1 = tir.addr_of %b1 : !tir.tensor<6xf32>
  tir.store %pb1, %b_list[%c1] : !tir.tensor<2x!tir.ptr>
  tir.list_brgemm %a_list, %b_list, %C, %c2 {m = 2 : i64, n = 2 : i64, k = 3 : i64, lda = 3 : i64, ldb = 2 : i64, ldc = 2 : i64, a_type = f32, b_type = f32} : !tir.tensor<2x!tir.ptr>, !tir.tensor<2x!tir.ptr>, !tir.tensor<4xf32>, index
  %r2 = tir.call @print_tensor(%p, %c4) : (!tir.ptr, index) -> none
  tir.evaluate %r2 : none
  tir.return
}
