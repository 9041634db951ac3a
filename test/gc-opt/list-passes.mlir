// --list-passes names every pass with its description and options, then the
// named pipelines with their expansion.
// RUN: gc-opt --list-passes --load-plugin=%plugins/toy_plugin.py | filecheck %s

// CHECK:      Passes:
// CHECK:        canonicalize  -  Applies all canonicalization patterns.
// CHECK:        cse
// CHECK:        dce
// CHECK:        toy-check-sign  -  Reject negative toy.constants; warn about zero ones.
// CHECK-NEXT:   toy-scale-constants  -  Multiply every toy.constant by `factor`.
// CHECK-NEXT:     factor=<int> (default: 2)
// CHECK:      Pass Pipelines:
// CHECK:        tir-to-llvm  -  Tensor IR to the llvm dialect: outline parallel loops, group them in regions, then convert
// CHECK-NEXT:     expands to: tir-outline-parallel,tir-parallel-regions,convert-tir-to-llvm
// CHECK-NEXT:   toy-pipeline  -  Triple the toy constants, then CSE each function
// CHECK-NEXT:     expands to: toy-scale-constants{factor=3},func.func(cse)
