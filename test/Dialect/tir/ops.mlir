// Every Tensor IR construct in its custom form; print -> parse -> print is
// identical and the generic form parses back to the same module.
// RUN: gc-opt %s | filecheck %s
// RUN: gc-opt %s | gc-opt | filecheck %s
// RUN: gc-opt %s --mlir-print-op-generic | gc-opt | filecheck %s

// Seed 002: a parallel for that reads an outer var and writes a local tensor.
// CHECK-LABEL: tir.func @main() {
// CHECK-NEXT:    %one = tir.const 1.000000e+00 : f32
// CHECK-NEXT:    %value = tir.define_var %one : !tir.var<f32>
// CHECK-NEXT:    %A = tir.define_tensor : !tir.tensor<100xf32>
// CHECK:         tir.for %i = %c0 to %c100 step %c1 parallel {
// CHECK-NEXT:      %v = tir.read %value : !tir.var<f32>
// CHECK-NEXT:      %s = tir.add %v, %i : (f32, index) -> f32
// CHECK-NEXT:      tir.store %s, %A[%i] : !tir.tensor<100xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.return
tir.func @main() {
  %one = tir.const 1.0 : f32
  %value = tir.define_var %one : !tir.var<f32>
  %A = tir.define_tensor : !tir.tensor<100xf32>
  %c0 = tir.const 0 : index
  %c100 = tir.const 100 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c100 step %c1 parallel {
    %v = tir.read %value : !tir.var<f32>
    %s = tir.add %v, %i : (f32, index) -> f32
    tir.store %s, %A[%i] : !tir.tensor<100xf32>
  }
  tir.return
}

// Seed 000: the entry defines matmul_out and calls the op functions,
// outputs first.
// CHECK-LABEL: tir.func @main_entry(%in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>, %out: !tir.tensor<1024x1024xf32>) {
// CHECK-NEXT:    %matmul_out = tir.define_tensor : !tir.tensor<1024x1024xf32>
// CHECK-NEXT:    %0 = tir.call @matmul_core__1(%matmul_out, %in0, %in1) : (!tir.tensor<1024x1024xf32>, !tir.tensor<1024x1024xf32>, !tir.tensor<1024x1024xf32>) -> none
// CHECK-NEXT:    tir.evaluate %0 : none
// CHECK-NEXT:    %1 = tir.call @add__2(%out, %matmul_out, %in1)
// CHECK-NEXT:    tir.evaluate %1 : none
tir.func @main_entry(%in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>, %out: !tir.tensor<1024x1024xf32>) {
  %matmul_out = tir.define_tensor : !tir.tensor<1024x1024xf32>
  %0 = tir.call @matmul_core__1(%matmul_out, %in0, %in1) : (!tir.tensor<1024x1024xf32>, !tir.tensor<1024x1024xf32>, !tir.tensor<1024x1024xf32>) -> none
  tir.evaluate %0 : none
  %1 = tir.call @add__2(%out, %matmul_out, %in1) : (!tir.tensor<1024x1024xf32>, !tir.tensor<1024x1024xf32>, !tir.tensor<1024x1024xf32>) -> none
  tir.evaluate %1 : none
  tir.return
}

// The matmul body: brgemm on views made with tensor_ptr (the seed's &A[i, j]).
// CHECK-LABEL: tir.func @matmul_core__1(
// CHECK:         tir.for %fused = %c0 to %c1024 step %c1 parallel {
// CHECK:           %a = tir.tensor_ptr %in0[%row, %c0] : !tir.tensor<1024x1024xf32> -> !tir.tensor<32x1024xf32>
// CHECK:           tir.brgemm %a, %b, %c, %c32 {m = 32 : i64, n = 32 : i64, k = 32 : i64, lda = 1024 : i64, ldb = 1024 : i64, ldc = 1024 : i64, stride_a = 32 : i64, stride_b = 32768 : i64} : !tir.tensor<32x1024xf32>, !tir.tensor<1024x1024xf32>, !tir.tensor<32x1024xf32>, index
tir.func @matmul_core__1(%out0: !tir.tensor<1024x1024xf32>, %in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c32 = tir.const 32 : index
  %c1024 = tir.const 1024 : index
  tir.for %fused = %c0 to %c1024 step %c1 parallel {
    %block_row = tir.div %fused, %c32 : (index, index) -> index
    %block_col = tir.mod %fused, %c32 : (index, index) -> index
    %row = tir.mul %block_row, %c32 : (index, index) -> index
    %col = tir.mul %block_col, %c32 : (index, index) -> index
    %a = tir.tensor_ptr %in0[%row, %c0] : !tir.tensor<1024x1024xf32> -> !tir.tensor<32x1024xf32>
    %b = tir.tensor_ptr %in1[%c0, %col] : !tir.tensor<1024x1024xf32> -> !tir.tensor<1024x1024xf32>
    %c = tir.tensor_ptr %out0[%row, %col] : !tir.tensor<1024x1024xf32> -> !tir.tensor<32x1024xf32>
    tir.brgemm %a, %b, %c, %c32 {m = 32 : i64, n = 32 : i64, k = 32 : i64, lda = 1024 : i64, ldb = 1024 : i64, ldc = 1024 : i64, stride_a = 32 : i64, stride_b = 32768 : i64} : !tir.tensor<32x1024xf32>, !tir.tensor<1024x1024xf32>, !tir.tensor<32x1024xf32>, index
  }
  tir.return
}

