// Literals that xDSL's attribute and type constructors cannot build (they
// overflow struct.pack, have no binary form, divide by a zero element size
// or assert) are errors located at the attribute, never an internal error
// (issue 10). Each case was found by the fuzzer (test/fuzz/corpus).
// RUN: gc-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{floating point value too large for its type}}
tir.global @table : !tir.tensor<2xf32> = dense<[1.0, 3.4e+39]> : tensor<2xf32>

// -----

// expected-error @+1 {{floating point value too large for its type}}
func.func @f() attributes {x = dense<(1.0e100, 0.0)> : tensor<2xcomplex<f32>>} {
  func.return
}

// -----

// expected-error @+1 {{floating point value too large for its type}}
func.func @f() attributes {x = array<f16: 1.0e9>} {
  func.return
}

// -----

// expected-error @+1 {{literal too large for its type}}
func.func @f() attributes {x = 0x7fffffffffff : f32} {
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{elements of zero bits (i0) are not supported here}}
  %0 = graph.reduce_sum %x {axes = array<i0: 0>} : tensor<4xf32> -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @f() -> tensor<1xcomplex<f32>> {
  // expected-error @+1 {{expected a (real, imaginary) pair for an element of type complex<f32>}}
  %0 = graph.constant dense<0.0> : tensor<1xcomplex<f32>>
  func.return %0 : tensor<1xcomplex<f32>>
}

// -----

// expected-error @+1 {{constants of this type are not supported (integers up to 64 bits, index, f16, bf16, f32 and f64 are)}}
func.func @f() attributes {x = array<i128: 1>} {
  func.return
}

// -----

// expected-error @+1 {{Integer value 99999999999999999999 is out of range for type i32}}
func.func @f() attributes {x = dense<[1, 99999999999999999999]> : tensor<2xi32>} {
  func.return
}

// -----

// xDSL builds f80 and f128 float attributes but cannot print them: the
// verifier's error (printed with the module) and any output crashed.
func.func @three() {
  // expected-error @+1 {{f80 attributes are not supported (f16, bf16, f32 and f64 are)}}
  %0 = "arith.constant"() <{value = 1 : f80}> : () -> i32
  func.return
}

// -----

// expected-error @+1 {{f128 attributes are not supported (f16, bf16, f32 and f64 are)}}
func.func @f() attributes {x = [{a = 1.0 : f128}]} {
  func.return
}
