// Tensor IR verifier rules, each a located diagnostic.
// RUN: gc-opt %s --split-input-file --verify-diagnostics

tir.func @parallel_write_to_outer_local() {
  %zero = tir.const 0 : i32
  %sum = tir.define_var %zero : !tir.var<i32>
  %c0 = tir.const 0 : index
  %c8 = tir.const 8 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c8 step %c1 parallel {
    // expected-error @+1 {{'tir.assign' op writes a local var defined outside the enclosing parallel tir.for}}
    tir.assign %sum = %zero : !tir.var<i32>
  }
  tir.return
}

// -----

// Writing a local defined inside the parallel body, or a global, is fine;
// so is writing an outer local from a normal loop nested in a serial one.
tir.global @total : i32
tir.func @allowed_writes() {
  %zero = tir.const 0 : i32
  %outer = tir.define_var %zero : !tir.var<i32>
  %g = tir.global_ref @total : !tir.var<i32>
  %c0 = tir.const 0 : index
  %c8 = tir.const 8 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c8 step %c1 parallel {
    %inner = tir.define_var %zero : !tir.var<i32>
    tir.assign %inner = %zero : !tir.var<i32>
    tir.assign %g = %zero : !tir.var<i32>
  }
  tir.for %j = %c0 to %c8 step %c1 {
    tir.assign %outer = %zero : !tir.var<i32>
  }
  tir.return
}

// -----

tir.func @nested_parallel_write() {
  %zero = tir.const 0 : i32
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c1 step %c1 parallel {
    %per_thread = tir.define_var %zero : !tir.var<i32>
    tir.for %j = %c0 to %c1 step %c1 parallel {
      // expected-error @+1 {{writes a local var defined outside the enclosing parallel tir.for}}
      tir.assign %per_thread = %zero : !tir.var<i32>
    }
  }
  tir.return
}

// -----

tir.func @loop_var_outside(%n: index) {
  tir.for %i = %n to %n step %n {
  }
  // expected-error @+1 {{use of undeclared SSA value name %i}}
  %x = tir.add %i, %n : (index, index) -> index
  tir.return
}

// -----

tir.func @mod_on_floats(%a: f32) {
  // expected-error @+1 {{'tir.mod' op 'tir.mod' needs integer operands, got f32}}
  %0 = tir.mod %a, %a : (f32, f32) -> f32
  tir.return
}

// -----

tir.func @fmod_on_integers(%a: i32) {
  // expected-error @+1 {{'tir.fmod' op 'tir.fmod' needs float operands, got i32}}
  %0 = tir.fmod %a, %a : (i32, i32) -> i32
  tir.return
}

// -----

tir.func @sin_on_integers(%a: i32) {
  // expected-error @+1 {{'tir.sin' op 'tir.sin' needs a float operand, got i32}}
  %0 = tir.sin %a : i32 -> i32
  tir.return
}

// -----

tir.func @callee(%x: i32, %y: f32) -> f32

tir.func @call_arity(%x: i32) {
  // expected-error @+1 {{passes 1 arguments to @callee, which takes 2}}
  %0 = tir.call @callee(%x) : (i32) -> f32
  tir.evaluate %0 : f32
  tir.return
}

// -----

tir.func @callee(%x: i32, %y: f32) -> f32

tir.func @call_types(%x: i32) {
  // expected-error @+1 {{argument #1 has type i32, but @callee takes f32}}
  %0 = tir.call @callee(%x, %x) : (i32, i32) -> f32
  tir.evaluate %0 : f32
  tir.return
}

// -----

tir.func @callee(%x: i32) -> f32

tir.func @call_result(%x: i32) {
  // expected-error @+1 {{result type i32 should be f32, the return type of @callee}}
  %0 = tir.call @callee(%x) : (i32) -> i32
  tir.evaluate %0 : i32
  tir.return
}

// -----

tir.func @unknown_callee(%x: i32) {
  // expected-error @+1 {{@nowhere does not name a tir.func}}
  %0 = tir.call @nowhere(%x) : (i32) -> none
  tir.evaluate %0 : none
  tir.return
}

// -----

tir.func @print_int(i32)

tir.func @discarded_call(%x: i32) {
  // expected-error @+1 {{a call is an expression: consume its result, or wrap a call made for its effect in tir.evaluate}}
  %0 = tir.call @print_int(%x) : (i32) -> none
  tir.return
}

// -----

tir.func @twice(%x: i32) -> i32

