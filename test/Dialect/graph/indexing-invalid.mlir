// Verifier errors of the indexing ops name the operand or property and the
// expected vs actual value.
// RUN: gc-opt %s --split-input-file --verify-diagnostics

func.func @gather_elements_float_indices(%x: tensor<4x3xf32>, %i: tensor<4x2xf32>) {
  // expected-error @+1 {{operand #1 ('indices') has element type f32, expected an integer type}}
  %0 = graph.gather_elements %x, %i : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

func.func @gather_elements_rank(%x: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{operand #1 ('indices') has rank 1, expected 2 (the rank of operand #0 ('input'))}}
  %0 = graph.gather_elements %x, %i : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gather_elements_too_wide(%x: tensor<4x3xf32>, %i: tensor<6x4xi64>) {
  // expected-error @+1 {{operand #1 ('indices') of shape [6, 4] exceeds operand #0 ('input') of shape [4, 3] in dim 1 (only dim 0, the axis, may differ)}}
  %0 = graph.gather_elements %x, %i : (tensor<4x3xf32>, tensor<6x4xi64>) -> tensor<6x4xf32>
  func.return
}

// -----

func.func @gather_elements_axis(%x: tensor<4x3xf32>, %i: tensor<4x3xi64>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = graph.gather_elements %x, %i {axis = -3 : i64} : (tensor<4x3xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @gather_elements_result(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{result type tensor<4x3xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = graph.gather_elements %x, %i : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @gather_nd_tuple_too_long(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{operand #1 ('indices') has tuples of 3 indices (its last dim), expected 1 to 2 (the rank less batch_dims)}}
  %0 = graph.gather_nd %x, %i : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gather_nd_batch_dims(%x: tensor<2x4x3xf32>, %i: tensor<3x1xi64>) {
  // expected-error @+1 {{the 1 batch dims of operand #1 ('indices') [3] differ from those of operand #0 ('input') [2]}}
  %0 = graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x4x3xf32>, tensor<3x1xi64>) -> tensor<3x3xf32>
  func.return
}

// -----

func.func @gather_nd_batch_dims_range(%x: tensor<2x4x3xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+1 {{batch_dims 2 is out of range: it must be in [0, 2) (below both ranks)}}
  %0 = graph.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<2x4x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @scatter_elements_updates_shape(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x2xf32>) {
  // expected-error @+1 {{operand #2 ('updates') has shape [2, 2], expected [2, 3]}}
  %0 = graph.scatter_elements %x, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x2xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @scatter_elements_updates_type(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf16>) {
  // expected-error @+1 {{operand #2 ('updates') has element type f16, expected f32 like operand #0 ('input')}}
  %0 = graph.scatter_elements %x, %i, %u : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xf16>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @scatter_reduction(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction must be one of none, add, mul, max, min, got "sum"}}
  %0 = graph.scatter_elements %x, %i, %u {reduction = "sum"} : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @scatter_reduction_of_booleans(%x: tensor<4xi1>, %i: tensor<2x1xi64>, %u: tensor<2xi1>) {
  // expected-error @+1 {{reduction "add" needs a numeric type, operand #0 ('input') has i1 (graph.cast booleans first)}}
  %0 = graph.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4xi1>, tensor<2x1xi64>, tensor<2xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @scatter_nd_updates_shape(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{operand #2 ('updates') has shape [2], expected [2, 3]}}
  %0 = graph.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @scatter_nd_rank_zero_indices(%x: tensor<4x3xf32>, %i: tensor<i64>, %u: tensor<3xf32>) {
  // expected-error @+1 {{operand #1 ('indices') has rank 0, expected at least 1}}
  %0 = graph.scatter_nd %x, %i, %u : (tensor<4x3xf32>, tensor<i64>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @scatter_property_typo(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{unknown property 'reduce' of graph.scatter_nd; did you mean 'reduction'?}}
  %0 = graph.scatter_nd %x, %i, %u {reduce = "add"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @lookup_of_a_wide_integer(%x: tensor<4xi16>) {
  // expected-error @+1 {{operand #0 ('input') has element type i16, expected ui8 or i8}}
  %0 = graph.lookup %x {table = dense<1> : tensor<256xi16>} : tensor<4xi16> -> tensor<4xi16>
  func.return
}

// -----

func.func @lookup_table_size(%x: tensor<4xui8>) {
  // expected-error @+1 {{table has shape [16], expected [256] (one entry a byte)}}
  %0 = graph.lookup %x {table = dense<1> : tensor<16xui8>} : tensor<4xui8> -> tensor<4xui8>
  func.return
}
