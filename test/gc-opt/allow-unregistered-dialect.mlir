// RUN: gc-opt %s --allow-unregistered-dialect | filecheck %s
// RUN: not gc-opt %s 2>&1 | filecheck %s --check-prefix=ERR

// CHECK: %0 = "mystery.op"(%x) {note = "kept"} : (i32) -> i32
// ERR: allow-unregistered-dialect.mlir:[[# @LINE + 2]]:8: error: Operation mystery.op is not registered
func.func @f(%x: i32) -> i32 {
  %0 = "mystery.op"(%x) {note = "kept"} : (i32) -> i32
  func.return %0 : i32
}
