// Every intrinsic with scalar or vector semantics, run and printed.
// RUN: gc-run %s -e scalar | filecheck %s --check-prefix=SCALAR
// RUN: gc-run %s -e vector | filecheck %s --check-prefix=VECTOR
// RUN: gc-run %s -e shuffles | filecheck %s --check-prefix=SHUFFLE
// RUN: gc-run %s -e conversions | filecheck %s --check-prefix=CONVERT

tir.func @print_int(i32)
tir.func @print_float(f32)
tir.func @print_tensor(!tir.ptr, index)

// Stores an 8-lane f32 vector and prints it.
tir.func @show(%v: vector<8xf32>) {
  %T = tir.define_tensor : !tir.tensor<8xf32>
  %c0 = tir.const 0 : index
  %c8 = tir.const 8 : index
  tir.store %v, %T[%c0 lanes 8] : !tir.tensor<8xf32>
  %p = tir.addr_of %T : !tir.tensor<8xf32>
  %r = tir.call @print_tensor(%p, %c8) : (!tir.ptr, index) -> none
  tir.evaluate %r : none
  tir.return
}

tir.func @show_int(%v: vector<8xi32>) {
  %f = tir.cast %v : vector<8xi32> -> vector<8xf32>
  %r = tir.call @show(%f) : (vector<8xf32>) -> none
  tir.evaluate %r : none
  tir.return
}

// SCALAR:      -3
// SCALAR-NEXT: 7
// SCALAR-NEXT: 3
// SCALAR-NEXT: 3
// SCALAR-NEXT: -3
// SCALAR-NEXT: -2
// SCALAR-NEXT: 2.71828
// SCALAR-NEXT: 1.5
// SCALAR-NEXT: 0.5
// SCALAR-NEXT: 2.5
// SCALAR-NEXT: 4
// SCALAR-NEXT: 14
// SCALAR-NEXT: 10
// SCALAR-NEXT: 48
// SCALAR-NEXT: -4
// SCALAR-NEXT: 1
// SCALAR-NEXT: 0.693147
// SCALAR-NEXT: 0.761594
// SCALAR-NEXT: 8
tir.func @scalar() {
  %a = tir.const -3 : i32
  %b = tir.const 7 : i32
  %min = tir.min %a, %b : (i32, i32) -> i32
  %p0 = tir.call @print_int(%min) : (i32) -> none
  tir.evaluate %p0 : none
  %max = tir.max %a, %b : (i32, i32) -> i32
  %p1 = tir.call @print_int(%max) : (i32) -> none
  tir.evaluate %p1 : none
  %abs = tir.abs %a : i32 -> i32
  %p2 = tir.call @print_int(%abs) : (i32) -> none
  tir.evaluate %p2 : none
  %x = tir.const -2.5 : f32
  %fabs = tir.abs %x : f32 -> f32
  %round_abs = tir.round %fabs : f32 -> f32
  %ri = tir.cast %round_abs : f32 -> i32
  %p3 = tir.call @print_int(%ri) : (i32) -> none
  tir.evaluate %p3 : none
  %fl = tir.floor %x : f32 -> f32
  %fli = tir.cast %fl : f32 -> i32
  %p4 = tir.call @print_int(%fli) : (i32) -> none
  tir.evaluate %p4 : none
  %ce = tir.ceil %x : f32 -> f32
  %cei = tir.cast %ce : f32 -> i32
  %p5 = tir.call @print_int(%cei) : (i32) -> none
  tir.evaluate %p5 : none
  %one = tir.const 1.0 : f32
  %e = tir.exp %one : f32 -> f32
  %p6 = tir.call @print_float(%e) : (f32) -> none
  tir.evaluate %p6 : none
  %x2 = tir.const 2.25 : f32
  %sq = tir.sqrt %x2 : f32 -> f32
  %p7 = tir.call @print_float(%sq) : (f32) -> none
  tir.evaluate %p7 : none
  %four = tir.const 4.0 : f32
  %rs = tir.rsqrt %four : f32 -> f32
  %p8 = tir.call @print_float(%rs) : (f32) -> none
  tir.evaluate %p8 : none
  // fmadd: 0.5 * 3 + 1
  %three = tir.const 3.0 : f32
  %fma = tir.fmadd %rs, %three, %one : f32
  %p9 = tir.call @print_float(%fma) : (f32) -> none
  tir.evaluate %p9 : none
  // int_and 12 & 6 = 4, int_or 12 | 6 = 14, int_xor 12 ^ 6 = 10
  %c12 = tir.const 12 : i32
  %c6 = tir.const 6 : i32
  %and = tir.int_and %c12, %c6 : (i32, i32) -> i32
  %p10 = tir.call @print_int(%and) : (i32) -> none
  tir.evaluate %p10 : none
  %or = tir.int_or %c12, %c6 : (i32, i32) -> i32
  %p11 = tir.call @print_int(%or) : (i32) -> none
  tir.evaluate %p11 : none
  %xor = tir.int_xor %c12, %c6 : (i32, i32) -> i32
  %p12 = tir.call @print_int(%xor) : (i32) -> none
  tir.evaluate %p12 : none
  // shl 12 << 2 = 48, shr -8 >> 1 = -4 (arithmetic)
  %c2 = tir.const 2 : i32
  %shl = tir.shl %c12, %c2 : (i32, i32) -> i32
  %p13 = tir.call @print_int(%shl) : (i32) -> none
  tir.evaluate %p13 : none
  %m8 = tir.const -8 : i32
  %c1 = tir.const 1 : i32
  %shr = tir.shr %m8, %c1 : (i32, i32) -> i32
  %p14 = tir.call @print_int(%shr) : (i32) -> none
  tir.evaluate %p14 : none
  // select and the logic ops
  %lt = tir.lt %a, %b : (i32, i32) -> i1
  %gt = tir.gt %a, %b : (i32, i32) -> i1
  %either = tir.or %lt, %gt : (i1, i1) -> i1
  %both = tir.and %lt, %gt : (i1, i1) -> i1
  %neither = tir.not %both : i1 -> i1
  %ok = tir.and %either, %neither : (i1, i1) -> i1
  %chosen = tir.select %ok, %c1, %a : i1, i32
  %p15 = tir.call @print_int(%chosen) : (i32) -> none
  tir.evaluate %p15 : none
  // the math extensions: log(2), tanh(1), 2 ** 3
  %two_f = tir.const 2.0 : f32
  %ln2 = tir.log %two_f : f32 -> f32
  %p16 = tir.call @print_float(%ln2) : (f32) -> none
  tir.evaluate %p16 : none
  %th1 = tir.tanh %one : f32 -> f32
  %p17 = tir.call @print_float(%th1) : (f32) -> none
  tir.evaluate %p17 : none
  %three_f = tir.const 3.0 : f32
  %cube = tir.pow %two_f, %three_f : (f32, f32) -> f32
  %p18 = tir.call @print_float(%cube) : (f32) -> none
  tir.evaluate %p18 : none
  tir.return
}

