// Every expected-* form matches what the parser, the verifier and passes emit.
// RUN: gc-opt %s --split-input-file --verify-diagnostics --load-plugin=%plugins/toy_plugin.py -p toy-check-sign

// A parse error, on the same line as its expectation.
func.func @parse_error() {
  %0 = arith.frobnicate 1 : i32 // expected-error {{Operation arith.frobnicate is not registered}}
}

// -----

// Verifier errors through @+N and the regex form.
func.func @verifier_error(%a: i32) -> i64 {
  // expected-error @+1 {{'arith.addi' op result 'result' at position 0 does not verify}}
  %0 = "arith.addi"(%a, %a) : (i32, i32) -> i64
  func.return %0 : i64
}

// -----

func.func @regex(%a: i32) -> i64 {
  // expected-error-re @+1 {{'arith.{{(addi|subi)}}' op result {{.*}} does not verify}}
  %0 = "arith.subi"(%a, %a) : (i32, i32) -> i64
  func.return %0 : i64
}

// -----

// @-N points back; the op's location is its name, not the result.
func.func @below_limit() -> i64 {
  %0 = toy.constant 2000
  // expected-error @-1 {{'toy.constant' op value 2000 must be below 1000}}
  func.return %0 : i64
}

// -----

// @below skips the other expected-* lines; warnings from a pass are checked
// too, and a pass error stops the chunk.
func.func @pass_diagnostics() -> (i64, i64) {
  // expected-warning @below {{'toy.constant' op zero constant}}
  // expected-error @+2 {{'toy.constant' op negative constant -3}}
  %0 = toy.constant 0
  %1 = toy.constant -3
  func.return %0, %1 : i64, i64
}

// -----

// @above points at the closest preceding line that is not an expectation.
func.func @above() -> i64 {
  %0 = toy.constant 0
  // expected-warning @above {{zero constant}}
  func.return %0 : i64
}
