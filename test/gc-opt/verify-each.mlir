// --verify-each (on by default, as in mlir-opt) verifies the IR after every
// pass; --verify-each=0 skips that (faster; invalid IR is then caught later
// or, here, printed as it is).
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants{factor=500}' 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants{factor=500}' --verify-each=true 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants{factor=500}' --verify-each=0 | filecheck %s --check-prefix=SKIP
// RUN: not gc-opt %s --verify-each=maybe 2>&1 | filecheck %s --check-prefix=BAD

// VERIFY: verify-each.mlir:[[# @LINE + 5]]:8: error: 'toy.constant' op value 1000 must be below 1000
// SKIP:   toy.constant 1000
// BAD:    gc-opt: error: argument --verify-each/-verify-each: expected true/false or 1/0, got 'maybe'

func.func @constant() -> i64 {
  %0 = toy.constant 2
  func.return %0 : i64
}