// VECTOR:      0 1 2 3 4 5 6 7
// VECTOR-NEXT: 28
// VECTOR-NEXT: 40320
// VECTOR-NEXT: 1 2 3 4 5 6 7 8
// VECTOR-NEXT: 0 0 0 0 1 1 1 1
// VECTOR-NEXT: 3 3 3 3 3 3 3 3
// VECTOR-NEXT: 2 2 2 3 4 5 6 7
tir.func @vector() {
  %iota = tir.const dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : vector<8xf32>
  %s0 = tir.call @show(%iota) : (vector<8xf32>) -> none
  tir.evaluate %s0 : none
  %sum = tir.reduce_add %iota : vector<8xf32> -> f32
  %p0 = tir.call @print_float(%sum) : (f32) -> none
  tir.evaluate %p0 : none
  %ones = tir.const dense<1.0> : vector<8xf32>
  %shifted = tir.add %iota, %ones : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  %product = tir.reduce_mul %shifted : vector<8xf32> -> f32
  %p1 = tir.call @print_float(%product) : (f32) -> none
  tir.evaluate %p1 : none
  // fmadd on vectors: iota * 1 + 1
  %fma = tir.fmadd %iota, %ones, %ones : vector<8xf32>
  %s1 = tir.call @show(%fma) : (vector<8xf32>) -> none
  tir.evaluate %s1 : none
  // lane-wise compare and select: iota >= 4 ? 1 : 0
  %four = tir.const 4.0 : f32
  %fours = tir.broadcast %four : f32 -> vector<8xf32>
  %ge = tir.ge %iota, %fours : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
  %zeros = tir.const dense<0.0> : vector<8xf32>
  %mask = tir.select %ge, %ones, %zeros : vector<8xi1>, vector<8xf32>
  %s2 = tir.call @show(%mask) : (vector<8xf32>) -> none
  tir.evaluate %s2 : none
  %three = tir.const 3.0 : f32
  %threes = tir.broadcast %three : f32 -> vector<8xf32>
  %s3 = tir.call @show(%threes) : (vector<8xf32>) -> none
  tir.evaluate %s3 : none
  // max(iota, 2) with integer vectors
  %ivec = tir.cast %iota : vector<8xf32> -> vector<8xi32>
  %twos = tir.const dense<2> : vector<8xi32>
  %clipped = tir.max %ivec, %twos : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
  %s4 = tir.call @show_int(%clipped) : (vector<8xi32>) -> none
  tir.evaluate %s4 : none
  tir.return
}

