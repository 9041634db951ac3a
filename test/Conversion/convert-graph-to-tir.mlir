// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-graph-to-tir{target=avx2})' | filecheck %s
// The vector width comes from the target: 16 f32 lanes with AVX-512, 4 without AVX.
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-graph-to-tir{target=avx512})' | filecheck %s --check-prefix=AVX512
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-graph-to-tir{target=generic})' | filecheck %s --check-prefix=GENERIC
// RUN: not gc-opt %s --split-input-file --pass-pipeline='builtin.module(convert-graph-to-tir{target=avx9})' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// AVX512-LABEL: tir.func @add__2(
// AVX512:         tir.load %{{.*}}[%{{.*}} lanes 16] : !tir.tensor<1048576xf32>
// GENERIC-LABEL: tir.func @add__2(
// GENERIC:        tir.load %{{.*}}[%{{.*}} lanes 4] : !tir.tensor<1048576xf32>
// UNKNOWN: error: unknown target 'avx9' (expected one of host, avx512, avx2, generic)

// Seed 000: matmul then add. The entry takes the inputs then the output as
// an out-parameter; the matmul result is a local tensor; each op is a
// kernel function called with its outputs first, then its inputs.
// CHECK-LABEL: tir.func @main_entry(%in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>, %out: !tir.tensor<1024x1024xf32>) {
// CHECK-NEXT:    %matmul_out = tir.define_tensor : !tir.tensor<1024x1024xf32>
// CHECK-NEXT:    %[[MM:.*]] = tir.call @matmul__1(%matmul_out, %in0, %in1)
// CHECK-NEXT:    tir.evaluate %[[MM]] : none
// CHECK-NEXT:    %[[ADD:.*]] = tir.call @add__2(%out, %matmul_out, %in1)
// CHECK-NEXT:    tir.evaluate %[[ADD]] : none
// CHECK-NEXT:    tir.return
// The matmul kernel packs B into panels of nr = 16 columns (2 AVX2
// vectors) and reads A where it is (row stride 1024), then runs parallel
// blocks of the output, each of 6x16 register tiles over all of K (the
// panel's 1024 x 16 slice takes a quarter of the 512 KiB L2), with 4 rows
// left over. The tiles share the next panel's lines (1024 rows of 16, one
// line a row) for prefetching: each of a block's 11 row groups takes
// ceil(1024 / 11) = 94 rows of it (prefetch_every = 11).
// CHECK-LABEL: tir.func @matmul__1(%out0: !tir.tensor<1024x1024xf32>, %in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>) {
// CHECK:         tir.define_tensor : !tir.tensor<64x1024x16xf32>
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           tir.load %in1[%{{.*}}, %{{.*}} lanes 8]
// CHECK-NOT:     tir.define_tensor
// CHECK:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} prefetch %{{.*}} : !tir.tensor<1489xf32> {m = 6 : i64, n = 16 : i64, k = 1024 : i64, lanes = 8 : i64, a_row = 1024 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 1024 : i64, prefetch_every = 11 : i64}
// CHECK:           tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} prefetch %{{.*}} : !tir.tensor<1489xf32> {m = 4 : i64, n = 16 : i64, k = 1024 : i64, lanes = 8 : i64, a_row = 1024 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 1024 : i64, prefetch_every = 11 : i64}
// The add kernel walks its contiguous operands as one flat range: a
// parallel loop over 256 chunks of 4096 elements (enough for every thread,
// whatever the outer dimension), 8-lane (AVX2) vectors within a chunk.
// CHECK-LABEL: tir.func @add__2(%out0: !tir.tensor<1024x1024xf32>, %in0: !tir.tensor<1024x1024xf32>, %in1: !tir.tensor<1024x1024xf32>) {
// CHECK-NEXT:    %[[ZERO:.*]] = tir.const 0 : index
// CHECK-NEXT:    %[[OUT:.*]] = tir.tensor_ptr %out0[%[[ZERO]], %[[ZERO]]] : !tir.tensor<1024x1024xf32> -> !tir.tensor<1048576xf32>
// CHECK:         %[[X:.*]] = tir.tensor_ptr %in0[%{{.*}}, %{{.*}}] : !tir.tensor<1024x1024xf32> -> !tir.tensor<1048576xf32>
// CHECK:         %[[Y:.*]] = tir.tensor_ptr %in1[%{{.*}}, %{{.*}}] : !tir.tensor<1024x1024xf32> -> !tir.tensor<1048576xf32>
// CHECK:         %[[CHUNKS:.*]] = tir.const 256 : index
// CHECK:         tir.for %[[CHUNK:.*]] = %{{.*}} to %[[CHUNKS]] step %{{.*}} parallel {
// CHECK-NEXT:      %[[SIZE:.*]] = tir.const 4096 : index
// CHECK-NEXT:      %[[START:.*]] = tir.mul %[[CHUNK]], %[[SIZE]] : (index, index) -> index
// CHECK:           tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[I:.*]] = tir.add %[[START]], %[[J]] : (index, index) -> index
// CHECK-NEXT:        %[[A:.*]] = tir.load %[[X]][%[[I]] lanes 8] : !tir.tensor<1048576xf32>
// CHECK-NEXT:        %[[B:.*]] = tir.load %[[Y]][%[[I]] lanes 8] : !tir.tensor<1048576xf32>
// CHECK-NEXT:        %[[SUM:.*]] = tir.add %[[A]], %[[B]] : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:        tir.store %[[SUM]], %[[OUT]][%[[I]] lanes 8] : !tir.tensor<1048576xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.return
// CHECK-NOT:   graph.
func.func @main_entry(%in0: tensor<1024x1024xf32>, %in1: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = graph.matmul %in0, %in1 : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = graph.add %0, %in1 : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %1 : tensor<1024x1024xf32>
}

