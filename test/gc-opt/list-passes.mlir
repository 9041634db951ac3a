// --list-passes names every pass with its description and options (with their
// help text where the pass gives one), then the named pipelines with their
// expansion.
// RUN: gc-opt --list-passes --load-plugin=%plugins/toy_plugin.py | filecheck %s

// CHECK:      Passes:
// CHECK:        canonicalize  -  Applies all canonicalization patterns.
// CHECK:        cse
// CHECK:        dce
// CHECK:        tir-plan-memory  -  Place each function's intermediate tensors in one reused arena.
// CHECK-NEXT:     match-range=<int> (default: 16)  -  reuse a free block only if at most this many times larger than the tensor
// CHECK:        toy-check-sign  -  Reject negative toy.constants; warn about zero ones.
// CHECK-NEXT:   toy-scale-constants  -  Multiply every toy.constant by `factor`.
// CHECK-NEXT:     factor=<int> (default: 2)
// CHECK:      Pass Pipelines:
// CHECK:        tir-to-llvm  -  Tensor IR to the llvm dialect: outline parallel loops, group them in regions, make conversions explicit, expand math, then convert
// CHECK-NEXT:     expands to: tir-outline-parallel,tir-parallel-regions,tir-legalize-types,tir-expand-math,convert-tir-to-llvm
// CHECK-NEXT:   toy-pipeline  -  Triple the toy constants, then CSE each function
// CHECK-NEXT:     expands to: toy-scale-constants{factor=3},func.func(cse)
