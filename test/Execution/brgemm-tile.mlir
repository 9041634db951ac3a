// tir.brgemm_tile runs a generated microkernel: C[2, 3] (+)= A[2, 4] x P,
// P a packed B panel of nr = 16 columns (here at most 3 used, the rest 0);
// columns of C past n = 3 are never written.
// A = [[1 2 3 4] [5 6 7 8]], B = [[1 0 1] [0 1 1] [1 1 0] [2 0 1]]:
// A x B = [[12 5 7] [28 13 19]].
// With a tap grid (a convolution's filter taps): one level of 2 taps, steps
// (1, 1), W = [2 3], X = [1 2 3 4 5]: C[j] = 2 * X[j] + 3 * X[j + 1] = [8 13 18].
// Two levels, (2, 2, 3) outside (2, 1, 1): offset pairs (0, 0) (1, 1) (2, 3)
// (3, 4), W2 = [1 2 3 4], X2 = [1 .. 8]:
// C[j] = X2[j] + 2 X2[j + 1] + 3 X2[j + 3] + 4 X2[j + 4] = [37 47 57].
// RUN: gc-run %s -e main | filecheck %s
// RUN: env GC_TARGET=generic gc-run %s -e main | filecheck %s

tir.func @print_tensor(!tir.ptr, index)

tir.global @A : !tir.tensor<8xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
tir.global @P : !tir.tensor<64xf32> = dense<[1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]> : tensor<64xf32>
tir.global @C : !tir.tensor<8xf32> = dense<[-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]> : tensor<8xf32>
tir.global @W : !tir.tensor<2xf32> = dense<[2.0, 3.0]> : tensor<2xf32>
tir.global @X : !tir.tensor<5xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
tir.global @W2 : !tir.tensor<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
tir.global @X2 : !tir.tensor<8xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>

// CHECK:      12 5 7 -1 28 13 19 -1
// CHECK-NEXT: 24 10 14 -1 56 26 38 -1
// CHECK-NEXT: 8 13 18 -1
// CHECK-NEXT: 37 47 57 -1
tir.func @main() {
  %A = tir.global_ref @A : !tir.tensor<8xf32>
  %P = tir.global_ref @P : !tir.tensor<64xf32>
  %C = tir.global_ref @C : !tir.tensor<8xf32>
  %c8 = tir.const 8 : index
  // A[i, l] at i * 4 + l; C rows 4 apart, 3 columns written
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  %p = tir.addr_of %C : !tir.tensor<8xf32>
  %r0 = tir.call @print_tensor(%p, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %r0 : none
  // accumulate = true adds to what C holds; a prefetch (of B itself here)
  // changes nothing in the result
  tir.brgemm_tile %A, %P, %C prefetch %P : !tir.tensor<64xf32> {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64, accumulate = true} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  %r1 = tir.call @print_tensor(%p, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %r1 : none
  %W = tir.global_ref @W : !tir.tensor<2xf32>
  %X = tir.global_ref @X : !tir.tensor<5xf32>
  tir.brgemm_tile %W, %X, %C {m = 1 : i64, n = 3 : i64, k = 1 : i64, lanes = 4 : i64, a_row = 1 : i64, a_k = 1 : i64, ldb = 3 : i64, ldc = 3 : i64, taps = array<i64: 2, 1, 1>} : !tir.tensor<2xf32>, !tir.tensor<5xf32>, !tir.tensor<8xf32>
  %c4 = tir.const 4 : index
  %r2 = tir.call @print_tensor(%p, %c4) : (!tir.ptr, index) -> none
  tir.evaluate %r2 : none
  %W2 = tir.global_ref @W2 : !tir.tensor<4xf32>
  %X2 = tir.global_ref @X2 : !tir.tensor<8xf32>
  tir.brgemm_tile %W2, %X2, %C {m = 1 : i64, n = 3 : i64, k = 1 : i64, lanes = 4 : i64, a_row = 1 : i64, a_k = 1 : i64, ldb = 3 : i64, ldc = 3 : i64, taps = array<i64: 2, 2, 3, 2, 1, 1>} : !tir.tensor<4xf32>, !tir.tensor<8xf32>, !tir.tensor<8xf32>
  %r3 = tir.call @print_tensor(%p, %c4) : (!tir.ptr, index) -> none
  tir.evaluate %r3 : none
  tir.return
}