// -----

// A decode step's matmul (M = 2, one row group): its tiles read each packed
// B line once, in order, which the hardware prefetcher streams; no tile
// prefetches the next panel (a column of prefetches split that stream).
// CHECK-LABEL: tir.func @matmul__1(%out0: !tir.tensor<2x1024xf32>
// CHECK:         tir.brgemm_tile %{{[^ ,]*}}, %{{[^ ,]*}}, %{{[^ ,]*}} {m = 2 : i64, n = 32 : i64, k = 1024 : i64
// CHECK-NOT:     prefetch
// CHECK:         tir.return
func.func @gemv(%x: tensor<2x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<2x1024xf32> {
  %0 = graph.matmul %x, %w : (tensor<2x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x1024xf32>
  func.return %0 : tensor<2x1024xf32>
}

// -----

// A scalar tail after the vector part; broadcasting a row vector; a small
// tensor stays serial; constants become globals; an input returned as an
// output, and a value returned twice, are copied (by one kernel: the two
// 4x11 copies are the same function).
// CHECK:       tir.global @twice_constant_1 : !tir.tensor<3xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-LABEL: tir.func @twice(%x: !tir.tensor<4x11xf32>, %out0: !tir.tensor<4x11xf32>, %out1: !tir.tensor<4x11xf32>, %out2: !tir.tensor<4x11xf32>, %out3: !tir.tensor<3xf32>) {
// CHECK-NEXT:    %[[C:.*]] = tir.global_ref @twice_constant_1 : !tir.tensor<3xf32>
// CHECK:         tir.call @relu__2(%out0, %x)
// CHECK:         tir.call @copy__3(%out1, %out0)
// CHECK:         tir.call @copy__3(%out2, %x)
// CHECK:         tir.call @copy__5(%out3, %[[C]])
// CHECK-NOT:   tir.func @copy__4(
// CHECK-LABEL: tir.func @relu__2(
// CHECK-NOT:     parallel
// CHECK:         %[[TAIL:.*]] = tir.const 40 : index
// CHECK:         tir.for %{{.*}} = %{{.*}} to %[[TAIL]] step %{{.*}} {
// CHECK:           tir.load %{{.*}}[%{{.*}} lanes 8] : !tir.tensor<44xf32>
// CHECK:           tir.max {{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK:         tir.for %{{.*}} = %[[TAIL]] to %{{.*}} step %{{.*}} {
// CHECK:           tir.load %{{.*}}[%{{.*}}] : !tir.tensor<44xf32>
// CHECK:           tir.max {{.*}} : (f32, f32) -> f32
func.func @twice(%x: tensor<4x11xf32>) -> (tensor<4x11xf32>, tensor<4x11xf32>, tensor<4x11xf32>, tensor<3xf32>) {
  %c = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = graph.relu %x : tensor<4x11xf32>
  func.return %r, %r, %x, %c : tensor<4x11xf32>, tensor<4x11xf32>, tensor<4x11xf32>, tensor<3xf32>
}

// -----

// Blocked formats become index arithmetic on the blocked buffer.
// CHECK-LABEL: tir.func @blocked(%x: !tir.tensor<2x3x8x8xf32>, %out: !tir.tensor<2x3x8x8xf32>) {
// CHECK-LABEL: tir.func @neg__1(%out0: !tir.tensor<2x3x8x8xf32>, %in0: !tir.tensor<2x3x8x8xf32>) {
// CHECK:         %[[I:.*]] = tir.div %{{.*}}, %{{.*}} : (index, index) -> index
// CHECK:         tir.mod
// CHECK:         tir.load %in0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !tir.tensor<2x3x8x8xf32>
func.func @blocked(%x: tensor<16x24xf32, #graph.format<"AB8a8b">>) -> tensor<16x24xf32, #graph.format<"AB8a8b">> {
  %0 = graph.neg %x : tensor<16x24xf32, #graph.format<"AB8a8b">>
  func.return %0 : tensor<16x24xf32, #graph.format<"AB8a8b">>
}

// -----

// A reduction over the contiguous axis: parallel over the 8 rows (the op
// reads 65600 elements, enough for threads although it writes only 8),
// four independent 16-lane accumulators per 64-element step, folded into a
// running total after each 4096-element block, combined as a tree, across
// lanes, then with the scalar tail's accumulator.
// AVX512-LABEL: tir.func @reduce_sum__1(%out0: !tir.tensor<8xf32>, %in0: !tir.tensor<8x8200xf32>) {
// AVX512:         tir.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// AVX512-COUNT-4:   tir.define_var %{{.*}} : !tir.var<vector<16xf32>>
// AVX512:           %[[TAIL:.*]] = tir.define_var %{{.*}} : !tir.var<f32>
// AVX512:           %[[TOTAL:.*]] = tir.define_var %{{.*}} : !tir.var<vector<16xf32>>
// AVX512:           %[[BLOCK:.*]] = tir.const 4096 : index
// AVX512-NEXT:      tir.for %[[START:.*]] = %{{.*}} to %{{.*}} step %[[BLOCK]] {
// AVX512:             %[[STEP:.*]] = tir.const 64 : index
// AVX512-NEXT:        tir.for %[[J:.*]] = %[[START]] to %{{.*}} step %[[STEP]] {
// AVX512-NEXT:          tir.load %in0[%[[ROW]], %[[J]] lanes 16] : !tir.tensor<8x8200xf32>
// AVX512-COUNT-3:       tir.load %in0[%[[ROW]], %{{.*}} lanes 16] : !tir.tensor<8x8200xf32>
// AVX512:             tir.assign %[[TOTAL]] = %{{.*}} : !tir.var<vector<16xf32>>
// AVX512:           tir.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// AVX512-NEXT:        tir.load %in0[%[[ROW]], %[[K]]] : !tir.tensor<8x8200xf32>
// AVX512:           %[[LANES:.*]] = tir.reduce_add %{{.*}} : vector<16xf32> -> f32
// AVX512-NEXT:      %[[SUM:.*]] = tir.add %[[LANES]], %{{.*}} : (f32, f32) -> f32
// AVX512-NEXT:      tir.store %[[SUM]], %out0[%[[ROW]]] : !tir.tensor<8xf32>
func.func @rows(%x: tensor<8x8200xf32>) -> tensor<8xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<8x8200xf32> -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

// Reducing the outer axis keeps the contiguous one: blocks of four 16-lane
// column vectors accumulate whole rows (no lane combination), parallel
// over the column blocks; NaN-propagating max (x wins if larger or NaN).
// AVX512-LABEL: tir.func @reduce_max__1(%out0: !tir.tensor<128xf32>, %in0: !tir.tensor<300x128xf32>) {
// AVX512:         tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// AVX512:           tir.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// AVX512:             %[[X:.*]] = tir.load %{{.*}}[%[[R]], %{{.*}} lanes 16] : !tir.tensor<300x128xf32>
// AVX512-NEXT:        %[[GT:.*]] = tir.gt %[[X]], %[[ACC:.*]] : (vector<16xf32>, vector<16xf32>) -> vector<16xi1>
// AVX512-NEXT:        %[[NAN:.*]] = tir.isnan %[[X]] : vector<16xf32> -> vector<16xi1>
// AVX512-NEXT:        %[[WINS:.*]] = tir.or %[[GT]], %[[NAN]]
// AVX512-NEXT:        tir.select %[[WINS]], %[[X]], %[[ACC]]
func.func @columns(%x: tensor<300x128xf32>) -> tensor<128xf32> {
  %0 = graph.reduce_max %x {axes = array<i64: 0>} : tensor<300x128xf32> -> tensor<128xf32>
  func.return %0 : tensor<128xf32>
}

// -----

// A constant weight is packed at compile time: the matmul kernel reads only
// its packed global, so the unpacked constant is neither a kernel argument
// nor a global (each weight used to be emitted twice).
// CHECK-LABEL: tir.global @matmul__{{[0-9]+}}_packed_b : !tir.tensor<
// CHECK-NOT:   tir.global
// CHECK-LABEL: tir.func @weights(%x: !tir.tensor<8x64xf32>, %out: !tir.tensor<8x16xf32>) {
// CHECK-NOT:     tir.global_ref
// CHECK:         tir.call @matmul__{{[0-9]+}}(%out, %x) : (!tir.tensor<8x16xf32>, !tir.tensor<8x64xf32>) -> none
// CHECK-LABEL: tir.func @matmul__{{[0-9]+}}(%out0: !tir.tensor<8x16xf32>, %in0: !tir.tensor<8x64xf32>) {
// CHECK:         tir.global_ref @matmul__{{[0-9]+}}_packed_b
func.func @weights(%x: tensor<8x64xf32>) -> tensor<8x16xf32> {
  %w = graph.constant dense<0.5> : tensor<64x16xf32>
  %y = graph.matmul %x, %w : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  func.return %y : tensor<8x16xf32>
}

// -----

// Two layers of the same shape with different weights: one matmul kernel,
// built once, taking its packed weights as an argument; each call passes
// its own (the second layer's packed the same way, in a global of its own).
// CHECK-LABEL: tir.func @layers(
// CHECK:         %[[W1:.*]] = tir.global_ref @[[P1:matmul__[0-9]+_packed_b]]
// CHECK-NEXT:    tir.call @[[K:matmul__[0-9]+]](%{{.*}}, %x, %[[W1]])
// CHECK:         %[[W2:.*]] = tir.global_ref @[[P2:matmul__[0-9]+_packed_b_[0-9]+]]
// CHECK-NEXT:    tir.call @[[K]](%out, %{{.*}}, %[[W2]])
// CHECK:       tir.func @[[K]](%out0: !tir.tensor<8x64xf32>, %in0: !tir.tensor<8x64xf32>, %packed_b: !tir.tensor<
// CHECK-NOT:     tir.global_ref
// CHECK:         tir.return
// CHECK-NOT:   tir.func @matmul__
func.func @layers(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %w1 = graph.constant dense<0.5> : tensor<64x64xf32>
  %w2 = graph.constant dense<0.25> : tensor<64x64xf32>
  %h = graph.matmul %x, %w1 : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %y = graph.matmul %h, %w2 : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}

// -----

// Kernels that differ in anything but the globals they read stay apart: two
// leaky_relu of one shape with other slopes are two kernels, and two of the
// same slope one.
// CHECK-LABEL: tir.func @slopes(
// CHECK:         tir.call @[[A:leaky_relu__[0-9]+]](
// CHECK:         tir.call @[[B:leaky_relu__[0-9]+]](
// CHECK:         tir.call @[[B]](
// CHECK-DAG:   tir.func @[[A]](
// CHECK-DAG:   tir.func @[[B]](
func.func @slopes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = graph.leaky_relu %x {alpha = 0.1 : f32} : tensor<4x8xf32>
  %b = graph.leaky_relu %a {alpha = 0.2 : f32} : tensor<4x8xf32>
  %c = graph.leaky_relu %b {alpha = 0.2 : f32} : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// -----

// A 1x1 convolution over few channels (K = 24 <= 64) reads its input where
// it is: no packed copy of B, the tiles' B rows a plane (100 pixels) apart
// (ldb = 100), the last 4 pixels in a masked tail tile; the weights are
// packed at compile time.
// CHECK-LABEL: tir.func @conv2d__2(%out0: !tir.tensor<1x8x10x10xf32>, %in0: !tir.tensor<1x24x10x10xf32>
// CHECK-NOT:     tir.define_tensor
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} {m = 4 : i64, n = 24 : i64, k = 24 : i64, lanes = 8 : i64, a_row = 1 : i64, a_k = 4 : i64, ldb = 100 : i64, ldc = 100 : i64}
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} {m = 4 : i64, n = 4 : i64, k = 24 : i64, {{.*}}ldb = 100 : i64
func.func @shallow_1x1(%x: tensor<1x24x10x10xf32>) -> tensor<1x8x10x10xf32> {
  %w = graph.constant dense<0.5> : tensor<8x24x1x1xf32>
  %0 = graph.conv2d %x, %w : (tensor<1x24x10x10xf32>, tensor<8x24x1x1xf32>) -> tensor<1x8x10x10xf32>
  func.return %0 : tensor<1x8x10x10xf32>
}

// -----

// K = 4097 (past the 2048 rows of a quarter of L2) is cut into two K
// blocks of 1366 rows and a last one of the 1365 left (no zero padding, A
// still read in place): the first block stores, the others and the last
// add to C.
// CHECK-LABEL: tir.func @matmul__1(%out0: !tir.tensor<12x16xf32>, %in0: !tir.tensor<12x4097xf32>
// CHECK:         tir.define_tensor : !tir.tensor<1x4097x16xf32>
// CHECK-NOT:     tir.define_tensor
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} accumulate_if %{{.*}} prefetch %{{.*}} : !tir.tensor<{{.*}}xf32> {m = 6 : i64, n = 16 : i64, k = 1366 : i64, lanes = 8 : i64, a_row = 4097 : i64
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} prefetch %{{.*}} : !tir.tensor<{{.*}}xf32> {m = 6 : i64, n = 16 : i64, k = 1365 : i64, {{.*}}accumulate = true
func.func @ktail(%a: tensor<12x4097xf32>, %b: tensor<4097x16xf32>) -> tensor<12x16xf32> {
  %0 = graph.matmul %a, %b : (tensor<12x4097xf32>, tensor<4097x16xf32>) -> tensor<12x16xf32>
  func.return %0 : tensor<12x16xf32>
}

// -----

// graph.cumsum along an outer axis: one running total per line, 8 lines at a
// time (the contiguous inner dim in vectors), each element stored before it is
// added when exclusive; the elements are added in order, as numpy.cumsum does.
// The outer dim of one line takes no loop (index 0).
// CHECK-LABEL: tir.func @cumsum__1(%out0: !tir.tensor<5x16xf32>, %in0: !tir.tensor<5x16xf32>) {
// CHECK:         %[[O:.*]] = tir.const 0 : index
// CHECK:         %[[X:.*]] = tir.tensor_ptr %in0[%{{.*}}, %{{.*}}] : !tir.tensor<5x16xf32> -> !tir.tensor<1x5x16xf32>
// CHECK:         %[[Y:.*]] = tir.tensor_ptr %out0[%{{.*}}, %{{.*}}] : !tir.tensor<5x16xf32> -> !tir.tensor<1x5x16xf32>
// CHECK:         tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[ZERO:.*]] = tir.const dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:        %[[TOTAL:.*]] = tir.define_var %[[ZERO]] : !tir.var<vector<8xf32>>
// CHECK:             tir.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:          %[[V:.*]] = tir.load %[[X]][%[[O]], %[[I]], %[[J]] lanes 8] : !tir.tensor<1x5x16xf32>
// CHECK-NEXT:          %[[BEFORE:.*]] = tir.read %[[TOTAL]] : !tir.var<vector<8xf32>>
// CHECK-NEXT:          tir.store %[[BEFORE]], %[[Y]][%[[O]], %[[I]], %[[J]] lanes 8] : !tir.tensor<1x5x16xf32>
// CHECK-NEXT:          %[[OLD:.*]] = tir.read %[[TOTAL]] : !tir.var<vector<8xf32>>
// CHECK-NEXT:          %[[NEW:.*]] = tir.add %[[OLD]], %[[V]] : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:          tir.assign %[[TOTAL]] = %[[NEW]] : !tir.var<vector<8xf32>>
// graph.cumprod: the same walk, from 1, multiplying.
// CHECK-LABEL: tir.func @cumprod__2(
// CHECK:             %[[ONE:.*]] = tir.const dense<1.000000e+00> : vector<8xf32>
// CHECK-NEXT:        %[[PRODUCT:.*]] = tir.define_var %[[ONE]] : !tir.var<vector<8xf32>>
// CHECK:               tir.mul %{{.*}}, %{{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
func.func @running(%x: tensor<5x16xf32>) -> (tensor<5x16xf32>, tensor<5x16xf32>) {
  %0 = graph.cumsum %x {axis = 0 : i64, exclusive = true} : tensor<5x16xf32>
  %1 = graph.cumprod %x {axis = 0 : i64} : tensor<5x16xf32>
  func.return %0, %1 : tensor<5x16xf32>, tensor<5x16xf32>
}

// -----

// graph.argmax along the contiguous axis: 4 vectors of (best, index) per row,
// a NaN replacing a number; their 32 lanes then meet in a buffer, compared by
// value then index, and the 4 elements left over run in order.
// CHECK-LABEL: tir.func @argmax__1(%out0: !tir.tensor<3xi64>, %in0: !tir.tensor<3x100xf32>) {
// CHECK:         tir.for %[[O:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-4:   tir.load %{{.*}}[%[[O]], %{{.*}} lanes 8] : !tir.tensor<3x100xf32>
// CHECK:           tir.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             %[[V:.*]] = tir.load %{{.*}}[%[[O]], %{{.*}} lanes 8] : !tir.tensor<3x100xf32>
// CHECK-NEXT:        %[[BEST:.*]] = tir.read %{{.*}} : !tir.var<vector<8xf32>>
// CHECK-NEXT:        %[[GREATER:.*]] = tir.gt %[[V]], %[[BEST]] : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
// CHECK-NEXT:        tir.isnan %[[V]] : vector<8xf32> -> vector<8xi1>
// CHECK:             tir.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xi64>
// CHECK:           %[[VALUES:.*]] = tir.define_tensor : !tir.tensor<32xf32>
// CHECK-NEXT:      %[[INDICES:.*]] = tir.define_tensor : !tir.tensor<32xi64>
// CHECK:           tir.for %[[SLOT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        tir.load %[[VALUES]][%[[SLOT]]] : !tir.tensor<32xf32>
// CHECK-NEXT:        tir.load %[[INDICES]][%[[SLOT]]] : !tir.tensor<32xi64>
// CHECK:           tir.store %{{.*}}, %{{.*}}[%[[O]], %{{.*}}] : !tir.tensor<3x1xi64>
func.func @argmax_rows(%x: tensor<3x100xf32>) -> tensor<3xi64> {
  %0 = graph.argmax %x {axis = 1 : i64} : tensor<3x100xf32> -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}

// -----

// graph.top_k_indices keeps the best k of each line, sorted, in the output:
// an element enters when the list is short or it beats the k-th, then is
// carried down the list, swapping with each entry it beats.
// CHECK-LABEL: tir.func @top_k_indices__1(%out0: !tir.tensor<4x3xi64>, %in0: !tir.tensor<4x10xf32>) {
// CHECK:         %[[COUNT:.*]] = tir.define_var %{{.*}} : !tir.var<index>
// CHECK:         tir.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[FULL:.*]] = tir.eq %{{.*}}, %{{.*}} : (index, index) -> i1
// CHECK-NEXT:      tir.if %[[FULL]] {
// CHECK:           tir.if %{{.*}} {
// CHECK:             %[[FILLED:.*]] = tir.read %[[COUNT]] : !tir.var<index>
// CHECK-NEXT:        %{{.*}} = tir.const 0 : index
// CHECK-NEXT:        %{{.*}} = tir.const 1 : index
// CHECK-NEXT:        tir.for %{{.*}} = %{{.*}} to %[[FILLED]] step %{{.*}} {
// CHECK:               tir.if %{{.*}} {
// CHECK:                 tir.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tir.tensor<4x3x1xi64>
func.func @best_three(%x: tensor<4x10xf32>) -> tensor<4x3xi64> {
  %0 = graph.top_k_indices %x {k = 3 : i64} : tensor<4x10xf32> -> tensor<4x3xi64>
  func.return %0 : tensor<4x3xi64>
}

// -----

// The epilogue of a GEMM convolution whose blocks are whole output rows
// walks them as one vector range (7x7 merged to 49) when what it reads merges
// (the per-channel bias); the convolution's own input and filter, of other
// shapes, do not keep it row by row with a scalar tail.
// CHECK-LABEL: tir.func @fused__{{[0-9]+}}(%out0: !tir.tensor<1x8x7x7xf32>
// CHECK:         tir.brgemm_tile
// CHECK:         tir.tensor_ptr %out0[{{.*}}] : !tir.tensor<1x8x7x7xf32> -> !tir.tensor<1x8x49xf32>
// CHECK:         tir.tensor_ptr %in2[{{.*}}] : !tir.tensor<8x1x1xf32> -> !tir.tensor<8x1xf32>
// CHECK:         tir.max %{{.*}}, %{{.*}} : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
func.func @strided_conv_epilogue(%x: tensor<1x16x14x14xf32>, %w: tensor<8x16x3x3xf32>, %bias: tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32> {
  %0 = graph.fused %x, %w, %bias : (tensor<1x16x14x14xf32>, tensor<8x16x3x3xf32>, tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32> {
  ^bb0(%a: tensor<1x16x14x14xf32>, %b: tensor<8x16x3x3xf32>, %c: tensor<8x1x1xf32>):
    %1 = graph.conv2d %a, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x14x14xf32>, tensor<8x16x3x3xf32>) -> tensor<1x8x7x7xf32>
    %2 = graph.add %1, %c : (tensor<1x8x7x7xf32>, tensor<8x1x1xf32>) -> tensor<1x8x7x7xf32>
    %3 = graph.relu %2 : tensor<1x8x7x7xf32>
    graph.yield %3 : tensor<1x8x7x7xf32>
  }
  func.return %0 : tensor<1x8x7x7xf32>
}

// -----

// A batch of one takes no loop: the parallel loop of a head split is the
// next dim (12 heads), not a loop of one iteration that left it serial.
// CHECK-LABEL: tir.func @transpose__1(
// CHECK:         %[[ZERO:.*]] = tir.const 0 : index
// CHECK:         tir.for %[[HEAD:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK:           tir.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             tir.load %in0[%{{.*}}, %[[ROW]], %[[HEAD]], %{{.*}} lanes 8]
// AVX512-LABEL: tir.func @transpose__1(
// AVX512:         tir.for %[[HEAD:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// AVX512:           tir.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// AVX512:             tir.load %in0[%{{.*}}, %[[ROW]], %[[HEAD]], %{{.*}} lanes 16]
func.func @heads(%x: tensor<1x64x12x64xf32>) -> tensor<1x12x64x64xf32> {
  %0 = graph.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<1x64x12x64xf32> -> tensor<1x12x64x64xf32>
  func.return %0 : tensor<1x12x64x64xf32>
}

// -----

// A stride-1 convolution's tiles run across output rows: the shifted input
// is planes [n, kx, c, h, x] (a channel's rows one after the other), so a
// 7x7 map is one run of 49 columns: one 4-vector tile of 49 with 16 lanes
// (rather than 7 part-filled tiles of 7), three of 16 and one of 1 with 8.
// (14 output channels: too few to fill two vectors, so not transposed.)
// CHECK-LABEL: tir.func @conv2d__{{[0-9]+}}(
// CHECK:         tir.define_tensor : !tir.tensor<1x3x16x9x7xf32>
// CHECK:         tir.brgemm_tile {{.*}} {m = 6 : i64, n = 16 : i64, k = 16 : i64, lanes = 8 : i64, a_row = 1 : i64, a_k = 6 : i64, ldb = 63 : i64, ldc = 49 : i64, taps = array<i64: 3, 288, 7, 3, 96, 1008>}
// CHECK:         tir.brgemm_tile {{.*}} {m = 6 : i64, n = 1 : i64,
// CHECK:         tir.brgemm_tile {{.*}} {m = 2 : i64, n = 16 : i64,
// AVX512-LABEL: tir.func @conv2d__{{[0-9]+}}(
// AVX512:         tir.brgemm_tile {{.*}} {m = 6 : i64, n = 49 : i64, k = 16 : i64, lanes = 16 : i64
// AVX512-NOT:     n = 7 : i64
// AVX512:         tir.brgemm_tile {{.*}} {m = 2 : i64, n = 49 : i64
func.func @merged_rows(%x: tensor<1x16x7x7xf32>, %w: tensor<14x16x3x3xf32>) -> tensor<1x14x7x7xf32> {
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x7x7xf32>, tensor<14x16x3x3xf32>) -> tensor<1x14x7x7xf32>
  func.return %0 : tensor<1x14x7x7xf32>
}

// -----

// With channels enough for two vectors, a 7x7 map is computed transposed:
// im2col [C * 3 * 3, 49], then out^T [49, O] = columns^T x W^T with the
// pixels as the tile's rows (6 and a last 1 with 8 lanes; 13, 13, 13 and
// 10 with 16), read where they are (a tile's rows adjacent in each of the
// 144 K rows, 49 apart: no copy into row groups; only the weights, which
// are an argument here, are packed into panels), and the channels as its
// vectors, and the product transposed into the output.
// CHECK-LABEL: tir.func @conv2d__{{[0-9]+}}(
// CHECK:         tir.define_tensor : !tir.tensor<1x144x7x7xf32>
// CHECK:         tir.define_tensor : !tir.tensor<1x49x32xf32>
// CHECK-NEXT:    tir.define_tensor : !tir.tensor<2x144x16xf32>
// CHECK-NOT:     tir.define_tensor
// CHECK:         tir.brgemm_tile {{.*}} {m = 6 : i64, n = 16 : i64, k = 144 : i64, lanes = 8 : i64, a_row = 1 : i64, a_k = 49 : i64, ldb = 16 : i64, ldc = 32 : i64, prefetch_every = 9 : i64}
// CHECK:         tir.brgemm_tile {{.*}} {m = 1 : i64, n = 16 : i64, k = 144 : i64
// CHECK:         tir.load %{{.*}}[%{{.*}}, %[[PIXEL:.*]], %[[CHANNEL:.*]]] : !tir.tensor<1x49x32xf32>
// CHECK:         tir.store %{{.*}}, %{{.*}}[%{{.*}}, %[[CHANNEL]], %[[PIXEL]]] : !tir.tensor<1x32x49xf32>
// AVX512-LABEL: tir.func @conv2d__{{[0-9]+}}(
// AVX512:         tir.brgemm_tile {{.*}} {m = 13 : i64, n = 32 : i64, k = 144 : i64, lanes = 16 : i64
// AVX512:         tir.brgemm_tile {{.*}} {m = 10 : i64, n = 32 : i64
func.func @small_plane(%x: tensor<1x16x7x7xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x7x7xf32> {
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x7x7xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x7x7xf32>
  func.return %0 : tensor<1x32x7x7xf32>
}

// -----

// A convolution on channel-blocked tensors (8 channels a block, avx2): the
// padded input copied once, then tiles of 14 pixels x 8 output channels,
// the input blocks, filter rows and filter columns the microkernel's
// three tap loops (the weights of all 4 input blocks fit in half of L1:
// one reduction, no accumulate flag). Each tile prefetches the 2304
// weights after its reduction's (the next group's) into L2.
// CHECK-LABEL: tir.func @blocked_conv2d__1(%out0: !tir.tensor<1x4x14x14x8xf32>, %in0: !tir.tensor<1x4x14x14x8xf32>, %in1: !tir.tensor<32x32x3x3xf32>) {
// CHECK:         tir.define_tensor : !tir.tensor<1x4x16x16x8xf32>
// CHECK:         tir.for {{.*}} parallel {
// CHECK:           tir.brgemm_tile %{{[^ ,]*}}, %{{[^ ,]*}}, %{{[^ ,]*}} prefetch %{{[^ ]*}} : !tir.tensor<2304xf32> {m = 14 : i64, n = 8 : i64, k = 8 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 8 : i64, ldc = 8 : i64, taps = array<i64: 4, 2048, 576, 3, 128, 192, 3, 8, 64>} : !tir.tensor<6528xf32>, !tir.tensor<2304xf32>, !tir.tensor<112xf32>
func.func @blocked_conv(%x: tensor<1x4x14x14x8xf32>, %w: tensor<32x32x3x3xf32>) -> tensor<1x4x14x14x8xf32> {
  %0 = graph.blocked_conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x14x14x8xf32>, tensor<32x32x3x3xf32>) -> tensor<1x4x14x14x8xf32>
  func.return %0 : tensor<1x4x14x14x8xf32>
}

// -----

// Two output blocks a tile: C's vectors are the output's blocks, a plane
// (4 x 4 x 8 floats) apart; an unpadded input is read in place.
// CHECK-LABEL: tir.func @blocked_conv2d__1(%out0: !tir.tensor<1x8x4x4x8xf32>
// CHECK-NOT:     tir.define_tensor : !tir.tensor<1x4
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} {m = 4 : i64, n = 16 : i64, k = 8 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 8 : i64, ldc_vector = 128 : i64, taps = array<i64: 4, 128, 128>}
func.func @blocked_pointwise(%x: tensor<1x4x4x4x8xf32>, %w: tensor<64x32x1x1xf32>) -> tensor<1x8x4x4x8xf32> {
  %0 = graph.blocked_conv2d %x, %w : (tensor<1x4x4x4x8xf32>, tensor<64x32x1x1xf32>) -> tensor<1x8x4x4x8xf32>
  func.return %0 : tensor<1x8x4x4x8xf32>
}

