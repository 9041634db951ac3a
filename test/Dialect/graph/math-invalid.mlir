// Verifier errors of the ops ONNX's math converters build name the operand or
// property and the expected vs actual value.
// RUN: gc-opt %s --split-input-file --verify-diagnostics

func.func @sin_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 ('input') has element type i32; graph.sin needs a floating-point type}}
  %0 = graph.sin %x : tensor<4xi32>
  func.return
}

// -----

func.func @mod_of_booleans(%x: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 ('lhs') has element type i1; graph.mod needs a numeric type (graph.cast booleans first)}}
  %0 = graph.mod %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @argmax_gives_i64(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type tensor<4xf32> does not match the inferred type tensor<4xi64>}}
  %0 = graph.argmax %x {axis = 1 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @argmin_of_an_empty_axis(%x: tensor<4x0xf32>) {
  // expected-error @+1 {{operand #0 ('input') has an empty axis 1: there is no element to pick}}
  %0 = graph.argmin %x {axis = 1 : i64} : tensor<4x0xf32> -> tensor<4xi64>
  func.return
}

// -----

func.func @cumsum_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.cumsum %x {axis = 2 : i64} : tensor<4x8xf32>
  func.return
}

// -----

func.func @cumprod_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = graph.cumprod %x {axis = -3 : i64} : tensor<4x8xf32>
  func.return
}

// -----

func.func @top_k_too_many(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{k = 9 is not in [0, 8] (the size of axis 1 of operand #0 ('input'))}}
  %0 = graph.top_k_indices %x {k = 9 : i64} : tensor<4x8xf32> -> tensor<4x9xi64>
  func.return
}

// -----

func.func @top_k_of_booleans(%x: tensor<4x8xi1>) {
  // expected-error @+1 {{operand #0 ('input') has element type i1; graph.top_k_indices needs a numeric type (graph.cast booleans first)}}
  %0 = graph.top_k_indices %x {k = 2 : i64} : tensor<4x8xi1> -> tensor<4x2xi64>
  func.return
}

// -----

func.func @bitwise_on_floats(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.bitwise_and' op operand #0 ('lhs') has element type f32; graph.bitwise_and needs an integer type (i1: the logical ops)}}
  %0 = graph.bitwise_and %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @shift_of_booleans(%b: tensor<4xi1>) {
  // expected-error @+1 {{'graph.shift_left' op operand #0 ('lhs') has element type i1; graph.shift_left needs an integer type (i1: the logical ops)}}
  %0 = graph.shift_left %b, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}
