// Verifier errors name the operand and the expected vs actual value.
// RUN: gc-opt %s --split-input-file --verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<4x5xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.add' op operand #1 ('rhs') of shape [4, 3] does not broadcast with operand #0 ('lhs') of shape [4, 5]}}
  %0 = graph.add %a, %b : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

func.func @element_type_mismatch(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{operand #1 ('rhs') has element type i32, expected f32 like operand #0 ('lhs')}}
  %0 = graph.mul %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @wrong_result_shape(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result type tensor<4x1xf32> does not match the inferred type tensor<4x3xf32>}}
  %0 = graph.sub %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

func.func @comparison_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result type tensor<4xf32> does not match the inferred type tensor<4xi1>}}
  %0 = graph.greater %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @select_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 ('cond') has element type f32, expected i1}}
  %0 = graph.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @float_only(%a: tensor<4xi32>) {
  // expected-error @+1 {{'graph.exp' op operand #0 ('input') has element type i32; graph.exp needs a floating-point type}}
  %0 = graph.exp %a : tensor<4xi32>
  func.return
}

// -----

func.func @unsupported_element_type(%a: tensor<4xsi32>) {
  // expected-error @+1 {{operand #0 ('input') has element type si32; expected one of f32, f16, bf16, f64, i64, i32, i16, i8, ui64, ui32, ui16, ui8, i1}}
  %0 = graph.relu %a : tensor<4xsi32>
  func.return
}

// -----

func.func @dynamic_shape(%a: tensor<?x4xf32>) {
  // expected-error @+1 {{operand #0 ('input') must have a static shape, got tensor<?x4xf32>}}
  %0 = graph.relu %a : tensor<?x4xf32>
  func.return
}

// -----

func.func @gelu_mode(%a: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = graph.gelu %a {approximate = "fast"} : tensor<4xf32>
  func.return
}

// -----

func.func @clamp_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{min 2.0 is greater than max 1.0}}
  %0 = graph.clamp %a {min = 2.0 : f32, max = 1.0 : f32} : tensor<4xf32>
  func.return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{result shape [5] differs from operand #0 ('input') shape [4]}}
  %0 = graph.cast %a : tensor<4xf32> -> tensor<5xi32>
  func.return
}

// -----