// -----

// A strided 1x1 convolution gathers the pixels it reads (every second row
// and column) into a unit-stride copy first, which its tiles read: A's
// pixels 8 floats apart (a_row), its input blocks a 4 x 4 plane apart.
// CHECK-LABEL: tir.func @blocked_conv2d__1(%out0: !tir.tensor<1x4x4x4x8xf32>
// CHECK:         %[[GATHERED:.*]] = tir.define_tensor : !tir.tensor<1x4x4x4x8xf32>
// CHECK:         tir.tensor_ptr %in0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !tir.tensor<1x4x8x8x8xf32> -> !tir.tensor<64xf32>
// CHECK:         tir.load %{{.*}}[%{{.*}} lanes 8] : !tir.tensor<64xf32>
// CHECK:         tir.tensor_ptr %[[GATHERED]]
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} {m = 4 : i64, n = 16 : i64, k = 8 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 8 : i64, ldc_vector = 128 : i64, taps = array<i64: 4, 128, 128>}
func.func @blocked_strided_pointwise(%x: tensor<1x4x8x8x8xf32>, %w: tensor<32x32x1x1xf32>) -> tensor<1x4x4x4x8xf32> {
  %0 = graph.blocked_conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x4x8x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x4x4x4x8xf32>
  func.return %0 : tensor<1x4x4x4x8xf32>
}