// SHUFFLE:      0 10 1 11 4 14 5 15
// SHUFFLE-NEXT: 2 12 3 13 6 16 7 17
// SHUFFLE-NEXT: 0 1 10 11 4 5 14 15
// SHUFFLE-NEXT: 3 0 12 11 7 4 16 15
// SHUFFLE-NEXT: 14 15 16 17 0 1 2 3
// SHUFFLE-NEXT: 7 17 0 10 3 13 1 11
// SHUFFLE-NEXT: 16 16 0 0 6 6 2 2
tir.func @shuffles() {
  %a = tir.const dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : vector<8xf32>
  %b = tir.const dense<[10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0]> : vector<8xf32>
  %lo = tir.unpack_low %a, %b {elem_bits = 32 : i64} : vector<8xf32>
  %s0 = tir.call @show(%lo) : (vector<8xf32>) -> none
  tir.evaluate %s0 : none
  %hi = tir.unpack_high %a, %b {elem_bits = 32 : i64} : vector<8xf32>
  %s1 = tir.call @show(%hi) : (vector<8xf32>) -> none
  tir.evaluate %s1 : none
  // 64-bit units: pairs of floats move together
  %lo64 = tir.unpack_low %a, %b {elem_bits = 64 : i64} : vector<8xf32>
  %s2 = tir.call @show(%lo64) : (vector<8xf32>) -> none
  tir.evaluate %s2 : none
  // shufps imm = 0b01100011: a[3], a[0], b[2], b[1] in each 128-bit lane
  %sh = tir.shuffle %a, %b {imm = 99 : i64, elem_bits = 32 : i64} : vector<8xf32>
  %s3 = tir.call @show(%sh) : (vector<8xf32>) -> none
  tir.evaluate %s3 : none
  // vperm2f128 imm = 0x03: low half <- b.hi, high half <- a.lo
  %pe = tir.permute %a, %b {imm = 3 : i64} : vector<8xf32>
  %s4 = tir.call @show(%pe) : (vector<8xf32>) -> none
  tir.evaluate %s4 : none
  // permutex2var: lanes of concat(a, b) picked by idx (mod 16)
  %idx = tir.const dense<[7, 15, 0, 8, 3, 11, 17, 25]> : vector<8xi32>
  %px = tir.permutex2var %a, %idx, %b : vector<8xf32>, vector<8xi32>
  %s5 = tir.call @show(%px) : (vector<8xf32>) -> none
  tir.evaluate %s5 : none
  // indices known only at run time (doubled: [14, 30, 0, 16, 6, 22, 34, 50] mod 16)
  %idx2 = tir.add %idx, %idx : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
  %px2 = tir.permutex2var %a, %idx2, %b : vector<8xf32>, vector<8xi32>
  %s6 = tir.call @show(%px2) : (vector<8xf32>) -> none
  tir.evaluate %s6 : none
  tir.return
}

// CONVERT:      1065353216
// CONVERT-NEXT: 0
// CONVERT-NEXT: 1
// CONVERT-NEXT: 0 255 128 3 0 255 7 100
// CONVERT-NEXT: -128 127 -5 3 0 127 7 100
// CONVERT-NEXT: 3
// CONVERT-NEXT: -3
tir.func @conversions() {
  %one = tir.const 1.0 : f32
  %bits = tir.reinterpret %one : f32 -> i32
  %p0 = tir.call @print_int(%bits) : (i32) -> none
  tir.evaluate %p0 : none
  // isnan(1.0) = 0, isnan(0/0) = 1
  %not_nan = tir.isnan %one : f32 -> i1
  %n0 = tir.cast %not_nan : i1 -> i32
  %p1 = tir.call @print_int(%n0) : (i32) -> none
  tir.evaluate %p1 : none
  %zero = tir.const 0.0 : f32
  %nan = tir.div %zero, %zero : (f32, f32) -> f32
  %is_nan = tir.isnan %nan : f32 -> i1
  %n1 = tir.cast %is_nan : i1 -> i32
  %p2 = tir.call @print_int(%n1) : (i32) -> none
  tir.evaluate %p2 : none
  // saturated_cast clamps into u8 and s8
  %values = tir.const dense<[-7.0, 300.0, 128.0, 3.4, 0.0, 1000.0, 7.9, 100.0]> : vector<8xf32>
  %u8 = tir.saturated_cast %values : vector<8xf32> -> vector<8xui8>
  %u32 = tir.cast %u8 : vector<8xui8> -> vector<8xf32>
  %s0 = tir.call @show(%u32) : (vector<8xf32>) -> none
  tir.evaluate %s0 : none
  %ints = tir.const dense<[-1000, 1000, -5, 3, 0, 128, 7, 100]> : vector<8xi32>
  %s8 = tir.saturated_cast %ints : vector<8xi32> -> vector<8xi8>
  %s32 = tir.cast %s8 : vector<8xi8> -> vector<8xf32>
  %s1 = tir.call @show(%s32) : (vector<8xf32>) -> none
  tir.evaluate %s1 : none
  // round_and_cast rounds halves away from zero, like std::roundf
  %x = tir.const 2.5 : f32
  %r = tir.round_and_cast %x : f32 -> i32
  %p3 = tir.call @print_int(%r) : (i32) -> none
  tir.evaluate %p3 : none
  %y = tir.const -2.5 : f32
  %r2 = tir.round_and_cast %y : f32 -> i32
  %p4 = tir.call @print_int(%r2) : (i32) -> none
  tir.evaluate %p4 : none
  tir.return
}
