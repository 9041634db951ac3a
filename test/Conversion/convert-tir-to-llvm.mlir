// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tir-to-llvm)' | filecheck %s
// exp's final scaling by 2**n: one llvm.ldexp (vscalefps) with AVX-512, integer bit tricks without.
// RUN: env GC_TARGET=avx512 gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tir-to-llvm)' | filecheck %s --check-prefix=AVX512
// RUN: env GC_TARGET=avx2 gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tir-to-llvm)' | filecheck %s --check-prefix=AVX2

// Tensor params become noalias pointers; a loop becomes a header block with
// the induction variable as block argument; loads/stores index the buffer
// row-major; mixed operands are converted (sitofp).
// CHECK-LABEL: llvm.func @scale(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i32) {
// CHECK:         llvm.br ^[[HEADER:.*]](%{{.*}} : i64)
// CHECK:       ^[[HEADER]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[MORE:.*]] = llvm.icmp "slt" %[[I]], %{{.*}} : i64
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK:       ^[[BODY]]:
// CHECK:         llvm.mul %[[I]], %{{.*}} : i64
// CHECK:         llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.sitofp %{{.*}} : i32 to f32
// CHECK:         llvm.fmul
// CHECK:         llvm.store
// CHECK:         llvm.br ^[[HEADER]]
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
tir.func @scale(%A: !tir.tensor<4x8xf32>, %k: i32) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c4 = tir.const 4 : index
  %c3 = tir.const 3 : index
  tir.for %i = %c0 to %c4 step %c1 {
    %x = tir.load %A[%i, %c3] : !tir.tensor<4x8xf32>
    %y = tir.mul %x, %k : (f32, i32) -> f32
    tir.store %y, %A[%i, %c3] : !tir.tensor<4x8xf32>
  }
  tir.return
}

// -----

// Index arithmetic on known constants is folded: the element [1, 2] of a
// 4x8 tensor, reached by adds and multiplies of constants, is one constant
// offset (10); adding 0 and multiplying by 1 emit nothing.
// CHECK-LABEL: llvm.func @constant_offsets(
// CHECK:         %[[TEN:.*]] = llvm.mlir.constant(10) : i64
// CHECK-NOT:     llvm.mul
// CHECK-NOT:     llvm.add
// CHECK:         %[[P:.*]] = llvm.getelementptr %{{.*}}[%[[TEN]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.load %[[P]]
tir.func @constant_offsets(%A: !tir.tensor<4x8xf32>) -> f32 {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c2 = tir.const 2 : index
  %row = tir.add %c0, %c1 : (index, index) -> index
  %one = tir.mul %row, %c1 : (index, index) -> index
  %col = tir.mul %c2, %one : (index, index) -> index
  %x = tir.load %A[%one, %col] : !tir.tensor<4x8xf32>
  tir.return %x : f32
}

// -----

// Intrinsics map to LLVM intrinsics or shuffles (permutex2var with constant
// indices too, taken mod 2n); vars become allocas, aligned on a power of
// two (a vector of 3 floats on 4 bytes: LLVM refuses 12).
// CHECK-LABEL: llvm.func @intrinsics(
// CHECK-DAG:     llvm.alloca %{{.*}} x f32 {alignment = 4 : i64}
// CHECK-DAG:     llvm.alloca %{{.*}} x vector<3xf32> {alignment = 4 : i64}
// CHECK:         llvm.intr.fma
// CHECK:         llvm.intr.vector.reduce.fadd
// CHECK:         llvm.call_intrinsic "llvm.round.f32"
// CHECK:         llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"
// CHECK:         llvm.shufflevector %{{.*}}, %{{.*}} [0, 8, 1, 9, 4, 12, 5, 13]
// CHECK-NEXT:    llvm.shufflevector %{{.*}}, %{{.*}} [7, 15, 0, 8, 3, 11, 1, 9]
// CHECK:         llvm.call_intrinsic "llvm.sqrt.f32"
tir.func @intrinsics(%v: vector<8xf32>, %x: f32) -> f32 {
  %acc = tir.define_var %x : !tir.var<f32>
  %three = tir.const dense<1.0> : vector<3xf32>
  %acc3 = tir.define_var %three : !tir.var<vector<3xf32>>
  %fma = tir.fmadd %v, %v, %v : vector<8xf32>
  %sum = tir.reduce_add %fma : vector<8xf32> -> f32
  %r = tir.round %sum : f32 -> f32
  %i = tir.cast %r : f32 -> i32
  %lo = tir.unpack_low %v, %v {elem_bits = 32 : i64} : vector<8xf32>
  %picks = tir.const dense<[7, 15, 0, 8, 3, 11, 17, 25]> : vector<8xi32>
  %picked = tir.permutex2var %lo, %picks, %v : vector<8xf32>, vector<8xi32>
  %s = tir.sqrt %x : f32 -> f32
  tir.assign %acc = %s : !tir.var<f32>
  %out = tir.read %acc : !tir.var<f32>
  tir.return %out : f32
}