// -----

// Depthwise on blocks: one FMA a pixel and tap, the block's 8 channels one
// vector, read from the input where it is (no padded copy: the only
// tensor made holds the weights given at run time). A filter row outside
// the input is skipped; output pixel 0, whose window crosses the left edge,
// checks its columns, then pixels 1-3 are one tile of 3 (the weight vector
// loaded once per tap for them), then pixel 4, past the right edge.
// CHECK-LABEL: tir.func @blocked_conv2d__1(%out0: !tir.tensor<1x2x5x5x8xf32>
// CHECK-COUNT-1: tir.define_tensor
// CHECK-NOT:     tir.define_tensor
// CHECK:         %[[W0:.*]] = tir.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lanes 8] : !tir.tensor<2x3x3x8xf32>
// CHECK:         tir.if
// CHECK:           tir.load %in0
// CHECK-NEXT:      tir.read
// CHECK-NEXT:      tir.fmadd %{{.*}}, %[[W0]], %{{.*}} : vector<8xf32>
// CHECK:         %[[W:.*]] = tir.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lanes 8] : !tir.tensor<2x3x3x8xf32>
// CHECK-COUNT-3: tir.fmadd %{{.*}}, %[[W]], %{{.*}} : vector<8xf32>
// CHECK:         %[[W4:.*]] = tir.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lanes 8] : !tir.tensor<2x3x3x8xf32>
// CHECK:         tir.if
// CHECK:           tir.fmadd %{{.*}}, %[[W4]], %{{.*}} : vector<8xf32>
// CHECK-NOT:     tir.fmadd
func.func @blocked_depthwise(%x: tensor<1x2x9x9x8xf32>, %w: tensor<16x1x3x3xf32>) -> tensor<1x2x5x5x8xf32> {
  %0 = graph.blocked_conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x2x9x9x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x2x5x5x8xf32>
  func.return %0 : tensor<1x2x5x5x8xf32>
}

