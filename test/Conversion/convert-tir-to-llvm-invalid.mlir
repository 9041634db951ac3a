// What the conversion cannot legalize is a located diagnostic.
// RUN: gc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-tir-to-llvm)'

tir.func @not_outlined(%A: !tir.tensor<4xf32>, %x: f32) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c4 = tir.const 4 : index
  // expected-error @+1 {{'tir.for' op is a parallel loop: run tir-outline-parallel before convert-tir-to-llvm}}
  tir.for %i = %c0 to %c4 step %c1 parallel {
    tir.store %x, %A[%i] : !tir.tensor<4xf32>
  }
  tir.return
}

// -----

tir.func @foreign_op() -> i32 {
  // expected-error @+1 {{'arith.constant' op cannot be converted to the llvm dialect (no pattern; legal dialects: llvm, builtin)}}
  %0 = arith.constant 1 : i32
  tir.return %0 : i32
}

// -----

// expected-error @+1 {{'tir.func' op declares @mystery, which is neither defined in this module nor a runtime function}}
tir.func @mystery(i32)

// -----

// expected-error @+1 {{'tir.func' op declares @print_int with a signature different from the runtime's (i32) -> ()}}
tir.func @print_int(f32)

// -----

tir.func @bf16_brgemm(%A: !tir.tensor<16xbf16>, %C: !tir.tensor<16xf32>, %n: index) {
  // expected-error @+1 {{'tir.brgemm' op brgemm computes f32 only, not bf16}}
  tir.brgemm %A, %A, %C, %n {m = 4 : i64, n = 4 : i64, k = 4 : i64, lda = 4 : i64, ldb = 4 : i64, ldc = 4 : i64, stride_a = 0 : i64, stride_b = 0 : i64} : !tir.tensor<16xbf16>, !tir.tensor<16xbf16>, !tir.tensor<16xf32>, index
  tir.return
}

// -----

tir.func @zero_elem_bits(%v: vector<8xf32>) -> vector<8xf32> {
  // expected-error @+1 {{'tir.unpack_low' op elem_bits = 0 must be a positive multiple of the 32-bit element and divide 128}}
  %0 = tir.unpack_low %v, %v {elem_bits = 0 : i64} : vector<8xf32>
  tir.return %0 : vector<8xf32>
}
