// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(tir-outline-parallel,tir-parallel-regions)' | filecheck %s

// Two kernels made only of a parallel loop, called one after the other
// (address arithmetic between them is pure): one region around both.
// CHECK:       tir.func @sc_region_end()
// CHECK:       tir.func @sc_region_begin()
// CHECK-LABEL: tir.func @main(%x: !tir.tensor<64xf32>, %arena: !tir.tensor<512xi8>) {
// CHECK-NEXT:    %c0 = tir.const 0 : index
// CHECK-NEXT:    %t = tir.tensor_ptr %arena[%c0]
// CHECK-NEXT:    %[[BEGIN:.*]] = tir.call @sc_region_begin() : () -> none
// CHECK-NEXT:    tir.evaluate %[[BEGIN]] : none
// CHECK-NEXT:    %[[FIRST:.*]] = tir.call @double(%t, %x)
// CHECK-NEXT:    tir.evaluate %[[FIRST]] : none
// CHECK-NEXT:    %[[SECOND:.*]] = tir.call @double(%x, %t)
// CHECK-NEXT:    tir.evaluate %[[SECOND]] : none
// CHECK-NEXT:    %[[END:.*]] = tir.call @sc_region_end() : () -> none
// CHECK-NEXT:    tir.evaluate %[[END]] : none
// CHECK-NEXT:    tir.return
tir.func @double(%out: !tir.tensor<64xf32>, %in: !tir.tensor<64xf32>) {
  %c0 = tir.const 0 : index
  %c64 = tir.const 64 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    %v = tir.load %in[%i] : !tir.tensor<64xf32>
    %d = tir.add %v, %v : (f32, f32) -> f32
    tir.store %d, %out[%i] : !tir.tensor<64xf32>
  }
  tir.return
}
tir.func @main(%x: !tir.tensor<64xf32>, %arena: !tir.tensor<512xi8>) {
  %c0 = tir.const 0 : index
  %t = tir.tensor_ptr %arena[%c0] : !tir.tensor<512xi8> -> !tir.tensor<64xf32>
  %0 = tir.call @double(%t, %x) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %0 : none
  %1 = tir.call @double(%x, %t) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %1 : none
  tir.return
}

// -----

// What reads memory between the loops, or a kernel with a buffer of its
// own (it dies when the kernel returns, before a queued loop would run),
// ends a run; a run of one loop gets no region. Kernels of two loops get
// one inside, after the buffer is defined (regions nest at run time).
// CHECK-LABEL: tir.func @two_loops(%out: !tir.tensor<64xf32>, %in: !tir.tensor<64xf32>) {
// CHECK:         tir.call @sc_region_begin()
// CHECK:         tir.call @sc_parallel_call_cpu
// CHECK:         tir.call @sc_parallel_call_cpu
// CHECK:         tir.call @sc_region_end()
// CHECK-LABEL: tir.func @with_buffer(
// CHECK-NEXT:    %c0 = tir.const 0 : index
// CHECK-NEXT:    %c64 = tir.const 64 : index
// CHECK-NEXT:    %c1 = tir.const 1 : index
// CHECK-NEXT:    %scratch = tir.define_tensor
// CHECK-NEXT:    tir.func_addr
// CHECK-NEXT:    tir.call @sc_region_begin()
// CHECK:         tir.call @sc_region_end()
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.return
// CHECK-LABEL: tir.func @main(
// CHECK-NEXT:    tir.call @double
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    %c0 = tir.const 0 : index
// CHECK-NEXT:    %v = tir.load %x[%c0]
// CHECK-NEXT:    tir.call @double
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.call @with_buffer
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.call @sc_region_begin()
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.call @double
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.call @two_loops
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.call @sc_region_end()
// CHECK-NEXT:    tir.evaluate
// CHECK-NEXT:    tir.return
tir.func @double(%out: !tir.tensor<64xf32>, %in: !tir.tensor<64xf32>) {
  %c0 = tir.const 0 : index
  %c64 = tir.const 64 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    %v = tir.load %in[%i] : !tir.tensor<64xf32>
    %d = tir.add %v, %v : (f32, f32) -> f32
    tir.store %d, %out[%i] : !tir.tensor<64xf32>
  }
  tir.return
}
tir.func @two_loops(%out: !tir.tensor<64xf32>, %in: !tir.tensor<64xf32>) {
  %c0 = tir.const 0 : index
  %c64 = tir.const 64 : index
  %c1 = tir.const 1 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    %v = tir.load %in[%i] : !tir.tensor<64xf32>
    tir.store %v, %out[%i] : !tir.tensor<64xf32>
  }
  tir.for %j = %c0 to %c64 step %c1 parallel {
    %v = tir.load %out[%j] : !tir.tensor<64xf32>
    %d = tir.mul %v, %v : (f32, f32) -> f32
    tir.store %d, %out[%j] : !tir.tensor<64xf32>
  }
  tir.return
}
tir.func @with_buffer(%out: !tir.tensor<64xf32>, %in: !tir.tensor<64xf32>) {
  %c0 = tir.const 0 : index
  %c64 = tir.const 64 : index
  %c1 = tir.const 1 : index
  %scratch = tir.define_tensor : !tir.tensor<64xf32>
  tir.for %i = %c0 to %c64 step %c1 parallel {
    %v = tir.load %in[%i] : !tir.tensor<64xf32>
    tir.store %v, %scratch[%i] : !tir.tensor<64xf32>
  }
  tir.for %j = %c0 to %c64 step %c1 parallel {
    %v = tir.load %scratch[%j] : !tir.tensor<64xf32>
    tir.store %v, %out[%j] : !tir.tensor<64xf32>
  }
  tir.return
}
tir.func @main(%x: !tir.tensor<64xf32>, %y: !tir.tensor<64xf32>) {
  %0 = tir.call @double(%y, %x) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %0 : none
  %c0 = tir.const 0 : index
  %v = tir.load %x[%c0] : !tir.tensor<64xf32>
  %1 = tir.call @double(%y, %x) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %1 : none
  %2 = tir.call @with_buffer(%y, %x) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %2 : none
  %3 = tir.call @double(%y, %x) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %3 : none
  %4 = tir.call @two_loops(%x, %y) : (!tir.tensor<64xf32>, !tir.tensor<64xf32>) -> none
  tir.evaluate %4 : none
  tir.return
}