// -----

// roundeven is the LLVM intrinsic (one vroundps), tir.fmod is frem (LLVM calls
// fmodf per lane); f64 sin and cos stay intrinsics (libm), f32 ones are
// expanded by tir-expand-math first.
// CHECK-LABEL: llvm.func @rounding_and_remainder(
// CHECK-SAME:      %[[V:.*]]: vector<8xf32>, %[[D:.*]]: f64)
// CHECK:         %[[EVEN:.*]] = llvm.call_intrinsic "llvm.roundeven.v8f32"(%[[V]]) : (vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    llvm.frem %[[EVEN]], %[[V]] : vector<8xf32>
// CHECK-NEXT:    %[[SIN:.*]] = llvm.call_intrinsic "llvm.sin.f64"(%[[D]]) : (f64) -> f64
// CHECK-NEXT:    llvm.call_intrinsic "llvm.cos.f64"(%[[SIN]]) : (f64) -> f64
// CHECK-NOT:     llvm.sin.v8f32
tir.func @rounding_and_remainder(%v: vector<8xf32>, %d: f64) -> f64 {
  %even = tir.roundeven %v : vector<8xf32> -> vector<8xf32>
  %rem = tir.fmod %even, %v : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  %s = tir.sin %d : f64 -> f64
  %c = tir.cos %s : f64 -> f64
  %f = tir.sin %v : vector<8xf32> -> vector<8xf32>
  tir.return %c : f64
}

// -----

// A parallel call packs its captures into 64-byte stack slots and calls
// the runtime with a wrapper that unpacks them for the outlined body, and
// the slots' size (a region queues a copy of them).
// CHECK-LABEL: llvm.func @run(
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.mlir.constant(128) : i64
// CHECK-NEXT:    llvm.alloca %[[BYTES]] x i8 {alignment = 64 : i64}
// CHECK:         llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK:         %[[WRAPPER:.*]] = llvm.mlir.addressof @body__parallel : !llvm.ptr
// CHECK:         llvm.call @sc_parallel_call_cpu(%[[WRAPPER]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BYTES]]) : (!llvm.ptr, i64, i64, i64, !llvm.ptr, i64) -> ()
// CHECK:       llvm.func @sc_parallel_call_cpu(!llvm.ptr, i64, i64, i64, !llvm.ptr, i64)
// CHECK:       llvm.func internal @body__parallel(%[[I:.*]]: i64, %[[SLOTS:.*]]: !llvm.ptr) {
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr %[[SLOTS]][0] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    %[[VALUE:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> f32
// CHECK:         llvm.call @body(%[[I]], %[[VALUE]], %{{.*}}) : (i64, f32, !llvm.ptr) -> ()
tir.func @sc_parallel_call_cpu(!tir.ptr, index, index, index, ...)
tir.func @body(%i: index, %value: f32, %A: !tir.tensor<16xf32>) {
  tir.store %value, %A[%i] : !tir.tensor<16xf32>
  tir.return
}
tir.func @run(%A: !tir.tensor<16xf32>, %x: f32) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c16 = tir.const 16 : index
  %fn = tir.func_addr @body : !tir.ptr
  %0 = tir.call @sc_parallel_call_cpu(%fn, %c0, %c16, %c1, %x, %A) : (!tir.ptr, index, index, index, f32, !tir.tensor<16xf32>) -> none
  tir.evaluate %0 : none
  tir.return
}

// -----

// Globals become llvm globals with their initial value (zero if none).
// CHECK: llvm.mlir.global external @table(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) {{{.*}}alignment = 64 : i64} : !llvm.array<2 x f32>
// CHECK: llvm.mlir.global external @count(0 : i32) {{{.*}}alignment = 64 : i64} : i32
tir.global @table : !tir.tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
tir.global @count : i32

// -----

// brgemm_tile calls the microkernel generated for its static parameters
// (declared here, defined by the JIT): A, the B panel, C, K and the
// accumulate flag.
// CHECK-LABEL: llvm.func @packed(
// CHECK:         llvm.call @gc_ukernel_f32_m2_n3_l4_ar4_ak1_ldb16_ldc4(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i1) -> ()
// CHECK:       llvm.func @gc_ukernel_f32_m2_n3_l4_ar4_ak1_ldb16_ldc4(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i1)
tir.func @packed(%A: !tir.tensor<8xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<8xf32>) {
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64, accumulate = true} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  tir.return
}

