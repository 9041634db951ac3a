// What later stages cannot handle is rejected up front, at the op or type
// (issue 10: verifier gaps, misspelled properties, invalid builtin types).
// RUN: gc-opt %s --split-input-file --verify-diagnostics

func.func @misspelled_property(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.softmax' op unknown property 'axsi' of graph.softmax; did you mean 'axis'?}}
  %0 = graph.softmax %x {axsi = 0 : i64} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @misspelled_epsilon(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{unknown property 'eps' of graph.layer_norm; did you mean 'epsilon'?}}
  %0 = graph.layer_norm %x, %g, %g {eps = 1.0e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @no_close_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown property 'foo' of graph.relu; it has no properties (other attributes need a dialect prefix, e.g. 'mydialect.note')}}
  %0 = graph.relu %x {foo = 1 : i64} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// A generic-form property is checked the same way.
func.func @generic_misspelled(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown property 'axsi' of graph.softmax; did you mean 'axis'?}}
  %0 = "graph.softmax"(%x) <{axsi = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @property_kind(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'graph.conv2d' op property 'padding' of graph.conv2d must be array<i64: ...>, got [1 : i64, 1 : i64, 1 : i64, 1 : i64]}}
  %0 = graph.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @property_kind_integer(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{property 'axis' of graph.softmax must be an integer such as 1 : i64, got "a"}}
  %0 = graph.softmax %x {axis = "a"} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @property_kind_flag(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{property 'transpose_a' of graph.matmul must be true or false, got 1 : i64}}
  %0 = graph.matmul %a, %a {transpose_a = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @property_array_of_i32(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{property 'perm' of graph.transpose must be array<i64: ...>, got array<i32: 1, 0>}}
  %0 = graph.transpose %x {perm = array<i32: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// Discardable attributes with a dialect prefix are kept.
func.func @prefixed_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x {mydialect.note = "kept"} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @integer_pow(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'graph.pow' op operand #0 ('lhs') has element type i32; graph.pow needs a floating-point type}}
  %0 = graph.pow %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @boolean_reduce_max(%x: tensor<4xi1>) -> tensor<i1> {
  // expected-error @+1 {{'graph.reduce_max' op operand #0 ('input') has element type i1; graph.reduce_max needs a numeric type}}
  %0 = graph.reduce_max %x : tensor<4xi1> -> tensor<i1>
  func.return %0 : tensor<i1>
}

// -----

func.func @boolean_reduce_min(%x: tensor<4xi1>) -> tensor<i1> {
  // expected-error @+1 {{graph.reduce_min needs a numeric type}}
  %0 = graph.reduce_min %x : tensor<4xi1> -> tensor<i1>
  func.return %0 : tensor<i1>
}

// -----

func.func @boolean_add(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{graph.add needs a numeric type (graph.cast booleans first)}}
  %0 = graph.add %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}

// -----

// Comparisons, selects and data movement of booleans are fine.
func.func @boolean_ok(%x: tensor<4xi1>) -> (tensor<4xi1>, tensor<8xi1>) {
  %0 = graph.equal %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = graph.concat %0, %x {axis = 0 : i64} : (tensor<4xi1>, tensor<4xi1>) -> tensor<8xi1>
  func.return %0, %1 : tensor<4xi1>, tensor<8xi1>
}

// -----

func.func @empty_pool_kernel(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'graph.max_pool2d' op kernel has 0 entries, expected 2}}
  %0 = graph.max_pool2d %x {kernel = array<i64>} : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @empty_strides(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{'graph.avg_pool2d' op strides has 0 entries, expected 2}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @use_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.relu' op operand #0 does not dominate this use}}
  %0 = graph.relu %1 : tensor<4xf32>
  // expected-note @+1 {{operand defined here}}
  %1 = graph.exp %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @self_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'graph.relu' op operand #0 does not dominate this use}}
  // expected-note @+1 {{operand defined here}}
  %0 = graph.relu %0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @return_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.return' op operand #0 does not dominate this use}}
  func.return %0 : tensor<4xf32>
  // expected-note @+1 {{operand defined here}}
  %0 = graph.relu %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op a graph function must have a single block (no branches)}}
func.func @two_blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  %0 = graph.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op expects a non-empty block ending in a terminator}}
func.func @empty_body(%x: tensor<4xf32>) -> tensor<4xf32> {}

// -----

// expected-error @+1 {{vector types must have positive constant sizes, got vector<0xf32>}}
func.func @zero_vector(%v: vector<0xf32>) {
  func.return
}

// -----

// expected-error @+1 {{invalid tensor element type tensor<i8>}}
func.func @tensor_of_tensor(%t: tensor<tensor<i8>>) {
  func.return
}

// -----

// expected-error @+1 {{integer bitwidth 21312312323120 is larger than the maximum 16777215}}
func.func @huge_integer(%i: i21312312323120) {
  func.return
}

// -----

// expected-error @+1 {{tensor<99999999999999x4xf32> has 1599999999999984 bytes, more than the 1099511627776 (1 TiB) supported}}
func.func @huge_tensor() -> tensor<99999999999999x4xf32> {
  %0 = graph.constant dense<1.0> : tensor<99999999999999x4xf32>
  func.return %0 : tensor<99999999999999x4xf32>
}

// -----

func.func @fused_without_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.fused' op needs at least one result}}
  graph.fused %x : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    %0 = graph.relu %a : tensor<4xf32>
    graph.yield : 
  }
  func.return
}

// -----

// A block label defined twice, the first after a forward branch to it
// (xDSL forgot that definition and raised a KeyError).
func.func @twice_defined_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  func.return %x : tensor<4xf32>
// expected-error @+1 {{re-declaration of block 'bb1'}}
^bb1:
  func.return %x : tensor<4xf32>
}