func.func @matmul_contracting(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+1 {{operand #1 ('b') contracting dimension is 7, expected 8 to match operand #0 ('a')}}
  %0 = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

func.func @matmul_mixed_bytes(%a: tensor<4x8xui8>, %b: tensor<8x16xi8>) {
  // expected-error @+1 {{a u8 x i8 matmul has an i32 result (it widens)}}
  %0 = graph.matmul %a, %b : (tensor<4x8xui8>, tensor<8x16xi8>) -> tensor<4x16xui8>
  func.return
}

// -----

func.func @matmul_mixed_types(%a: tensor<4x8xui8>, %b: tensor<8x16xi16>) {
  // expected-error @+1 {{operand #1 ('b') has element type i16, expected ui8 like operand #0 ('a')}}
  %0 = graph.matmul %a, %b : (tensor<4x8xui8>, tensor<8x16xi16>) -> tensor<4x16xi32>
  func.return
}

// -----

func.func @matmul_rank(%a: tensor<8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{operand #0 ('a') has rank 1, expected at least 2}}
  %0 = graph.matmul %a, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  func.return
}

// -----

func.func @matmul_transposed(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{operand #1 ('b') contracting dimension is 16, expected 8}}
  %0 = graph.matmul %a, %b {transpose_b = true} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // expected-error @+1 {{operand #1 ('b') of shape [3] does not broadcast with operand #0 ('a') of shape [2]}}
  %0 = graph.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  func.return
}

// -----

func.func @reduce_axis_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axes entry 2 is out of range for rank 2}}
  %0 = graph.reduce_sum %a {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @reduce_duplicate_axes(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axes [1, -1] has duplicates}}
  %0 = graph.reduce_max %a {axes = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @reduce_keep_dims(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<2xf32> does not match the inferred type tensor<2x1xf32>}}
  %0 = graph.reduce_sum %a {axes = array<i64: 1>, keep_dims = true} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.softmax' op axis -3 is out of range for rank 2}}
  %0 = graph.softmax %a {axis = -3 : i64} : tensor<2x3xf32>
  func.return
}

// -----

func.func @layer_norm_gamma(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 ('gamma') has shape [4], expected [3, 4]}}
  %0 = graph.layer_norm %x, %g, %g {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{operand #4 ('var') has shape [4], expected [3]}}
  %0 = graph.batch_norm %x, %c, %c, %c, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @transpose_perm(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm [0, 0, 1] is not a permutation of the 3 dims of operand #0 ('input')}}
  %0 = graph.transpose %a {perm = array<i64: 0, 0, 1>} : tensor<2x3x4xf32> -> tensor<2x2x3xf32>
  func.return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape operand #0 ('input') of shape [2, 3] (6 elements) to [7] (7 elements)}}
  %0 = graph.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  func.return
}

// -----

func.func @broadcast_to_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{operand #0 ('input') of shape [3] cannot be broadcast to [2, 4]}}
  %0 = graph.broadcast_to %a : tensor<3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{operand #1 ('inputs') has shape [3, 3], expected [2, 3] (all dims but 1 like operand #0 ('inputs'))}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @slice_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{starts has 1 entries, expected 2 (the rank)}}
  %0 = graph.slice %a {starts = array<i64: 0>, ends = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<1x1xf32>
  func.return
}

// -----

func.func @slice_step(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{steps [1, 0] must be positive}}
  %0 = graph.slice %a {starts = array<i64: 0, 0>, ends = array<i64: 1, 1>, steps = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<1x1xf32>
  func.return
}

// -----

func.func @conv_channels(%x: tensor<1x4x9x9xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{operand #1 ('weight') has 3 input channels, expected 4 (4 channels of operand #0 ('input') / 1 groups)}}
  %0 = graph.conv2d %x, %w : (tensor<1x4x9x9xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x7x7xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{groups 3 must be positive and divide the 4 input and 6 output channels}}
  %0 = graph.conv2d %x, %w {groups = 3 : i64} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x7x7xf32>
  func.return
}

// -----

func.func @conv_rank(%x: tensor<4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{operand #0 ('input') has rank 3, expected 4}}
  %0 = graph.conv2d %x, %w : (tensor<4x9x9xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x7x7xf32>
  func.return
}

// -----

func.func @conv_pad_value_out_of_range(%x: tensor<1x4x9x9xui8>, %w: tensor<6x4x3x3xi8>) {
  // expected-error @+1 {{pad_value 256 is not a value of ui8}}
  %0 = graph.conv2d %x, %w {pad_value = 256 : i64} : (tensor<1x4x9x9xui8>, tensor<6x4x3x3xi8>) -> tensor<1x6x7x7xi32>
  func.return
}

// -----

func.func @conv_pad_value_of_floats(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{pad_value 1 is not a value of f32}}
  %0 = graph.conv2d %x, %w {pad_value = 1 : i64} : (tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x7x7xf32>
  func.return
}

// -----

func.func @conv_mixed_bytes_not_widened(%x: tensor<1x4x9x9xui8>, %w: tensor<6x4x3x3xi8>) {
  // expected-error @+1 {{a u8 x i8 conv2d has an i32 result (it widens)}}
  %0 = graph.conv2d %x, %w : (tensor<1x4x9x9xui8>, tensor<6x4x3x3xi8>) -> tensor<1x6x7x7xui8>
  func.return
}

// -----

func.func @pool_window(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{the window does not fit: input spatial size [2, 2] gives output [0, 0]}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 3, 3>} : tensor<1x4x2x2xf32> -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @pool_padding(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{padding has 2 entries, expected 4}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x9x9xf32>
  func.return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{result type tensor<3xf32> does not match the inferred type tensor<2xf32>}}
  %0 = "graph.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

// expected-error @+1 {{format 'NK16k' must name each of the dimensions 'KNM' once in uppercase}}
func.func @format_dims(%w: tensor<64x32x2xf32, #graph.format<"KNM" -> "NK16k">>) {
  func.return
}

// -----

func.func @format_block(%a: tensor<60x32xf32, #graph.format<"AB16a">>) {
  // expected-error @+1 {{operand #0 ('input') dimension 0 of size 60 is not a multiple of its blocks [16] in format 'AB16a'}}
  %0 = graph.relu %a : tensor<60x32xf32, #graph.format<"AB16a">>
  func.return
}

// -----

func.func @format_rank(%a: tensor<64xf32, #graph.format<"AB">>) {
  // expected-error @+1 {{operand #0 ('input') of rank 1 has format 'AB' for rank 2}}
  %0 = graph.relu %a : tensor<64xf32, #graph.format<"AB">>
  func.return
}

// -----

func.func @attention_keys(%q: tensor<4x8xf32>, %k: tensor<6x5xf32>, %v: tensor<6x3xf32>) {
  // expected-error @+1 {{'graph.attention' op operand #1 ('key') has [6, 5] keys x features, expected [6, 8] from the query's features and the value's keys}}
  %0 = graph.attention %q, %k, %v : (tensor<4x8xf32>, tensor<6x5xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// Grouped heads: 6 query heads share 3 key heads, but 4 value heads divide nothing.
func.func @attention_grouped_heads(%q: tensor<6x4x8xf32>, %k: tensor<3x5x8xf32>, %v: tensor<4x5x2xf32>) {
  // expected-error @+1 {{'graph.attention' op operand #2 ('value') of shape [4] does not broadcast with operand #0 ('query') of shape [6]}}
  %0 = graph.attention %q, %k, %v : (tensor<6x4x8xf32>, tensor<3x5x8xf32>, tensor<4x5x2xf32>) -> tensor<6x4x2xf32>
  func.return
}

// -----

func.func @attention_mask(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x3xf32>, %m: tensor<4x5xf32>) {
  // expected-error @+1 {{'graph.attention' op the scores of shape [4, 6] does not broadcast with operand #3 ('mask') of shape [4, 5]}}
  %0 = graph.attention %q, %k, %v, %m : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x3xf32>, tensor<4x5xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @attention_mask_grows_scores(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x3xf32>, %m: tensor<2x4x6xf32>) {
  // expected-error @+1 {{'graph.attention' op operand #3 ('mask') of shape [2, 4, 6] does not broadcast to the scores' shape [4, 6]}}
  %0 = graph.attention %q, %k, %v, %m : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x3xf32>, tensor<2x4x6xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @to_blocked_too_few_blocks(%x: tensor<1x24x4x4xf32>) {
  // expected-error @+1 {{result type tensor<1x1x4x4x16xf32> does not match the inferred type tensor<1x2x4x4x16xf32>}}
  %0 = graph.to_blocked %x {block = 16 : i64} : tensor<1x24x4x4xf32> -> tensor<1x1x4x4x16xf32>
  func.return
}

// -----

func.func @from_blocked_rank(%x: tensor<2x16xf32>) {
  // expected-error @+1 {{operand #0 ('input') has rank 2: expected [N, C / b, ..., b] (rank 3 or more)}}
  %0 = graph.from_blocked %x : tensor<2x16xf32> -> tensor<32xf32>
  func.return
}

// -----

func.func @from_blocked_channels_past_the_blocks(%x: tensor<1x2x4x4x16xf32>) {
  // expected-error @+1 {{result type tensor<1x40x4x4xf32> does not match the inferred type tensor<1x32x4x4xf32>}}
  %0 = graph.from_blocked %x : tensor<1x2x4x4x16xf32> -> tensor<1x40x4x4xf32>
  func.return
}

// -----

func.func @blocked_conv_groups(%x: tensor<1x2x4x4x16xf32>, %w: tensor<32x8x1x1xf32>) {
  // expected-error @+1 {{groups 4 must be 1, the 32 channels (depthwise, as many outputs), or split the 32 input and 32 output channels into whole blocks of 16}}
  %0 = graph.blocked_conv2d %x, %w {groups = 4 : i64} : (tensor<1x2x4x4x16xf32>, tensor<32x8x1x1xf32>) -> tensor<1x2x4x4x16xf32>
  func.return
}

// -----

func.func @fused_reads_from_outside(%x: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'graph.add' reads a value defined outside the region: a fused op's ops read only its block arguments and one another's results}}
  %0 = graph.fused %x : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %1 = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    graph.yield %1 : tensor<4x8xf32>
  }
  func.return
}

// -----

func.func @blocked_conv_empty_blocks(%x: tensor<1x4x14x14x0xf32>, %w: tensor<32x32x3x3xf32>) {
  // expected-error @+1 {{operand #0 ('input') has blocks of 0 lanes: expected 1 or more}}
  %0 = graph.blocked_conv2d %x, %w : (tensor<1x4x14x14x0xf32>, tensor<32x32x3x3xf32>) -> tensor<1x4x12x12x0xf32>
  func.return
}

// -----

func.func @blocked_conv_no_groups(%x: tensor<1x2x8x8x16xf32>, %w: tensor<32x32x3x3xf32>) {
  // expected-error @+1 {{groups 0 must be positive}}
  %0 = graph.blocked_conv2d %x, %w {groups = 0 : i64} : (tensor<1x2x8x8x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x2x6x6x16xf32>
  func.return
}

// -----

func.func @from_blocked_empty_blocks(%x: tensor<1x4x14x14x0xf32>) {
  // expected-error @+1 {{operand #0 ('input') has blocks of 0 lanes: expected 1 or more}}
  %0 = graph.from_blocked %x : tensor<1x4x14x14x0xf32> -> tensor<1x0x14x14xf32>
  func.return
}

// -----

func.func @blocked_conv_plain_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<16x2x1x1xf32>) {
  // expected-error @+1 {{a plain input takes one group: operand #1 ('weight') [16, 2, 1, 1] must read its 4 channels}}
  %0 = graph.blocked_conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<16x2x1x1xf32>) -> tensor<1x1x8x8x16xf32>
  func.return
}

// -----

func.func @blocked_conv_plain_result(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x1x1xf32>) {
  // expected-error @+1 {{a plain input needs a blocked result type [N, O / b, OH, OW, b] to give the block}}
  %0 = graph.blocked_conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<16x3x1x1xf32>) -> tensor<1x16x8x8xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<2x3x8x8x16x1xf32>) {
  // expected-error @+1 {{operand #0 ('input') has rank 6, expected 4 (NCHW) or 5 (channel-blocked)}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<2x3x8x8x16x1xf32> -> tensor<2x3x7x7x16x1xf32>
  func.return
}

// -----

func.func @blocked_conv_inputs(%x: tensor<1x2x4x4x16xf32>, %w: tensor<16x40x1x1xf32>) {
  // expected-error @+1 {{operand #1 ('weight') [16, 40, 1, 1] with 1 groups reads 40 channels, which 2 blocks of 16 do not hold}}
  %0 = graph.blocked_conv2d %x, %w : (tensor<1x2x4x4x16xf32>, tensor<16x40x1x1xf32>) -> tensor<1x1x4x4x16xf32>
  func.return
}

// -----

// The 8- and 4-bit floats and the 4- and 2-bit integers are storage types:
// graph.cast converts them and the data-movement ops move them; nothing
// computes on them.
func.func @storage_type_math(%a: tensor<4xf8E4M3FN>, %b: tensor<4xi4>) {
  %0 = graph.cast %a : tensor<4xf8E4M3FN> -> tensor<4xf32>
  %1 = graph.transpose %b {perm = array<i64: 0>} : tensor<4xi4> -> tensor<4xi4>
  // expected-error @+1 {{'graph.add' op graph.add does not compute on f8E4M3FN, a storage type: convert it with graph.cast first}}
  %2 = graph.add %a, %a : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  func.return
}

// -----

func.func @bitcast_width(%a: tensor<4xf32>) {
  // expected-error @+1 {{'graph.bitcast' op result element type i16 has 16 bits, operand #0 ('input')'s f32 32: a bitcast keeps the width}}
  %0 = graph.bitcast %a : tensor<4xf32> -> tensor<4xi16>
  func.return
}
