// Nothing goes to stdout when -o is given.
// RUN: gc-opt %s -p cse -o %t.out.mlir | filecheck %s --allow-empty --check-prefix=EMPTY
// RUN: filecheck %s < %t.out.mlir
// RUN: gc-opt %s --output=%t.long.mlir
// RUN: filecheck %s < %t.long.mlir

// CHECK: func.func @f
// EMPTY-NOT: {{.}}
func.func @f() {
  func.return
}
