// RUN: gc-opt %s --pass-pipeline='builtin.module(tir-profile-kernels)' | filecheck %s

// Each kernel call of the entry (@main: no function calls it) reads the
// clock before and after; the difference and one call are added to the
// kernel's two globals, shared by its calls. Runtime routines (declarations)
// and calls inside kernels are not timed.
// CHECK-LABEL: tir.func @scale(
// CHECK-NOT:     sc_clock_ns
// CHECK:         tir.return
// CHECK-LABEL: tir.func @main(
// CHECK:         %[[START:.*]] = tir.call @sc_clock_ns() : () -> i64
// CHECK-NEXT:    %[[CALL:.*]] = tir.call @scale(%out, %x)
// CHECK-NEXT:    tir.evaluate %[[CALL]] : none
// CHECK-NEXT:    %[[END:.*]] = tir.call @sc_clock_ns() : () -> i64
// CHECK-NEXT:    %[[ELAPSED:.*]] = tir.sub %[[END]], %[[START]] : (i64, i64) -> i64
// CHECK:         %[[NS:.*]] = tir.global_ref @gc.profile.ns.scale : !tir.var<i64>
// CHECK-NEXT:    %[[OLD:.*]] = tir.read %[[NS]] : !tir.var<i64>
// CHECK-NEXT:    %[[NEW:.*]] = tir.add %[[OLD]], %[[ELAPSED]] : (i64, i64) -> i64
// CHECK-NEXT:    tir.assign %[[NS]] = %[[NEW]] : !tir.var<i64>
// CHECK:         %[[CALLS:.*]] = tir.global_ref @gc.profile.calls.scale : !tir.var<i64>
// CHECK:         tir.call @sc_clock_ns()
// CHECK-NEXT:    tir.call @scale(%out, %out)
// CHECK:         tir.global_ref @gc.profile.ns.scale
// CHECK:         %[[PRINT:.*]] = tir.call @print_int(%{{.*}}) : (i32) -> none
// CHECK-NEXT:    tir.evaluate %[[PRINT]] : none
// CHECK-NEXT:    tir.return
// CHECK:       tir.global @gc.profile.ns.scale : i64
// CHECK-NEXT:  tir.global @gc.profile.calls.scale : i64
// CHECK-NOT:   tir.global
builtin.module {
  tir.func @print_int(i32)
  tir.func @scale(%out: !tir.tensor<4xf32>, %in: !tir.tensor<4xf32>) {
    %0 = tir.const 0 : i32
    %1 = tir.call @print_int(%0) : (i32) -> none
    tir.evaluate %1 : none
    tir.return
  }
  tir.func @main(%x: !tir.tensor<4xf32>, %out: !tir.tensor<4xf32>) {
    %0 = tir.call @scale(%out, %x) : (!tir.tensor<4xf32>, !tir.tensor<4xf32>) -> none
    tir.evaluate %0 : none
    %1 = tir.call @scale(%out, %out) : (!tir.tensor<4xf32>, !tir.tensor<4xf32>) -> none
    tir.evaluate %1 : none
    %2 = tir.const 7 : i32
    %3 = tir.call @print_int(%2) : (i32) -> none
    tir.evaluate %3 : none
    tir.return
  }
}
