// Wrong expectations fail: a missing diagnostic and an unexpected one are
// both reported, and the exit code is non-zero (hence `not`).
// RUN: not gc-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 4]]:8: error: unexpected error: 'arith.addi' op result 'result' at position 0 does not verify
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:6: error: expected error "this message is wrong" was not produced
func.func @wrong_message(%a: i32) -> i64 {
  // expected-error @+1 {{this message is wrong}}
  %0 = "arith.addi"(%a, %a) : (i32, i32) -> i64
  func.return %0 : i64
}

// -----

// An expectation on the wrong line does not match either.
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 4]]:8: error: unexpected error: 'arith.select' op
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:6: error: expected error "must be i1" was not produced
func.func @wrong_line(%a: i32) {
  // expected-error @+2 {{must be i1}}
  %0 = "arith.select"(%a, %a, %a) : (i32, i32, i32) -> i32
  func.return
}

// -----

// A chunk with no expectations but an error fails...
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:8: error: unexpected error
func.func @unexpected(%b: i32) -> i64 {
  %1 = "arith.addi"(%b, %b) : (i32, i32) -> i64
  func.return %1 : i64
}

// -----

// ...while a clean chunk passes; nothing else is reported.
// CHECK-NOT: error
func.func @clean() {
  func.return
}