// Vector loads and stores of 8 lanes with a scalar tail.
// CHECK-LABEL: tir.func @add__2(
// CHECK:         %x = tir.load %in0[%i, %j lanes 8] : !tir.tensor<1024x1024xf32>
// CHECK:         tir.store %sum, %out0[%i, %j lanes 8] : !tir.tensor<1024x1024xf32>
tir.func @add__2(%out0: !tir.tensor<1024x1024xf32>, %in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c8 = tir.const 8 : index
  %c1024 = tir.const 1024 : index
  tir.for %i = %c0 to %c1024 step %c1 parallel {
    tir.for %j = %c0 to %c1024 step %c8 {
      %x = tir.load %in0[%i, %j lanes 8] : !tir.tensor<1024x1024xf32>
      %y = tir.load %in1[%i, %j lanes 8] : !tir.tensor<1024x1024xf32>
      %sum = tir.add %x, %y : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
      tir.store %sum, %out0[%i, %j lanes 8] : !tir.tensor<1024x1024xf32>
    }
  }
  tir.return
}

// Declarations, globals (with and without initial values), blocks, if/else,
// assignment, returns with values, every expression and intrinsic.
// CHECK-LABEL: tir.func @print_int(i32)
// CHECK-NEXT:  tir.func @print_float(f32)
// CHECK-NEXT:  tir.global @counter : i64
// CHECK-NEXT:  tir.global @scale : f32 = 2.500000e+00 : f32
// CHECK-NEXT:  tir.global @table : !tir.tensor<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
tir.func @print_int(i32)
tir.func @print_float(f32)
tir.global @counter : i64
tir.global @scale : f32 = 2.5 : f32
tir.global @table : !tir.tensor<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>

// CHECK-LABEL: tir.func @twice(%x: i32) -> i32 {
// CHECK-NEXT:    %0 = tir.add %x, %x : (i32, i32) -> i32
// CHECK-NEXT:    tir.return %0 : i32
tir.func @twice(%x: i32) -> i32 {
  %0 = tir.add %x, %x : (i32, i32) -> i32
  tir.return %0 : i32
}