tir.func @indirect_prototype(%p: !tir.ptr, %x: f32) {
  // expected-error @+1 {{argument #0 has type f32, but @twice takes i32}}
  %0 = tir.call_indirect %p(%x) {prototype = @twice} : (f32) -> i32
  tir.evaluate %0 : i32
  tir.return
}

// -----

tir.func @lanes_disagree(%a: vector<8xf32>, %b: vector<4xf32>) {
  // expected-error @+1 {{operand types vector<8xf32> and vector<4xf32> have different lane counts (8 vs 4)}}
  %0 = tir.add %a, %b : (vector<8xf32>, vector<4xf32>) -> vector<8xf32>
  tir.return
}

// -----

tir.func @auto_cast_result(%a: i32, %b: f32) {
  // expected-error @+1 {{result type i32 should be f32}}
  %0 = tir.mul %a, %b : (i32, f32) -> i32
  tir.return
}

// -----

tir.func @select_lanes(%c: vector<4xi1>, %a: vector<8xf32>) {
  // expected-error @+1 {{the condition has 4 lanes, the values 8}}
  %0 = tir.select %c, %a, %a : vector<4xi1>, vector<8xf32>
  tir.return
}

// -----

tir.func @vector_store_lanes(%A: !tir.tensor<4x8xf32>, %v: vector<4xf32>, %i: index) {
  // expected-error @+1 {{stores a vector<4xf32> into !tir.tensor<4x8xf32> with 8 lanes; expected vector<8xf32>}}
  "tir.store"(%v, %A, %i, %i) <{lanes = 8 : i64}> : (vector<4xf32>, !tir.tensor<4x8xf32>, index, index) -> ()
  tir.return
}

// -----

tir.func @load_rank(%A: !tir.tensor<4x8xf32>, %i: index) {
  // expected-error @+1 {{1 indices for a tensor of rank 2}}
  %0 = tir.load %A[%i] : !tir.tensor<4x8xf32>
  tir.return
}

// -----

tir.func @load_out_of_bounds(%A: !tir.tensor<4x8xf32>, %i: index) {
  %c4 = tir.const 4 : index
  // expected-error @+1 {{access [4 lanes 8] is out of bounds for the last dimension 8}}
  %0 = tir.load %A[%i, %c4 lanes 8] : !tir.tensor<4x8xf32>
  tir.return
}

// -----

tir.func @float_index(%A: !tir.tensor<8xf32>, %f: f32) {
  // expected-error @+1 {{index #0 has type f32, expected an integer or index}}
  %0 = tir.load %A[%f] : !tir.tensor<8xf32>
  tir.return
}

// -----

tir.func @if_condition(%x: i32) {
  // expected-error @+1 {{operand is used with type i1, but has been previously used or defined with type i32}}
  tir.if %x {
  }
  tir.return
}

// -----

tir.func @loop_bounds(%n: i64, %m: index) {
  // expected-error @+1 {{end has type i64, expected index like the loop variable}}
  tir.for %i = %m to %n step %m {
  }
  tir.return
}

// -----

tir.func @float_loop(%f: f32) {
  // expected-error @+1 {{loop variable has type f32, expected an integer or index}}
  tir.for %i = %f to %f step %f {
  }
  tir.return
}

// -----

tir.func @return_type(%x: i32) -> f32 {
  // expected-error @+1 {{returns i32 from a function returning f32}}
  tir.return %x : i32
}

// -----

tir.func @assign_type(%x: i64) {
  %v = tir.define_var : !tir.var<i32>
  // expected-error @+1 {{assigns a i64 to a !tir.var<i32>}}
  "tir.assign"(%v, %x) : (!tir.var<i32>, i64) -> ()
  tir.return
}

// -----

tir.func @reduce_scalar(%x: f32) {
  // expected-error @+1 {{'tir.reduce_add' reduces a vector, got f32}}
  %0 = tir.reduce_add %x : f32 -> f32
  tir.return
}

// -----

tir.func @fmadd_int(%x: i32) {
  // expected-error @+1 {{fmadd works on floats, got i32}}
  %0 = tir.fmadd %x, %x, %x : i32
  tir.return
}

// -----

tir.func @sqrt_int(%x: i32) {
  // expected-error @+1 {{'tir.sqrt' needs a float operand, got i32}}
  %0 = tir.sqrt %x : i32 -> i32
  tir.return
}

// -----

tir.func @shift_float(%x: f32) {
  // expected-error @+1 {{'tir.shl' needs integer operands}}
  %0 = tir.shl %x, %x : (f32, f32) -> f32
  tir.return
}

