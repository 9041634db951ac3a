// RUN: gc-opt %s --pass-pipeline='builtin.module(convert-graph-to-tir,tir-plan-memory)' --mlir-pass-statistics 2>%t.stats | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.stats
// RUN: gc-opt %s --pass-pipeline='builtin.module(convert-graph-to-tir,tir-plan-memory{arena-argument=true})' | filecheck %s --check-prefix=ARG
// RUN: gc-opt %S/../../examples/transformer.mlir --pass-pipeline='builtin.module(convert-graph-to-tir{target=avx2},tir-plan-memory)' --mlir-pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=TRANSFORMER

// A chain a -> b -> c -> d of 4 KiB tensors: a and b are alive together,
// then c reuses a's space and d reuses b's, so two slots suffice.
// CHECK-LABEL: tir.func @chain(
// CHECK-NEXT:    %arena = tir.define_tensor : !tir.tensor<8192xi8>
// CHECK:         %[[A_AT:.*]] = tir.const 0 : index
// CHECK-NEXT:    %exp_out = tir.tensor_ptr %arena[%[[A_AT]]] : !tir.tensor<8192xi8> -> !tir.tensor<32x32xf32>
// CHECK:         %[[B_AT:.*]] = tir.const 4096 : index
// CHECK-NEXT:    %tanh_out = tir.tensor_ptr %arena[%[[B_AT]]] : !tir.tensor<8192xi8> -> !tir.tensor<32x32xf32>
// CHECK:         %[[C_AT:.*]] = tir.const 0 : index
// CHECK-NEXT:    %sigmoid_out = tir.tensor_ptr %arena[%[[C_AT]]]
// CHECK:         %[[D_AT:.*]] = tir.const 4096 : index
// CHECK-NEXT:    %relu_out = tir.tensor_ptr %arena[%[[D_AT]]]
// CHECK-NOT:     tir.define_tensor

// With arena-argument the entry takes the arena as its last argument (the
// caller allocates it once); kernels it calls keep their own.
// ARG-LABEL: tir.func @chain(
// ARG-SAME:    %out: !tir.tensor<32x32xf32>, %arena: !tir.tensor<8192xi8>) attributes {tir.arena_bytes = 8192 : i64} {
// ARG-NOT:     tir.define_tensor : !tir.tensor<8192xi8>
// ARG:         %exp_out = tir.tensor_ptr %arena[%{{.*}}] : !tir.tensor<8192xi8> -> !tir.tensor<32x32xf32>
// STATS (@chain and @viewed below, 8 KiB arenas each; @cells and its step, 64 bytes each):
// STATS:      tir-plan-memory
// STATS-NEXT: (S) 16512 arena-bytes - bytes of the arenas
// STATS-NEXT: (S) 24704 intermediate-bytes - bytes of the tensors placed in them
func.func @chain(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = graph.exp %x : tensor<32x32xf32>
  %b = graph.tanh %a : tensor<32x32xf32>
  %c = graph.sigmoid %b : tensor<32x32xf32>
  %d = graph.relu %c : tensor<32x32xf32>
  %e = graph.add %d, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %e : tensor<32x32xf32>
}

// A reshape of an intermediate is a view of it, and the view's uses keep
// the buffer alive: exp_out is read (through %v) by the add at the end, so
// tanh_out cannot take its place.
// CHECK-LABEL: tir.func @viewed(
// CHECK-NEXT:    %arena = tir.define_tensor : !tir.tensor<8192xi8>
// CHECK:         %exp_out = tir.tensor_ptr %arena[%{{.*}}] : !tir.tensor<8192xi8> -> !tir.tensor<32x32xf32>
// CHECK:         %reshape_view = tir.tensor_ptr %exp_out[%{{.*}}, %{{.*}}] : !tir.tensor<32x32xf32> -> !tir.tensor<1024xf32>
// CHECK:         %[[TANH_AT:.*]] = tir.const 4096 : index
// CHECK-NEXT:    %tanh_out = tir.tensor_ptr %arena[%[[TANH_AT]]]
// CHECK-NOT:     @reshape
func.func @viewed(%x: tensor<32x32xf32>) -> tensor<1024xf32> {
  %a = graph.exp %x : tensor<32x32xf32>
  %v = graph.reshape %a : tensor<32x32xf32> -> tensor<1024xf32>
  %b = graph.tanh %x : tensor<32x32xf32>
  %w = graph.reshape %b : tensor<32x32xf32> -> tensor<1024xf32>
  %c = graph.add %v, %w : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  func.return %c : tensor<1024xf32>
}

// A graph.loop's step function (called, and calling kernels): with
// arena-argument it takes its arena as its last argument too, and its
// caller passes a tensor of its own arena, one for all its calls, instead
// of the step allocating one per step. Without it, the step keeps its own.
// CHECK-LABEL: tir.func @cell_step(
// CHECK-NEXT:    %arena = tir.define_tensor : !tir.tensor<64xi8>
// ARG-LABEL: tir.func @cell_step(
// ARG-SAME:    %arena: !tir.tensor<64xi8>) attributes {tir.arena_bytes = 64 : i64} {
// ARG-LABEL: tir.func @cells(
// ARG:         %callee_arena = tir.tensor_ptr %arena[%{{.*}}] : !tir.tensor<{{[0-9]+}}xi8> -> !tir.tensor<64xi8>
// ARG:         tir.for
// ARG:           tir.call @cell_step({{.*}}, %callee_arena)
// ARG:           tir.call @cell_step({{.*}}, %callee_arena)
// ARG-NOT:     tir.define_tensor
func.func @cells(%h0: tensor<2x8xf32>, %xs: tensor<6x2x8xf32>) -> (tensor<2x8xf32>, tensor<6x2x8xf32>) {
  %h, %ys = graph.loop @cell_step(%h0) over (%xs) : (tensor<2x8xf32>, tensor<6x2x8xf32>) -> (tensor<2x8xf32>, tensor<6x2x8xf32>)
  func.return %h, %ys : tensor<2x8xf32>, tensor<6x2x8xf32>
}
func.func private @cell_step(%h: tensor<2x8xf32>, %x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %a = graph.add %h, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = graph.tanh %a : tensor<2x8xf32>
  %n = graph.mul %t, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %n, %t : tensor<2x8xf32>, tensor<2x8xf32>
}

// The transformer layer, lowered for AVX2 (its kernels' scratch included;
// kernels of the same shape are one function; reshapes are views, which
// take no bytes of their own): the arenas are 59% of the intermediates'
// bytes.
// TRANSFORMER:      (S) 258048 arena-bytes - bytes of the arenas
// TRANSFORMER-NEXT: (S) 438272 intermediate-bytes - bytes of the tensors placed in them