// -----

// i32 A and B hold pairs of 16-bit values: i16 pairs for an i32 C, bf16
// pairs for an f32 C (with `vdpbf16ps` where the target has AVX512-BF16:
// the host may; the named targets do not).
// CHECK-LABEL: llvm.func @pairs(
// CHECK:         llvm.call @gc_ukernel_i16x2_m2_n3_l4_ar4_ak1_ldb16_ldc4(
// CHECK:         llvm.call @gc_ukernel_bf16x2_m2_n3_l4_ar4_ak1_ldb16_ldc4{{(_dot)?}}(
// AVX512-LABEL: llvm.func @pairs(
// AVX512:         llvm.call @gc_ukernel_bf16x2_m2_n3_l4_ar4_ak1_ldb16_ldc4(
tir.func @pairs(%A: !tir.tensor<8xi32>, %P: !tir.tensor<64xi32>, %C: !tir.tensor<8xi32>, %F: !tir.tensor<8xf32>) {
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xi32>, !tir.tensor<64xi32>, !tir.tensor<8xi32>
  tir.brgemm_tile %A, %P, %F {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xi32>, !tir.tensor<64xi32>, !tir.tensor<8xf32>
  tir.return
}

// -----

// With a prefetch operand the microkernel (name ending _pf) takes one more
// pointer; tir.prefetch is llvm.prefetch (rw, locality, data).
// A function's constants are made once each, at the top of its entry
// block, in the order of their first uses (here 1 is both "write" and
// "data cache").
// CHECK-LABEL: llvm.func @prefetching(
// CHECK:         %[[READ:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[L3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[L2:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:    llvm.call @gc_ukernel_f32_m2_n3_l4_ar4_ak1_ldb16_ldc4_pf(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i1, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.call_intrinsic "llvm.prefetch.p0"(%{{.*}}, %[[READ]], %[[L3]], %[[ONE]])
// CHECK:         llvm.call_intrinsic "llvm.prefetch.p0"(%{{.*}}, %[[ONE]], %[[L2]], %[[ONE]])
// CHECK:       llvm.func @gc_ukernel_f32_m2_n3_l4_ar4_ak1_ldb16_ldc4_pf(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i1, !llvm.ptr)
tir.func @prefetching(%A: !tir.tensor<8xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<8xf32>) {
  tir.brgemm_tile %A, %P, %C prefetch %P : !tir.tensor<64xf32> {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  %i = tir.const 5 : index
  tir.prefetch %P[%i] : !tir.tensor<64xf32>
  tir.prefetch %C[%i] {write = true, locality = 2 : i64} : !tir.tensor<8xf32>
  tir.return
}

// -----

// Float max/min propagate NaN like numpy: `b > a ? b : a`, then a NaN `b`.
// CHECK-LABEL: llvm.func @nan_max_min(
// CHECK-SAME:      %[[A:[^:]*]]: vector<8xf32>, %[[B:[^:]*]]: vector<8xf32>)
// CHECK-NOT:     maxnum
// CHECK:         %[[WINS:.*]] = {{.*}}llvm.fcmp{{.*}}%[[B]], %[[A]]
// CHECK-NEXT:    %[[CHOSEN:.*]] = {{.*}}llvm.select{{.*}}%[[WINS]], %[[B]], %[[A]]
// CHECK-NEXT:    %[[NAN:.*]] = {{.*}}llvm.fcmp{{.*}}%[[B]], %[[B]]
// CHECK-NEXT:    %[[MAX:.*]] = {{.*}}llvm.select{{.*}}%[[NAN]], %[[B]], %[[CHOSEN]]
// CHECK-NEXT:    {{.*}}llvm.fcmp{{.*}}%[[B]], %[[MAX]]
// CHECK-NOT:     minnum
tir.func @nan_max_min(%a: vector<8xf32>, %b: vector<8xf32>) -> vector<8xf32> {
  %max = tir.max %a, %b : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  %min = tir.min %max, %b : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
  tir.return %min : vector<8xf32>
}

// -----

// Integer division by a variable cannot trap: 0 and -1 divide by 1, then
// x / -1 is 0 - x and x / 0 is 0; x % 0 = x % -1 = 0 follow. A constant
// divisor other than 0 and -1 needs no guard.
// CHECK-LABEL: llvm.func @division(
// CHECK-SAME:      %[[X:[^:]*]]: i32, %[[Y:[^:]*]]: i32)
// CHECK:         %[[M1:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK:         %[[SEVEN:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.icmp "eq" %[[Y]], %{{.*}} : i32
// CHECK-NEXT:    %[[MINUS_ONE:.*]] = llvm.icmp "eq" %[[Y]], %[[M1]] : i32
// CHECK-NEXT:    %[[SPECIAL:.*]] = llvm.or %[[ZERO]], %[[MINUS_ONE]] : i1
// CHECK:         %[[DIVISOR:.*]] = {{.*}}llvm.select{{.*}}%[[SPECIAL]], %{{.*}}, %[[Y]]
// CHECK-NEXT:    %[[Q:.*]] = llvm.sdiv %[[X]], %[[DIVISOR]] : i32
// CHECK-NEXT:    %[[NEG:.*]] = llvm.sub %{{.*}}, %[[X]] : i32
// CHECK-NEXT:    %[[Q1:.*]] = {{.*}}llvm.select{{.*}}%[[MINUS_ONE]], %[[NEG]], %[[Q]]
// CHECK-NEXT:    {{.*}}llvm.select{{.*}}%[[ZERO]], %{{.*}}, %[[Q1]]
// CHECK:         %[[DIVISOR2:.*]] = {{.*}}llvm.select
// CHECK-NEXT:    llvm.srem %[[X]], %[[DIVISOR2]] : i32
// CHECK-NEXT:    llvm.sdiv %[[X]], %[[SEVEN]] : i32
tir.func @division(%x: i32, %y: i32) -> i32 {
  %q = tir.div %x, %y : (i32, i32) -> i32
  %r = tir.mod %x, %y : (i32, i32) -> i32
  %seven = tir.const 7 : i32
  %s = tir.div %x, %seven : (i32, i32) -> i32
  %0 = tir.add %q, %r : (i32, i32) -> i32
  %1 = tir.add %0, %s : (i32, i32) -> i32
  tir.return %1 : i32
}

// -----

// Float -> integer conversions saturate (NaN -> 0), saturated_cast included.
// Into 8 or 16 bits: clamped with compares and selects, NaN zeroed,
// truncated, and read from the mantissa of x + 1.5 * 2**23 (0x4B400000),
// all of it vector instructions (LLVM scalarizes fpto[su]i.sat on x86).
// CHECK-LABEL: llvm.func @saturating(
// CHECK-DAG:     %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-DAG:     %[[U8MAX:.*]] = llvm.mlir.constant(2.550000e+02 : f32) : f32
// CHECK-DAG:     %[[MAGIC:.*]] = llvm.mlir.constant(0x4B400000 : f32) : f32
// CHECK-DAG:     %[[BITS:.*]] = llvm.mlir.constant(1262485504 : i32) : i32
// CHECK-DAG:     %[[I8MIN:.*]] = llvm.mlir.constant(-1.280000e+02 : f32) : f32
// CHECK:         llvm.call_intrinsic "llvm.fptosi.sat.i64.f32"
// CHECK:         %[[BELOW:.*]] = llvm.fcmp "olt" %{{.*}}, %[[ZERO]] : f32
// CHECK:         %[[ABOVE:.*]] = llvm.fcmp "ogt" %{{.*}}, %[[U8MAX]] : f32
// CHECK:         %[[NAN:.*]] = llvm.fcmp "uno"
// CHECK:         %[[T:.*]] = llvm.call_intrinsic "llvm.trunc.f32"
// CHECK-NEXT:    %[[S:.*]] = llvm.fadd %[[T]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[B:.*]] = llvm.bitcast %[[S]] : f32 to i32
// CHECK-NEXT:    %[[W:.*]] = llvm.sub %[[B]], %[[BITS]] : i32
// CHECK-NEXT:    llvm.trunc %[[W]] : i32 to i8
// CHECK:         llvm.fcmp "olt" %{{.*}}, %[[I8MIN]] : f32
// CHECK-NOT:     fptoui.sat
// CHECK-NOT:     fptosi.sat.i8
tir.func @saturating(%x: f32) -> i64 {
  %i = tir.cast %x : f32 -> i64
  %u = tir.saturated_cast %x : f32 -> ui8
  %s = tir.saturated_cast %x : f32 -> i8
  tir.return %i : i64
}

// -----

// Unsigned integers and booleans become floats by llvm.uitofp (a ui64 above
// 2**63 has no wider signed integer to go through); signed ones by sitofp.
// CHECK-LABEL: llvm.func @unsigned_to_float(
// CHECK:         llvm.uitofp %{{.*}} : i64 to f32
// CHECK:         llvm.uitofp %{{.*}} : vector<8xi16> to vector<8xf64>
// CHECK:         llvm.sitofp %{{.*}} : i64 to f32
tir.func @unsigned_to_float(%u: ui64, %v: vector<8xui16>, %s: i64) -> f32 {
  %a = tir.cast %u : ui64 -> f32
  %b = tir.cast %v : vector<8xui16> -> vector<8xf64>
  %c = tir.cast %s : i64 -> f32
  tir.return %a : f32
}

// -----

// bf16 values live as their i16 bits: constants and globals are converted
// (1.5 is 0x3FC0 = 16320, -2.25 is 0xC010); f16 stays f16.
// CHECK: llvm.mlir.global external @bf16_table(dense<[16320, -16368]> : tensor<2xi16>) {{{.*}}} : !llvm.array<2 x i16>
// CHECK: llvm.mlir.global external @bf16_scalar(16320 : i16) {{{.*}}} : i16
// CHECK: llvm.mlir.global external @f16_table(dense<[1.500000e+00, -2.250000e+00]> : tensor<2xf16>) {{{.*}}} : !llvm.array<2 x f16>
// CHECK-LABEL: llvm.func @bf16_constant(
// CHECK:         llvm.mlir.constant(16320 : i16) : i16
tir.global @bf16_table : !tir.tensor<2xbf16> = dense<[1.5, -2.25]> : tensor<2xbf16>
tir.global @bf16_scalar : bf16 = 1.5 : bf16
tir.global @f16_table : !tir.tensor<2xf16> = dense<[1.5, -2.25]> : tensor<2xf16>
tir.func @bf16_constant(%A: !tir.tensor<4xbf16>) {
  %c = tir.const 1.5 : bf16
  %i = tir.const 0 : index
  tir.store %c, %A[%i] : !tir.tensor<4xbf16>
  tir.return
}

// -----

// The 8- and 4-bit floats live as their one-byte codes, i4 in an i8:
// globals keep their codes (0.5 is 0x30, 448 is 0x7E, -2 is 0xC0 = -64 in
// f8E4M3FN); a cast decodes with shifts and masks into f32 bits (no table,
// so vectors stay vectors) and encodes by rounding x * 2^(3 - e) to even;
// a cast to i4 keeps the low 4 bits, sign-extended (shl 4, ashr 4).
// CHECK: llvm.mlir.global external @f8_table(dense<[48, 126, -64]> : tensor<3xi8>) {{{.*}}} : !llvm.array<3 x i8>
// CHECK-LABEL: llvm.func @narrow_casts(
// CHECK:         %[[WIDE:.*]] = llvm.zext %{{.*}} : vector<4xi8> to vector<4xi32>
// CHECK:         llvm.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK:         llvm.call_intrinsic "llvm.roundeven.v4f32"
// CHECK:         llvm.trunc %{{.*}} : vector<4xi32> to vector<4xi8>
// CHECK:         llvm.shl
// CHECK-NEXT:    llvm.ashr
tir.global @f8_table : !tir.tensor<3xf8E4M3FN> = dense<[0.5, 448.0, -2.0]> : tensor<3xf8E4M3FN>
tir.func @narrow_casts(%A: !tir.tensor<4xf8E4M3FN>, %B: !tir.tensor<4xf8E5M2>, %F: !tir.tensor<1xf32>, %I: !tir.tensor<1xi4>) {
  %i = tir.const 0 : index
  %a = tir.load %A[%i lanes 4] : !tir.tensor<4xf8E4M3FN>
  %x = tir.cast %a : vector<4xf8E4M3FN> -> vector<4xf32>
  %b = tir.cast %x : vector<4xf32> -> vector<4xf8E5M2>
  tir.store %b, %B[%i lanes 4] : !tir.tensor<4xf8E5M2>
  %f = tir.load %F[%i] : !tir.tensor<1xf32>
  %n = tir.cast %f : f32 -> i4
  tir.store %n, %I[%i] : !tir.tensor<1xi4>
  tir.return
}

// -----

// f32 exp, log and tanh are expanded inline (LLVM would scalarize their
// intrinsics into one libm call per lane): vectors stay vectors. With
// AVX-512, exp scales by 2**n with one vscalefps taking the float n.
// AVX512-LABEL: llvm.func @vector_math(
// AVX512:         llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// AVX2-LABEL:   llvm.func @vector_math(
// AVX2-NOT:       llvm.x86.avx512
// AVX2-NOT:       llvm.ldexp
// AVX2:         llvm.return
// CHECK-LABEL: llvm.func @vector_math(
// CHECK-NOT:     llvm.log
// CHECK-NOT:     llvm.tanh
// CHECK-NOT:     llvm.exp
// CHECK:         llvm.call_intrinsic "llvm.copysign.v16f32"
// CHECK-NOT:     llvm.exp
// CHECK:         llvm.return
tir.func @vector_math(%x: vector<16xf32>) -> vector<16xf32> {
  %l = tir.log %x : vector<16xf32> -> vector<16xf32>
  %t = tir.tanh %l : vector<16xf32> -> vector<16xf32>
  %e = tir.exp %t : vector<16xf32> -> vector<16xf32>
  tir.return %e : vector<16xf32>
}

// -----

// A body-less tir.func @llvm.* declares an LLVM intrinsic (tir-expand-math
// calls copysign, fmuladd or ldexp so): its calls become llvm.call_intrinsic
// and it is not declared as a function.
// CHECK-LABEL: llvm.func @intrinsic_call(
// CHECK-SAME:      %[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32)
// CHECK-NEXT:    %[[R:.*]] = llvm.call_intrinsic "llvm.copysign.f32"(%[[A]], %[[B]]) : (f32, f32) -> f32
// CHECK-NEXT:    llvm.return %[[R]] : f32
// CHECK-NOT:   llvm.func @llvm.copysign.f32
tir.func @llvm.copysign.f32(f32, f32) -> f32
tir.func @intrinsic_call(%a: f32, %b: f32) -> f32 {
  %0 = tir.call @llvm.copysign.f32(%a, %b) : (f32, f32) -> f32
  tir.return %0 : f32
}

// -----

// bf16 arithmetic is done in f32 (tir-legalize-types' patterns, which the
// conversion applies to what is left): widened bits, one fadd, rounded back
// to nearest even.
// CHECK-LABEL: llvm.func @bf16_add(
// CHECK-SAME:      %[[A:[^:]*]]: i16, %[[B:[^:]*]]: i16) -> i16
// CHECK:         %[[A32:.*]] = llvm.zext %[[A]] : i16 to i32
// CHECK:         %[[B32:.*]] = llvm.zext %[[B]] : i16 to i32
// CHECK:         %[[SUM:.*]] = llvm.fadd %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    llvm.bitcast %[[SUM]] : f32 to i32
// CHECK:         llvm.trunc %{{.*}} : i32 to i16
tir.func @bf16_add(%a: bf16, %b: bf16) -> bf16 {
  %0 = tir.add %a, %b : (bf16, bf16) -> bf16
  tir.return %0 : bf16
}
