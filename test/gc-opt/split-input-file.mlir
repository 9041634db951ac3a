// Each chunk is processed on its own; outputs are joined by `// -----`.
// A failing chunk does not stop the others, but the exit code says it failed,
// and its error carries the line number in the whole file.
// RUN: not gc-opt %s --split-input-file -p cse 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err
// Without the flag there is one module, which fails as a whole.
// RUN: not gc-opt %s -p cse 2>&1 | filecheck %s --check-prefix=WHOLE

// CHECK-LABEL: func.func @one
// CHECK:       arith.addi
// CHECK-NOT:   arith.addi
// CHECK:       // -----
// WHOLE-NOT: func.func
func.func @one(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

// -----

// CHECK-LABEL: func.func @two
// CHECK:       // -----
func.func @two() {
  func.return
}

// -----

// The failed chunk prints nothing but keeps its separator.
// CHECK-NOT:   func.func @three
// ERR: split-input-file.mlir:[[# @LINE + 3]]:8: error: 'arith.constant' op
// WHOLE: split-input-file.mlir:[[# @LINE + 2]]:8: error: 'arith.constant' op
func.func @three() {
  %0 = "arith.constant"() <{value = 1 : i64}> : () -> i32
  func.return
}
