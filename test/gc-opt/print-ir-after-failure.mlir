// --mlir-print-ir-after-failure dumps the IR a failing pass left (here the
// plugin pass rejects a negative constant), after the error.
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py --pass-pipeline='builtin.module(func.func(toy-check-sign))' --mlir-print-ir-after-failure 2>&1 | filecheck %s
// Without the flag only the error is printed.
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py --pass-pipeline='builtin.module(func.func(toy-check-sign))' 2>&1 | filecheck %s --check-prefix=PLAIN

// CHECK:      // -----// IR Dump After toy-check-sign Failed ('func.func' operation: @negative) //----- //
// CHECK-NEXT: func.func @negative() -> i64 {
// CHECK-NEXT:   %0 = toy.constant -3
// CHECK:      print-ir-after-failure.mlir:[[# @LINE + 5]]:8: error: 'toy.constant' op negative constant -3
// PLAIN-NOT:  IR Dump
// PLAIN:      error: 'toy.constant' op negative constant -3

func.func @negative() -> i64 {
  %0 = toy.constant -3
  func.return %0 : i64
}
