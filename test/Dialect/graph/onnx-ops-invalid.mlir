// Verifier errors of the ops added for the ONNX frontend name the operand or
// property and the expected vs actual value.
// RUN: gc-opt %s --split-input-file --verify-diagnostics

func.func @logical_needs_i1(%a: tensor<4xi32>) {
  // expected-error @+1 {{'graph.logical_and' op operand #0 ('lhs') has element type i32; graph.logical_and needs i1 (graph.cast or compare first)}}
  %0 = graph.logical_and %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @logical_not_needs_i1(%a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 ('input') has element type f32; graph.logical_not needs i1}}
  %0 = graph.logical_not %a : tensor<4xf32>
  func.return
}

// -----

func.func @comparison_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result type tensor<4xf32> does not match the inferred type tensor<4xi1>}}
  %0 = graph.not_equal %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @activation_needs_float(%a: tensor<4xi32>) {
  // expected-error @+1 {{'graph.softplus' op operand #0 ('input') has element type i32; graph.softplus needs a floating-point type}}
  %0 = graph.softplus %a : tensor<4xi32>
  func.return
}

// -----

func.func @activation_property_kind(%a: tensor<4xf32>) {
  // expected-error @+1 {{property 'alpha' of graph.elu must be a float such as 1.0e-05, got 1 : i64}}
  %0 = graph.elu %a {alpha = 1} : tensor<4xf32>
  func.return
}

// -----

func.func @selu_typo(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown property 'gama' of graph.selu; did you mean 'gamma'?}}
  %0 = graph.selu %a {gama = 1.0 : f32} : tensor<4xf32>
  func.return
}

// -----

func.func @prelu_slope_grows_the_input(%x: tensor<4x1xf32>, %s: tensor<4x3xf32>) {
  // expected-error @+1 {{operand #1 ('slope') of shape [4, 3] does not broadcast to the shape [4, 1] of operand #0 ('input')}}
  %0 = graph.prelu %x, %s : (tensor<4x1xf32>, tensor<4x3xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

func.func @gather_float_indices(%x: tensor<4x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 ('indices') has element type f32, expected an integer type}}
  %0 = graph.gather %x, %i : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @gather_axis(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.gather %x, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @gather_shape(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{result type tensor<2x4xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = graph.gather %x, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @pad_count(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{pads has 2 entries, expected 4 (twice the rank)}}
  %0 = graph.pad %x {pads = array<i64: 1, 1>} : tensor<4x3xf32> -> tensor<6x3xf32>
  func.return
}

// -----

func.func @pad_mode(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{mode must be one of constant, reflect, edge, wrap, got "symmetric"}}
  %0 = graph.pad %x {pads = array<i64: 1, 0, 1, 0>, mode = "symmetric"} : tensor<4x3xf32> -> tensor<6x3xf32>
  func.return
}

// -----

func.func @pad_reflect_too_far(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{"reflect" pads dim 1 of 3 elements by 3, at most 2 allowed}}
  %0 = graph.pad %x {pads = array<i64: 0, 3, 0, 0>, mode = "reflect"} : tensor<4x3xf32> -> tensor<4x6xf32>
  func.return
}

// -----

// The negative amount slices first: 3 of the 5 elements are left to mirror.
func.func @pad_reflect_too_far_after_the_slice(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{"reflect" pads dim 1 of 3 elements by 3, at most 2 allowed}}
  %0 = graph.pad %x {pads = array<i64: 0, 3, 0, -2>, mode = "reflect"} : tensor<4x5xf32> -> tensor<4x6xf32>
  func.return
}

// -----

func.func @pad_edge_of_nothing(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{dim 0 is empty: "edge" has nothing to pad it with}}
  %0 = graph.pad %x {pads = array<i64: 1, 0, 0, 0>, mode = "edge"} : tensor<0x3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

func.func @pad_crops_too_much(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{pads (-3, -2) remove more than the 4 elements of dim 0}}
  %0 = graph.pad %x {pads = array<i64: -3, 0, -2, 0>} : tensor<4x3xf32> -> tensor<0x3xf32>
  func.return
}

// -----

func.func @pad_fractional_integer(%x: tensor<4xi8>) {
  // expected-error @+1 {{value 0.5 is not a i8 (an integer in [-128, 127])}}
  %0 = graph.pad %x {pads = array<i64: 1, 1>, value = 0.5 : f32} : tensor<4xi8> -> tensor<6xi8>
  func.return
}

// -----

func.func @rms_norm_scale_shape(%x: tensor<2x3x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{operand #1 ('scale') has shape [8], expected [3, 8]}}
  %0 = graph.rms_norm %x, %s {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  func.return
}

// -----

func.func @rms_norm_integer(%x: tensor<2x8xi32>, %s: tensor<8xi32>) {
  // expected-error @+1 {{operand #0 ('input') has element type i32; graph.rms_norm needs a floating-point type}}
  %0 = graph.rms_norm %x, %s : (tensor<2x8xi32>, tensor<8xi32>) -> tensor<2x8xi32>
  func.return
}

// -----

func.func @instance_norm_rank(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{operand #0 ('input') has rank 2, expected at least 3 ([N, C, D1, ...])}}
  %0 = graph.instance_norm %x, %c, %c : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @instance_norm_channels(%x: tensor<2x3x5xf32>, %c: tensor<3xf32>, %d: tensor<5xf32>) {
  // expected-error @+1 {{operand #2 ('bias') has shape [5], expected [3]}}
  %0 = graph.instance_norm %x, %c, %d : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  func.return
}