// -----

// Output rows narrower than the registers hold: a tile of 2 whole rows
// (4 pixels), A's rows in runs of 2, each run an input row (4 x 8 floats)
// after the previous.
// CHECK-LABEL: tir.func @blocked_conv2d__1(%out0: !tir.tensor<1x2x2x2x8xf32>
// CHECK:         tir.brgemm_tile %{{.*}}, %{{.*}}, %{{.*}} {m = 4 : i64, n = 16 : i64, k = 8 : i64, lanes = 8 : i64, a_row = 8 : i64, a_k = 1 : i64, ldb = 16 : i64, ldc = 8 : i64, ldc_vector = 32 : i64, taps = array<i64: 2, 128, 1152, 3, 32, 384, 3, 8, 128>, a_wrap = array<i64: 2, 32>}
func.func @blocked_narrow(%x: tensor<1x2x4x4x8xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x2x2x2x8xf32> {
  %0 = graph.blocked_conv2d %x, %w : (tensor<1x2x4x4x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x2x2x2x8xf32>
  func.return %0 : tensor<1x2x2x2x8xf32>
}

// -----

// graph.loop: the step function is lowered first, like any graph function;
// the loop copies the initial state into its final-state result, then calls
// the step on views of the rows (from the last: reverse), two steps per
// iteration: the state goes into next_state and back, never copied.
// CHECK-LABEL: tir.func @add_row(%sum: !tir.tensor<4xf32>, %x: !tir.tensor<4xf32>, %out0: !tir.tensor<4xf32>, %out1: !tir.tensor<4xf32>)
// CHECK-LABEL: tir.func @running_sum(%zero: !tir.tensor<4xf32>, %xs: !tir.tensor<8x4xf32>, %out0: !tir.tensor<4xf32>, %out1: !tir.tensor<8x4xf32>)
// CHECK-NEXT:    %[[INIT:.*]] = tir.call @copy__{{[0-9]+}}(%out0, %zero)
// CHECK:         %next_state = tir.define_tensor : !tir.tensor<4xf32>
// CHECK:         %[[TWO:.*]] = tir.const 2 : index
// CHECK-NEXT:    tir.for %[[T:.*]] = %{{.*}} to %{{.*}} step %[[TWO]]
// CHECK-NEXT:      %[[LAST:.*]] = tir.const 7 : index
// CHECK-NEXT:      %[[ROW:.*]] = tir.sub %[[LAST]], %[[T]]
// CHECK:           %step_slice = tir.tensor_ptr %xs[%[[ROW]], %{{.*}}] : !tir.tensor<8x4xf32> -> !tir.tensor<4xf32>
// CHECK-NEXT:      %step_slice_1 = tir.tensor_ptr %out1[%[[ROW]], %{{.*}}] : !tir.tensor<8x4xf32> -> !tir.tensor<4xf32>
// CHECK-NEXT:      %{{.*}} = tir.call @add_row(%out0, %step_slice, %next_state, %step_slice_1)
// CHECK:           %[[NEXT:.*]] = tir.add %[[T]], %{{.*}}
// CHECK-NEXT:      %[[ROW2:.*]] = tir.sub %[[LAST]], %[[NEXT]]
// CHECK:           %{{.*}} = tir.call @add_row(%next_state, %step_slice_2, %out0, %step_slice_3)
// CHECK-NOT:     tir.call @copy
// CHECK:         tir.return
func.func @running_sum(%zero: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>) {
  %total, %sums = graph.loop @add_row(%zero) over (%xs) reverse : (tensor<4xf32>, tensor<8x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>)
  func.return %total, %sums : tensor<4xf32>, tensor<8x4xf32>
}
func.func private @add_row(%sum: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %next = graph.add %sum, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %next, %next : tensor<4xf32>, tensor<4xf32>
}