// CHECK-LABEL: tir.func @everything(
tir.func @everything(%n: i64, %f: f32, %T: !tir.tensor<4x8xf32>, %I: !tir.tensor<8xi32>, %P: !tir.tensor<2x!tir.ptr>) -> f32 {
  // CHECK: tir.stmts {
  // CHECK-NEXT: %local = tir.define_var : !tir.var<i64>
  // CHECK-NEXT: tir.assign %local = %n : !tir.var<i64>
  tir.stmts {
    %local = tir.define_var : !tir.var<i64>
    tir.assign %local = %n : !tir.var<i64>
  }
  %g = tir.global_ref @counter : !tir.var<i64>
  %t = tir.global_ref @table : !tir.tensor<4xf32>
  // CHECK: %cond = tir.gt %n, %zero : (i64, i64) -> i1
  // CHECK-NEXT: tir.if %cond {
  // CHECK-NEXT:   tir.assign %g = %n : !tir.var<i64>
  // CHECK-NEXT: } else {
  // CHECK-NEXT:   tir.assign %g = %zero : !tir.var<i64>
  // CHECK-NEXT: }
  %zero = tir.const 0 : i64
  %cond = tir.gt %n, %zero : (i64, i64) -> i1
  tir.if %cond {
    tir.assign %g = %n : !tir.var<i64>
  } else {
    tir.assign %g = %zero : !tir.var<i64>
  }
  // CHECK: tir.if %cond {
  // CHECK-NEXT: }
  // CHECK-NOT: else
  tir.if %cond {
  }
  %c0 = tir.const 0 : index
  %c1i = tir.const 1 : i32
  // CHECK: %sum = tir.sub %n, %c1i : (i64, i32) -> i64
  %sum = tir.sub %n, %c1i : (i64, i32) -> i64
  %quotient = tir.div %f, %c1i : (f32, i32) -> f32
  %remainder = tir.mod %n, %c1i : (i64, i32) -> i64
  %small = tir.min %f, %quotient : (f32, f32) -> f32
  %big = tir.max %n, %remainder : (i64, i64) -> i64
  %bits = tir.int_and %n, %big : (i64, i64) -> i64
  %bits2 = tir.int_or %bits, %n : (i64, i64) -> i64
  %bits3 = tir.int_xor %bits2, %n : (i64, i64) -> i64
  %left = tir.shl %bits3, %n : (i64, i64) -> i64
  %right = tir.shr %left, %n : (i64, i64) -> i64
  %lt = tir.lt %f, %small : (f32, f32) -> i1
  %ge = tir.ge %f, %small : (f32, f32) -> i1
  %le = tir.le %n, %right : (i64, i64) -> i1
  %eq = tir.eq %n, %right : (i64, i64) -> i1
  %ne = tir.ne %n, %right : (i64, i64) -> i1
  %both = tir.and %lt, %ge : (i1, i1) -> i1
  %either = tir.or %both, %le : (i1, i1) -> i1
  // CHECK: %negated = tir.not %either : i1 -> i1
  %negated = tir.not %either : i1 -> i1
  %chosen = tir.select %negated, %f, %small : i1, f32
  %magnitude = tir.abs %chosen : f32 -> f32
  %r = tir.round %magnitude : f32 -> f32
  %fl = tir.floor %r : f32 -> f32
  %ce = tir.ceil %fl : f32 -> f32
  %e = tir.exp %ce : f32 -> f32
  %sq = tir.sqrt %e : f32 -> f32
  %rs = tir.rsqrt %sq : f32 -> f32
  // CHECK: %ln = tir.log %rs : f32 -> f32
  // CHECK-NEXT: %th = tir.tanh %ln : f32 -> f32
  // CHECK-NEXT: %pw = tir.pow %th, %rs : (f32, f32) -> f32
  %ln = tir.log %rs : f32 -> f32
  %th = tir.tanh %ln : f32 -> f32
  %pw = tir.pow %th, %rs : (f32, f32) -> f32
  // CHECK-NEXT: %sin = tir.sin %pw : f32 -> f32
  // CHECK-NEXT: %cos = tir.cos %sin : f32 -> f32
  // CHECK-NEXT: %even = tir.roundeven %cos : f32 -> f32
  // CHECK-NEXT: %rem = tir.fmod %even, %pw : (f32, f32) -> f32
  %sin = tir.sin %pw : f32 -> f32
  %cos = tir.cos %sin : f32 -> f32
  %even = tir.roundeven %cos : f32 -> f32
  %rem = tir.fmod %even, %pw : (f32, f32) -> f32
  // CHECK: %as_int = tir.cast %rs : f32 -> i32
  %as_int = tir.cast %rs : f32 -> i32
  %as_bits = tir.reinterpret %rs : f32 -> i32
  %nan = tir.isnan %rs : f32 -> i1
  %rounded = tir.round_and_cast %rs : f32 -> i32
  // CHECK: %vec = tir.broadcast %f : f32 -> vector<8xf32>
  %vec = tir.broadcast %f : f32 -> vector<8xf32>
  // CHECK: %ones = tir.const dense<1.000000e+00> : vector<8xf32>
  %ones = tir.const dense<1.0> : vector<8xf32>
  %lanes = tir.const dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
  // CHECK: %fma = tir.fmadd %vec, %ones, %vec : vector<8xf32>
  %fma = tir.fmadd %vec, %ones, %vec : vector<8xf32>
  %vlt = tir.lt %fma, %ones : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
  // CHECK: %vsel = tir.select %vlt, %fma, %ones : vector<8xi1>, vector<8xf32>
  %vsel = tir.select %vlt, %fma, %ones : vector<8xi1>, vector<8xf32>
  // CHECK-NEXT: %lo = tir.unpack_low %vsel, %ones {elem_bits = 32 : i64} : vector<8xf32>
  %lo = tir.unpack_low %vsel, %ones {elem_bits = 32 : i64} : vector<8xf32>
  // CHECK-NEXT: %hi = tir.unpack_high %lo, %ones {elem_bits = 32 : i64} : vector<8xf32>
  %hi = tir.unpack_high %lo, %ones {elem_bits = 32 : i64} : vector<8xf32>
  // CHECK-NEXT: %sh = tir.shuffle %hi, %lo {imm = 68 : i64, elem_bits = 32 : i64} : vector<8xf32>
  %sh = tir.shuffle %hi, %lo {imm = 68 : i64, elem_bits = 32 : i64} : vector<8xf32>
  // CHECK-NEXT: %pe = tir.permute %sh, %lo {imm = 32 : i64} : vector<8xf32>
  %pe = tir.permute %sh, %lo {imm = 32 : i64} : vector<8xf32>
  // CHECK: %px = tir.permutex2var %pe, %lanes, %lo : vector<8xf32>, vector<8xi32>
  %px = tir.permutex2var %pe, %lanes, %lo : vector<8xf32>, vector<8xi32>
  %vnan = tir.isnan %px : vector<8xf32> -> vector<8xi1>
  %total = tir.reduce_add %px : vector<8xf32> -> f32
  %product = tir.reduce_mul %px : vector<8xf32> -> f32
  %ivec = tir.load %I[%c0 lanes 8] : !tir.tensor<8xi32>
  %u8 = tir.saturated_cast %ivec : vector<8xi32> -> vector<8xui8>
  %s8 = tir.saturated_cast %px : vector<8xf32> -> vector<8xi8>
  %element = tir.load %T[%c0, %c0] : !tir.tensor<4x8xf32>
  %row = tir.load %T[%c0, %c0 lanes 8] : !tir.tensor<4x8xf32>
  tir.store %row, %T[%c0, %c0 lanes 8] : !tir.tensor<4x8xf32>
  // CHECK: tir.prefetch %T[%c0, %c0] {write = false, locality = 3 : i64} : !tir.tensor<4x8xf32>
  // CHECK-NEXT: tir.prefetch %T[%c0, %c0] {write = true, locality = 1 : i64} : !tir.tensor<4x8xf32>
  tir.prefetch %T[%c0, %c0] : !tir.tensor<4x8xf32>
  tir.prefetch %T[%c0, %c0] {write = true, locality = 1 : i64} : !tir.tensor<4x8xf32>
  %from_global = tir.load %t[%c0] : !tir.tensor<4xf32>
  // CHECK: %fptr = tir.func_addr @twice : !tir.ptr
  // CHECK-NEXT: %direct = tir.call @twice(%c1i) : (i32) -> i32
  // CHECK-NEXT: %indirect = tir.call_indirect %fptr(%direct) {prototype = @twice} : (i32) -> i32
  %fptr = tir.func_addr @twice : !tir.ptr
  %direct = tir.call @twice(%c1i) : (i32) -> i32
  %indirect = tir.call_indirect %fptr(%direct) {prototype = @twice} : (i32) -> i32
  %printed = tir.call @print_int(%indirect) : (i32) -> none
  tir.evaluate %printed : none
  // list_brgemm takes lists of block pointers.
  %a_view = tir.tensor_ptr %T[%c0, %c0] : !tir.tensor<4x8xf32> -> !tir.tensor<4x8xf32>
  %a_ptr = tir.addr_of %a_view : !tir.tensor<4x8xf32>
  tir.store %a_ptr, %P[%c0] : !tir.tensor<2x!tir.ptr>
  %C = tir.define_tensor : !tir.tensor<4x4xf32>
  %batch = tir.const 1 : index
  // CHECK: tir.list_brgemm %P, %P, %C, %batch {m = 4 : i64, n = 4 : i64, k = 4 : i64, lda = 8 : i64, ldb = 8 : i64, ldc = 4 : i64, accumulate = true, a_type = f32, b_type = f32}
  tir.list_brgemm %P, %P, %C, %batch {m = 4 : i64, n = 4 : i64, k = 4 : i64, lda = 8 : i64, ldb = 8 : i64, ldc = 4 : i64, accumulate = true, a_type = f32, b_type = f32} : !tir.tensor<2x!tir.ptr>, !tir.tensor<2x!tir.ptr>, !tir.tensor<4x4xf32>, index
  // CHECK: tir.return %total : f32
  tir.return %total : f32
}

// A tile of one row (a 1x1 feature map's pixel in channel blocks) has no row
// stride to keep apart: ldc may be under n.
// CHECK-LABEL: tir.func @brgemm_tile_one_row
// CHECK: tir.brgemm_tile %A, %B, %C {m = 1 : i64, n = 32 : i64, k = 16 : i64, lanes = 16 : i64, a_row = 16 : i64, a_k = 1 : i64, ldb = 32 : i64, ldc = 16 : i64}
tir.func @brgemm_tile_one_row(%A: !tir.tensor<16xf32>, %B: !tir.tensor<512xf32>, %C: !tir.tensor<32xf32>) {
  tir.brgemm_tile %A, %B, %C {m = 1 : i64, n = 32 : i64, k = 16 : i64, lanes = 16 : i64, a_row = 16 : i64, a_k = 1 : i64, ldb = 32 : i64, ldc = 16 : i64} : !tir.tensor<16xf32>, !tir.tensor<512xf32>, !tir.tensor<32xf32>
  tir.return
}