// -----

tir.func @reinterpret_width(%x: f32) {
  // expected-error @+1 {{cannot reinterpret f32 (32 bits) as i64 (64 bits)}}
  %0 = tir.reinterpret %x : f32 -> i64
  tir.return
}

// -----

tir.func @saturate_to_float(%x: vector<8xf32>) {
  // expected-error @+1 {{saturated_cast gives ui8 or i8, got vector<8xf32>}}
  %0 = tir.saturated_cast %x : vector<8xf32> -> vector<8xf32>
  tir.return
}

// -----

tir.func @brgemm_leading_dim(%A: !tir.tensor<32x32xf32>, %B: !tir.tensor<32x32xf32>, %C: !tir.tensor<32x32xf32>, %n: index) {
  // expected-error @+1 {{lda = 16 is smaller than k = 32}}
  tir.brgemm %A, %B, %C, %n {m = 32 : i64, n = 32 : i64, k = 32 : i64, lda = 16 : i64, ldb = 32 : i64, ldc = 32 : i64, stride_a = 0 : i64, stride_b = 0 : i64} : !tir.tensor<32x32xf32>, !tir.tensor<32x32xf32>, !tir.tensor<32x32xf32>, index
  tir.return
}

// -----

tir.func @brgemm_footprint(%A: !tir.tensor<32x32xf32>, %B: !tir.tensor<32x32xf32>, %C: !tir.tensor<32x32xf32>) {
  %batch = tir.const 2 : index
  // expected-error @+1 {{A needs 2048 elements (batch, stride_a, shape, leading dim) but !tir.tensor<32x32xf32> has 1024}}
  tir.brgemm %A, %B, %C, %batch {m = 32 : i64, n = 32 : i64, k = 32 : i64, lda = 32 : i64, ldb = 32 : i64, ldc = 32 : i64, stride_a = 1024 : i64, stride_b = 0 : i64} : !tir.tensor<32x32xf32>, !tir.tensor<32x32xf32>, !tir.tensor<32x32xf32>, index
  tir.return
}

// -----

tir.func @brgemm_types(%A: !tir.tensor<32x32xf32>, %B: !tir.tensor<32x32xbf16>, %C: !tir.tensor<32x32xf32>, %n: index) {
  // expected-error @+1 {{A and B element types differ: f32 vs bf16}}
  tir.brgemm %A, %B, %C, %n {m = 32 : i64, n = 32 : i64, k = 32 : i64, lda = 32 : i64, ldb = 32 : i64, ldc = 32 : i64, stride_a = 0 : i64, stride_b = 0 : i64} : !tir.tensor<32x32xf32>, !tir.tensor<32x32xbf16>, !tir.tensor<32x32xf32>, index
  tir.return
}

// -----

tir.func @list_brgemm_count(%A: !tir.tensor<2x!tir.ptr>, %C: !tir.tensor<4x4xf32>) {
  %batch = tir.const 3 : index
  // expected-error @+1 {{a_list holds 2 pointers, fewer than the batch count 3}}
  tir.list_brgemm %A, %A, %C, %batch {m = 4 : i64, n = 4 : i64, k = 4 : i64, lda = 4 : i64, ldb = 4 : i64, ldc = 4 : i64, a_type = f32, b_type = f32} : !tir.tensor<2x!tir.ptr>, !tir.tensor<2x!tir.ptr>, !tir.tensor<4x4xf32>, index
  tir.return
}

// -----

// expected-error @+1 {{the initial value of a !tir.tensor<4xf32> global must be a dense<...> : tensor of the same shape and element type}}
tir.global @table : !tir.tensor<4xf32> = dense<[1.0, 2.0]> : tensor<2xf32>

// -----

tir.global @counter : i64

tir.func @global_handle() {
  // expected-error @+1 {{the handle of @counter has type !tir.var<i64>, not !tir.var<i32>}}
  %0 = tir.global_ref @counter : !tir.var<i32>
  tir.return
}

// -----

