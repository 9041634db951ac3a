// Nested textual pipelines: passes under func.func(...) run on each function.
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse,canonicalize))' | filecheck %s
// The single-dash spelling and xDSL's flat -p shorthand give the same result.
// RUN: gc-opt %s -pass-pipeline='builtin.module(func.func(cse,canonicalize))' | filecheck %s
// RUN: gc-opt %s -p 'cse,canonicalize' | filecheck %s
// An empty pipeline only parses, verifies and prints.
// RUN: gc-opt %s | filecheck %s --check-prefix=NOOP

// CHECK-LABEL: func.func @first
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %a, %a : i32
// CHECK-NEXT:    %[[PRODUCT:.*]] = arith.muli %[[SUM]], %[[SUM]] : i32
// CHECK-NEXT:    func.return %[[PRODUCT]] : i32
// NOOP-LABEL: func.func @first
// NOOP-COUNT-2: arith.addi
func.func @first(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

// CHECK-LABEL: func.func @second
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %b, %b : i32
// CHECK-NEXT:    func.return %[[SUM]] : i32
func.func @second(%b: i32, %c: i1) -> i32 {
  %0 = arith.addi %b, %b : i32
  %1 = arith.addi %b, %b : i32
  %2 = arith.select %c, %0, %1 : i32
  func.return %2 : i32
}
