// Errors are diagnostics with file:line:col, the source line and a caret;
// the exit code is 1 and there is never a Python traceback.
// RUN: not gc-opt %s 2>&1 | filecheck %s
// RUN: not gc-opt %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not gc-opt --load-plugin=no_such_plugin_module %s 2>&1 | filecheck %s --check-prefix=PLUGIN

// CHECK:      errors.mlir:[[# @LINE + 5]]:28: error: type expected
// CHECK-NEXT: {{^}}  %0 = arith.addi %x, %x : notatype
// CHECK-NEXT: {{^}}                           ^
// CHECK-NOT:  Traceback
func.func @f(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : notatype
  func.return %0 : i32
}

// MISSING: gc-opt: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// PLUGIN: gc-opt: error: cannot load plugin 'no_such_plugin_module': No module named 'no_such_plugin_module'