tir.func @view_too_big(%A: !tir.tensor<4x8xf32>, %i: index) {
  // expected-error @+1 {{a view of 64 elements does not fit in !tir.tensor<4x8xf32>}}
  %0 = tir.tensor_ptr %A[%i, %i] : !tir.tensor<4x8xf32> -> !tir.tensor<8x8xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_panel(%A: !tir.tensor<64xf32>, %P: !tir.tensor<256xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{ldb = 2 must be at least n = 4}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 4 : i64, k = 4 : i64, lanes = 8 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 2 : i64, ldc = 4 : i64} : !tir.tensor<64xf32>, !tir.tensor<256xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

// A channel-blocked C: each vector column's rows must end before the next column.
tir.func @brgemm_tile_blocked_columns_overlap(%A: !tir.tensor<64xf32>, %P: !tir.tensor<256xf32>, %C: !tir.tensor<256xf32>) {
  // expected-error @+1 {{ldc = 8 must be at least lanes = 8, and 4 rows of it fit in ldc_vector = 16}}
  tir.brgemm_tile %A, %P, %C {m = 4 : i64, n = 16 : i64, k = 4 : i64, lanes = 8 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 8 : i64, ldc_vector = 16 : i64} : !tir.tensor<64xf32>, !tir.tensor<256xf32>, !tir.tensor<256xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_footprint(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{B needs 68 elements but !tir.tensor<64xf32> has 64}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 4 : i64, k = 5 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_types(%A: !tir.tensor<64xbf16>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{!tir.tensor<64xbf16> is neither C's element type f32 nor i32 pairs}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 4 : i64, k = 2 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<64xbf16>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_quad_types(%A: !tir.tensor<64xi32>, %P: !tir.tensor<64xi32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{u8_s8_quads needs i32 A, B and C}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 4 : i64, k = 2 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64, u8_s8_quads = true} : !tir.tensor<64xi32>, !tir.tensor<64xi32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_pair_types(%A: !tir.tensor<64xi32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{!tir.tensor<64xf32> differs from A's element type i32}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 4 : i64, k = 2 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<64xi32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @f80_loop_bound() {
  // expected-error @+1 {{f80 attributes are not supported (f16, bf16, f32 and f64 are)}}
  %c0 = tir.const 0.0 : f80
  tir.return
}

// -----

// An empty tensor (a zero dimension) is valid; its accesses sit in loops that run zero times.
tir.func @empty(%A: !tir.tensor<2x0xf32>) {
  %c0 = tir.const 0 : index
  %x = tir.load %A[%c0, %c0] : !tir.tensor<2x0xf32>
  tir.return
}

// -----

tir.func @float_literal_out_of_range() {
  // expected-error @+1 {{floating point value too large for its type}}
  %c = tir.const 1.0e+308 : f32
  tir.return
}

// -----

// A vector is a SIMD value: LLVM would run out of memory on billions of lanes.
// expected-error @+1 {{parameter #0 has type vector<2147483648xf32>; expected a scalar, vector (1 to 64 lanes), pointer or !tir.tensor}}
tir.func @huge_vector(%a: vector<2147483648xf32>) {
  tir.return
}

// -----

tir.func @brgemm_tile_prefetch_footprint(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>, %next: !tir.tensor<16xf32>) {
  // expected-error @+1 {{prefetch needs 17 elements but !tir.tensor<16xf32> has 16}}
  tir.brgemm_tile %A, %P, %C prefetch %next : !tir.tensor<16xf32> {m = 2 : i64, n = 4 : i64, k = 2 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

// With prefetch_every = 2 a tile of k = 5 prefetches rows 0..2 of ldb = 16.
tir.func @brgemm_tile_prefetch_every_footprint(%A: !tir.tensor<64xf32>, %P: !tir.tensor<128xf32>, %C: !tir.tensor<64xf32>, %next: !tir.tensor<32xf32>) {
  // expected-error @+1 {{prefetch needs 33 elements but !tir.tensor<32xf32> has 32}}
  tir.brgemm_tile %A, %P, %C prefetch %next : !tir.tensor<32xf32> {m = 2 : i64, n = 4 : i64, k = 5 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64, prefetch_every = 2 : i64} : !tir.tensor<64xf32>, !tir.tensor<128xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_prefetch_every_zero(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{prefetch_every = 0 must be positive}}
  tir.brgemm_tile %A, %P, %C prefetch %P : !tir.tensor<64xf32> {m = 1 : i64, n = 4 : i64, k = 2 : i64, lanes = 4 : i64, a_row = 2 : i64, a_k = 1 : i64, ldb = 4 : i64, ldc = 4 : i64, prefetch_every = 0 : i64} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_prefetch_every_alone(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{prefetch_every needs a prefetch operand}}
  tir.brgemm_tile %A, %P, %C {m = 1 : i64, n = 4 : i64, k = 2 : i64, lanes = 4 : i64, a_row = 2 : i64, a_k = 1 : i64, ldb = 4 : i64, ldc = 4 : i64, prefetch_every = 2 : i64} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_prefetch_taps(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %Q: !tir.tensor<8xf32>, %C: !tir.tensor<64xf32>) {
  // the prefetched rows follow B's taps: the last tap's row is element 10
  // expected-error @+1 {{prefetch needs 11 elements but !tir.tensor<8xf32> has 8}}
  tir.brgemm_tile %A, %P, %C prefetch %Q : !tir.tensor<8xf32> {m = 1 : i64, n = 3 : i64, k = 1 : i64, lanes = 4 : i64, a_row = 1 : i64, a_k = 1 : i64, ldb = 3 : i64, ldc = 3 : i64, taps = array<i64: 2, 1, 10>} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @prefetch_locality(%A: !tir.tensor<64xf32>) {
  %i = tir.const 0 : index
  // expected-error @+1 {{locality 4 is not 0 to 3}}
  tir.prefetch %A[%i] {locality = 4 : i64} : !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @prefetch_rank(%A: !tir.tensor<8x8xf32>) {
  %i = tir.const 0 : index
  // expected-error @+1 {{1 indices for a tensor of rank 2}}
  tir.prefetch %A[%i] : !tir.tensor<8x8xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_accumulate_twice(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>, %flag: i1) {
  // expected-error @+1 {{accumulate and accumulate_if are exclusive}}
  tir.brgemm_tile %A, %P, %C accumulate_if %flag {m = 2 : i64, n = 4 : i64, k = 2 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64, accumulate = true} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

// Values are used after their definition (the lowering to llvm relies on it).
tir.func @use_before_definition(%x: i32) -> i32 {
  // expected-error @+1 {{'tir.return' op operand #0 does not dominate this use}}
  tir.return %later : i32
  // expected-note @+1 {{operand defined here}}
  %later = tir.add %x, %x : (i32, i32) -> i32
}

// -----

// A call's none result is not a value to return (convert-tir-to-llvm had
// no LLVM value for it: a KeyError).
tir.func @callee(%v: f32) {
}
tir.func @return_none() {
  %one = tir.const 1.0 : f32
  %r = tir.call @callee(%one) : (f32) -> none
  // expected-error @+1 {{'tir.return' op returns a value of type none: a function returning none has 'tir.return' alone}}
  tir.return %r : none
}

// -----

tir.func @brgemm_tile_huge(%A: !tir.tensor<8xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<8xf32>) {
  // expected-error @+1 {{lanes = 4294967296 is more than 64}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 3 : i64, k = 4 : i64, lanes = 4294967296 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_not_a_register_tile(%A: !tir.tensor<8xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<8xf32>) {
  // expected-error @+1 {{a 1000 x 16 tile needs 1000 vector accumulators, more than 256}}
  tir.brgemm_tile %A, %P, %C {m = 1000 : i64, n = 16 : i64, k = 4 : i64, lanes = 16 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 4 : i64} : !tir.tensor<8xf32>, !tir.tensor<64xf32>, !tir.tensor<8xf32>
  tir.return
}

// -----

// The declarative ops tie their types with constraint variables; the custom
// form cannot even write these, the generic form can.
tir.func @select_value_types(%c: i1, %a: f32, %b: i32) {
  // expected-error @+1 {{'tir.select' op operand 'false_value' at position 2 does not verify: attribute f32 expected from variable 'T', but got i32}}
  %0 = "tir.select"(%c, %a, %b) : (i1, f32, i32) -> f32
  tir.return
}

// -----

tir.func @read_type() {
  %v = tir.define_var : !tir.var<f32>
  // expected-error @+1 {{'tir.read' op result 'result' at position 0 does not verify: attribute f32 expected from variable 'T', but got i32}}
  %0 = "tir.read"(%v) : (!tir.var<f32>) -> i32
  tir.return
}

// -----

tir.func @shuffle_types(%a: vector<8xf32>, %b: vector<4xf64>) {
  // expected-error @+1 {{'tir.shuffle' op operand 'b' at position 1 does not verify: attribute vector<8xf32> expected from variable 'T', but got vector<4xf64>}}
  %0 = "tir.shuffle"(%a, %b) <{imm = 68 : i64, elem_bits = 32 : i64}> : (vector<8xf32>, vector<4xf64>) -> vector<8xf32>
  tir.return
}

// -----

tir.func @permutex2var_idx(%a: vector<8xf32>, %idx: vector<4xi32>) {
  // expected-error @+1 {{'tir.permutex2var' op idx must be an integer vector with 8 lanes, got vector<4xi32>}}
  %0 = tir.permutex2var %a, %idx, %a : vector<8xf32>, vector<4xi32>
  tir.return
}

// -----

tir.func @list_brgemm_not_pointers(%A: !tir.tensor<4xf32>, %C: !tir.tensor<64xf32>, %n: index) {
  // expected-error @+1 {{'tir.list_brgemm' op a_list must be a tensor of !tir.ptr, got !tir.tensor<4xf32>}}
  tir.list_brgemm %A, %A, %C, %n {m = 2 : i64, n = 2 : i64, k = 2 : i64, lda = 2 : i64, ldb = 2 : i64, ldc = 2 : i64, a_type = f32, b_type = f32} : !tir.tensor<4xf32>, !tir.tensor<4xf32>, !tir.tensor<64xf32>, index
  tir.return
}

// -----

tir.func @brgemm_b_footprint(%A: !tir.tensor<32x32xf32>, %B: !tir.tensor<32x32xf32>, %C: !tir.tensor<32x32xf32>) {
  %batch = tir.const 2 : index
  // expected-error @+1 {{B needs 2048 elements (batch, stride_b, shape, leading dim) but !tir.tensor<32x32xf32> has 1024}}
  tir.brgemm %A, %B, %C, %batch {m = 32 : i64, n = 32 : i64, k = 32 : i64, lda = 32 : i64, ldb = 32 : i64, ldc = 32 : i64, stride_a = 0 : i64, stride_b = 1024 : i64} : !tir.tensor<32x32xf32>, !tir.tensor<32x32xf32>, !tir.tensor<32x32xf32>, index
  tir.return
}

// -----

tir.func @brgemm_tile_taps_triples(%A: !tir.tensor<64xf32>, %P: !tir.tensor<64xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{taps must hold (count, A step, B step) triples}}
  tir.brgemm_tile %A, %P, %C {m = 1 : i64, n = 3 : i64, k = 1 : i64, lanes = 4 : i64, a_row = 1 : i64, a_k = 1 : i64, ldb = 3 : i64, ldc = 3 : i64, taps = array<i64: 2, 1>} : !tir.tensor<64xf32>, !tir.tensor<64xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_tap_footprint(%A: !tir.tensor<64xf32>, %P: !tir.tensor<16xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{B needs 18 elements but !tir.tensor<16xf32> has 16}}
  tir.brgemm_tile %A, %P, %C {m = 1 : i64, n = 3 : i64, k = 1 : i64, lanes = 4 : i64, a_row = 1 : i64, a_k = 1 : i64, ldb = 3 : i64, ldc = 3 : i64, taps = array<i64: 2, 1, 5, 3, 1, 5>} : !tir.tensor<64xf32>, !tir.tensor<16xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

tir.func @brgemm_tile_wrap(%A: !tir.tensor<64xf32>, %P: !tir.tensor<256xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{a_wrap must hold [rows, step]}}
  tir.brgemm_tile %A, %P, %C {m = 2 : i64, n = 8 : i64, k = 4 : i64, lanes = 8 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 8 : i64, ldc = 8 : i64, a_wrap = array<i64: 2>} : !tir.tensor<64xf32>, !tir.tensor<256xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

// Runs of 2 rows, 40 floats apart: row 3 starts at 44, and its 4 K steps end past A's 32.
tir.func @brgemm_tile_wrap_footprint(%A: !tir.tensor<32xf32>, %P: !tir.tensor<256xf32>, %C: !tir.tensor<64xf32>) {
  // expected-error @+1 {{A needs 48 elements but !tir.tensor<32xf32> has 32}}
  tir.brgemm_tile %A, %P, %C {m = 4 : i64, n = 8 : i64, k = 4 : i64, lanes = 8 : i64, a_row = 4 : i64, a_k = 1 : i64, ldb = 8 : i64, ldc = 8 : i64, a_wrap = array<i64: 2, 40>} : !tir.tensor<32xf32>, !tir.tensor<256xf32>, !tir.tensor<64xf32>
  tir.return
}

// -----

// LLVM has no i0: elements are of a bit or more (a fuzzed prefetch reached LLVM's parser).
// expected-error @+1 {{tensor element type i0 is not a scalar type}}
tir.func @zero_bit_elements(%A: !tir.tensor<8xi0>) {
  tir.return
}
