// A third-party dialect and pass, loaded by module name or by file path.
// RUN: env PYTHONPATH=%plugins gc-opt %s --load-plugin=toy_plugin -p 'toy-scale-constants{factor=4}' | filecheck %s
// RUN: gc-opt %s --load-plugin=%plugins/toy_plugin.py --pass-pipeline='builtin.module(func.func(toy-scale-constants{factor=4}))' | filecheck %s
// A named pipeline from the plugin (triples, then CSE merges the equal constants).
// RUN: gc-opt %s --load-plugin=%plugins/toy_plugin.py --pass-pipeline='builtin.module(toy-pipeline)' | filecheck %s --check-prefix=PIPELINE
// A plugin pass's statistics (graphcompiler.ir.pass_statistics.record) are reported.
// RUN: gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants' --mlir-pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// Without the plugin the dialect is unknown.
// RUN: not gc-opt %s 2>&1 | filecheck %s --check-prefix=NOPLUGIN
// The plugin's verifier runs after its pass, and its failure is located.
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants{factor=500}' 2>&1 | filecheck %s --check-prefix=VERIFY

// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %0 = toy.constant 20
// CHECK-NEXT:    %1 = toy.constant 20
// CHECK-NEXT:    %2 = toy.constant 28
// PIPELINE-LABEL: func.func @constants
// PIPELINE-NEXT:    %0 = toy.constant 15
// PIPELINE-NEXT:    %1 = toy.constant 21
// PIPELINE-NEXT:    func.return %0, %0, %1
// STATS:      toy-scale-constants
// STATS-NEXT:   (S) 3 constants-scaled - toy.constant ops multiplied
// NOPLUGIN: load-plugin.mlir:[[# @LINE + 3]]:8: error: Operation toy.constant is not registered
// VERIFY: load-plugin.mlir:[[# @LINE + 2]]:8: error: 'toy.constant' op value 2500 must be below 1000
func.func @constants() -> (i64, i64, i64) {
  %0 = toy.constant 5
  %1 = toy.constant 5
  %2 = toy.constant 7
  func.return %0, %1, %2 : i64, i64, i64
}
