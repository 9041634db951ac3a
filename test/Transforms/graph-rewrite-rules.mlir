// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-rewrite-rules)' | filecheck %s
// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-rewrite-rules{rules=log-of-exp})' | filecheck %s --check-prefix=ONLY
// RUN: not gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-rewrite-rules{rules=nope})' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// conv2d + bias add + relu -> one fused kernel (conv2d as its anchor).
// CHECK-LABEL: func.func @conv_block
// CHECK-NEXT:    %{{.*}} = graph.fused %x, %w, %b
// CHECK:         graph.conv2d
// CHECK-NEXT:    graph.add
// CHECK-NEXT:    graph.relu
// CHECK-NEXT:    graph.yield
// ONLY-LABEL: func.func @conv_block
// ONLY-NOT:     graph.fused
// UNKNOWN: error: pass 'graph-rewrite-rules' failed: unknown rewrite rule(s) nope (known: conv2d-bias-relu, matmul-bias-gelu, log-of-exp, attention, attention-add, attention-mul, attention-mul-add, attention-div, attention-div-add, attention-decode-groups, attention-zeroing-nan, attention-zeroing-nan-add, attention-zeroing-nan-mul, attention-zeroing-nan-mul-add, attention-zeroing-nan-div, attention-zeroing-nan-div-add)
func.func @conv_block(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = graph.add %0, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %2 = graph.relu %1 : tensor<1x4x6x6xf32>
  func.return %2 : tensor<1x4x6x6xf32>
}

// -----

// log(exp(x)) -> x, but not when exp(x) has another user.
// CHECK-LABEL: func.func @log_exp
// CHECK-NEXT:    %[[E:.*]] = graph.exp %y
// CHECK-NEXT:    %[[L:.*]] = graph.log %[[E]]
// CHECK-NEXT:    func.return %x, %[[L]], %[[E]]
// ONLY-LABEL: func.func @log_exp
// ONLY-NEXT:    graph.exp %y
func.func @log_exp(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = graph.exp %x : tensor<8xf32>
  %1 = graph.log %0 : tensor<8xf32>
  %2 = graph.exp %y : tensor<8xf32>
  %3 = graph.log %2 : tensor<8xf32>
  func.return %1, %3, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Scaled dot-product attention with an additive mask becomes one
// graph.attention (scale folded from the multiplier).
// CHECK-LABEL: func.func @attention_mask
// CHECK-NEXT:    %[[A:.*]] = graph.attention %q, %k, %v, %mask {scale = 1.250000e-01 : f32} : (tensor<2x16x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32>, tensor<16x24xf32>) -> tensor<2x16x4xf32>
// CHECK-NEXT:    func.return %[[A]]
func.func @attention_mask(%q: tensor<2x16x8xf32>, %k: tensor<2x24x8xf32>, %v: tensor<2x24x4xf32>, %mask: tensor<16x24xf32>) -> tensor<2x16x4xf32> {
  %s = graph.matmul %q, %k {transpose_b = true} : (tensor<2x16x8xf32>, tensor<2x24x8xf32>) -> tensor<2x16x24xf32>
  %c = graph.constant dense<0.125> : tensor<1xf32>
  %scaled = graph.mul %s, %c : (tensor<2x16x24xf32>, tensor<1xf32>) -> tensor<2x16x24xf32>
  %masked = graph.add %mask, %scaled : (tensor<16x24xf32>, tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
  %p = graph.softmax %masked {axis = -1 : i64} : tensor<2x16x24xf32>
  %o = graph.matmul %p, %v : (tensor<2x16x24xf32>, tensor<2x24x4xf32>) -> tensor<2x16x4xf32>
  func.return %o : tensor<2x16x4xf32>
}

// -----

// torch's scaled_dot_product_attention as exported: q and k each scaled by
// sqrt(scale) before the matmul (folded, the constant on either side:
// 0.5 * 0.25), and NaN probabilities
// (rows the mask leaves without a finite score) set to 0 after the softmax.
// CHECK-LABEL: func.func @exported_sdpa
// CHECK-NEXT:    %[[A:.*]] = graph.attention %q, %kt, %v, %mask {scale = 1.250000e-01 : f32, key_transposed = true, zero_nan_probabilities = true}
// CHECK-NEXT:    func.return %[[A]]
func.func @exported_sdpa(%q: tensor<2x16x8xf32>, %kt: tensor<2x8x24xf32>, %v: tensor<2x24x4xf32>, %mask: tensor<2x1x24xf32>) -> tensor<2x16x4xf32> {
  %a = graph.constant dense<0.5> : tensor<f32>
  %b = graph.constant dense<0.25> : tensor<f32>
  %qs = graph.mul %q, %a : (tensor<2x16x8xf32>, tensor<f32>) -> tensor<2x16x8xf32>
  %ks = graph.mul %b, %kt : (tensor<f32>, tensor<2x8x24xf32>) -> tensor<2x8x24xf32>
  %s = graph.matmul %qs, %ks : (tensor<2x16x8xf32>, tensor<2x8x24xf32>) -> tensor<2x16x24xf32>
  %masked = graph.add %s, %mask : (tensor<2x16x24xf32>, tensor<2x1x24xf32>) -> tensor<2x16x24xf32>
  %p = graph.softmax %masked {axis = -1 : i64} : tensor<2x16x24xf32>
  %nan = graph.not_equal %p, %p : (tensor<2x16x24xf32>, tensor<2x16x24xf32>) -> tensor<2x16x24xi1>
  %zero = graph.constant dense<0.0> : tensor<1xf32>
  %p0 = graph.select %nan, %zero, %p : (tensor<2x16x24xi1>, tensor<1xf32>, tensor<2x16x24xf32>) -> tensor<2x16x24xf32>
  %o = graph.matmul %p0, %v : (tensor<2x16x24xf32>, tensor<2x24x4xf32>) -> tensor<2x16x4xf32>
  func.return %o : tensor<2x16x4xf32>
}

// -----

// The probabilities used elsewhere too: not one op.
// CHECK-LABEL: func.func @sdpa_probabilities_escape
// CHECK-NOT:     graph.attention
func.func @sdpa_probabilities_escape(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) -> (tensor<16x4xf32>, tensor<16x24xf32>) {
  %s = graph.matmul %q, %k {transpose_b = true} : (tensor<16x8xf32>, tensor<24x8xf32>) -> tensor<16x24xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<16x24xf32>
  %nan = graph.not_equal %p, %p : (tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<16x24xi1>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %p0 = graph.select %nan, %zero, %p : (tensor<16x24xi1>, tensor<f32>, tensor<16x24xf32>) -> tensor<16x24xf32>
  %o = graph.matmul %p0, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  func.return %o, %p0 : tensor<16x4xf32>, tensor<16x24xf32>
}

// -----

// A key given pre-transposed ([D, Sk]) and a divisor.
// CHECK-LABEL: func.func @attention_key_transposed
// CHECK-NEXT:    graph.attention %q, %kt, %v {scale = 2.500000e-01 : f32, key_transposed = true}
func.func @attention_key_transposed(%q: tensor<16x8xf32>, %kt: tensor<8x24xf32>, %v: tensor<24x4xf32>) -> tensor<16x4xf32> {
  %s = graph.matmul %q, %kt : (tensor<16x8xf32>, tensor<8x24xf32>) -> tensor<16x24xf32>
  %c = graph.constant dense<4.0> : tensor<f32>
  %scaled = graph.div %s, %c : (tensor<16x24xf32>, tensor<f32>) -> tensor<16x24xf32>
  %p = graph.softmax %scaled {axis = 1 : i64} : tensor<16x24xf32>
  %o = graph.matmul %p, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  func.return %o : tensor<16x4xf32>
}

// -----

// The exporters' kᵀ: the projection's [b, Sk, h, D] transposed to
// [b, h, D, Sk] element by element; the attention reads the projection in
// place (a sequence-major key), and a transpose that leaves the keys' rows
// in place is dropped.
// CHECK-LABEL: func.func @attention_key_rows
// CHECK-NEXT:    %[[A:.*]] = graph.attention %q, %k4, %v {sequence_major = ["key"]} : (tensor<2x3x16x8xf32>, tensor<2x24x3x8xf32>, tensor<2x3x24x4xf32>) -> tensor<2x3x16x4xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.attention %q, %k3, %v : (tensor<2x3x16x8xf32>, tensor<2x3x24x8xf32>, tensor<2x3x24x4xf32>) -> tensor<2x3x16x4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @attention_key_rows(%q: tensor<2x3x16x8xf32>, %k4: tensor<2x24x3x8xf32>, %k3: tensor<2x3x24x8xf32>, %v: tensor<2x3x24x4xf32>) -> (tensor<2x3x16x4xf32>, tensor<2x3x16x4xf32>) {
  %kt = graph.transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : tensor<2x24x3x8xf32> -> tensor<2x3x8x24xf32>
  %s = graph.matmul %q, %kt : (tensor<2x3x16x8xf32>, tensor<2x3x8x24xf32>) -> tensor<2x3x16x24xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<2x3x16x24xf32>
  %o = graph.matmul %p, %v : (tensor<2x3x16x24xf32>, tensor<2x3x24x4xf32>) -> tensor<2x3x16x4xf32>
  %kt2 = graph.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x3x24x8xf32> -> tensor<2x3x8x24xf32>
  %s2 = graph.matmul %q, %kt2 : (tensor<2x3x16x8xf32>, tensor<2x3x8x24xf32>) -> tensor<2x3x16x24xf32>
  %p2 = graph.softmax %s2 {axis = 3 : i64} : tensor<2x3x16x24xf32>
  %o2 = graph.matmul %p2, %v : (tensor<2x3x16x24xf32>, tensor<2x3x24x4xf32>) -> tensor<2x3x16x4xf32>
  func.return %o, %o2 : tensor<2x3x16x4xf32>, tensor<2x3x16x4xf32>
}

// -----

// Exporters' head split ([b, S, h, D] -> [b, h, S, D]) of q, k and v and
// the head merge after: all read and written in place, no transpose left.
// A transpose that is used elsewhere too stays for that use; one that is no
// head split (of the batch dims) is an operand as before.
// CHECK-LABEL: func.func @attention_heads_in_place
// CHECK-NEXT:    %[[VT:.*]] = graph.transpose %v {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT:    %[[O:.*]] = graph.attention %q, %k, %v {scale = 1.250000e-01 : f32, sequence_major = ["query", "key", "value", "result"]} : (tensor<2x16x3x8xf32>, tensor<2x24x3x8xf32>, tensor<2x24x3x4xf32>) -> tensor<2x16x3x4xf32>
// CHECK-NEXT:    %[[QB:.*]] = graph.transpose %q2 {perm = array<i64: 1, 2, 0, 3>}
// CHECK-NEXT:    %[[O2:.*]] = graph.attention %[[QB]], %k, %v {sequence_major = ["key", "value"]} : (tensor<2x3x16x8xf32>, tensor<2x24x3x8xf32>, tensor<2x24x3x4xf32>) -> tensor<2x3x16x4xf32>
// CHECK-NEXT:    func.return %[[O]], %[[VT]], %[[O2]]
func.func @attention_heads_in_place(%q: tensor<2x16x3x8xf32>, %k: tensor<2x24x3x8xf32>, %v: tensor<2x24x3x4xf32>, %q2: tensor<16x2x3x8xf32>) -> (tensor<2x16x3x4xf32>, tensor<2x3x24x4xf32>, tensor<2x3x16x4xf32>) {
  %qh = graph.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<2x16x3x8xf32> -> tensor<2x3x16x8xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x24x3x8xf32> -> tensor<2x3x8x24xf32>
  %vh = graph.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<2x24x3x4xf32> -> tensor<2x3x24x4xf32>
  %s = graph.matmul %qh, %kt : (tensor<2x3x16x8xf32>, tensor<2x3x8x24xf32>) -> tensor<2x3x16x24xf32>
  %c = graph.constant dense<0.125> : tensor<f32>
  %scaled = graph.mul %s, %c : (tensor<2x3x16x24xf32>, tensor<f32>) -> tensor<2x3x16x24xf32>
  %p = graph.softmax %scaled {axis = 3 : i64} : tensor<2x3x16x24xf32>
  %o = graph.matmul %p, %vh : (tensor<2x3x16x24xf32>, tensor<2x3x24x4xf32>) -> tensor<2x3x16x4xf32>
  %merged = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x16x4xf32> -> tensor<2x16x3x4xf32>
  %qb = graph.transpose %q2 {perm = array<i64: 1, 2, 0, 3>} : tensor<16x2x3x8xf32> -> tensor<2x3x16x8xf32>
  %kt2 = graph.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x24x3x8xf32> -> tensor<2x3x8x24xf32>
  %s2 = graph.matmul %qb, %kt2 : (tensor<2x3x16x8xf32>, tensor<2x3x8x24xf32>) -> tensor<2x3x16x24xf32>
  %p2 = graph.softmax %s2 {axis = 3 : i64} : tensor<2x3x16x24xf32>
  %o2 = graph.matmul %p2, %vh : (tensor<2x3x16x24xf32>, tensor<2x3x24x4xf32>) -> tensor<2x3x16x4xf32>
  func.return %merged, %vh, %o2 : tensor<2x16x3x4xf32>, tensor<2x3x24x4xf32>, tensor<2x3x16x4xf32>
}

// -----

// Grouped-query attention as Llama exports it: repeat_kv (reshape, expand,
// reshape) of k and v, the value after its head split. The attention reads
// the 2 key/value heads grouped, the value in place; a repeat whose result
// has another use stays for that use; an expand along the keys (not a
// repeat of heads) stays and is read as it is.
// CHECK-LABEL: func.func @attention_grouped_heads
// CHECK-NEXT:    %[[O:.*]] = graph.attention %q, %k, %v {sequence_major = ["value"]} : (tensor<1x6x16x8xf32>, tensor<1x2x24x8xf32>, tensor<1x24x2x4xf32>) -> tensor<1x6x16x4xf32>
// CHECK-NEXT:    %[[K1:.*]] = graph.reshape %k
// CHECK-NEXT:    %[[K2:.*]] = graph.broadcast_to %[[K1]]
// CHECK-NEXT:    %[[K3:.*]] = graph.reshape %[[K2]]
// CHECK-NEXT:    %[[O2:.*]] = graph.attention %q, %k, %v2 : (tensor<1x6x16x8xf32>, tensor<1x2x24x8xf32>, tensor<1x6x24x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = graph.broadcast_to %k1
// CHECK-NEXT:    %[[O3:.*]] = graph.attention %q, %[[S]], %v2 {key_transposed = true}
// CHECK-NEXT:    func.return %[[O]], %[[O2]], %[[K3]], %[[O3]]
func.func @attention_grouped_heads(%q: tensor<1x6x16x8xf32>, %k: tensor<1x2x24x8xf32>, %v: tensor<1x24x2x4xf32>, %v2: tensor<1x6x24x8xf32>, %k1: tensor<1x6x8x1xf32>) -> (tensor<1x6x16x4xf32>, tensor<1x6x16x8xf32>, tensor<1x6x24x8xf32>, tensor<1x6x16x8xf32>) {
  %kr1 = graph.reshape %k : tensor<1x2x24x8xf32> -> tensor<1x2x1x24x8xf32>
  %kr2 = graph.broadcast_to %kr1 : tensor<1x2x1x24x8xf32> -> tensor<1x2x3x24x8xf32>
  %kr3 = graph.reshape %kr2 : tensor<1x2x3x24x8xf32> -> tensor<1x6x24x8xf32>
  %vh = graph.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<1x24x2x4xf32> -> tensor<1x2x24x4xf32>
  %vr1 = graph.reshape %vh : tensor<1x2x24x4xf32> -> tensor<1x2x1x24x4xf32>
  %vr2 = graph.broadcast_to %vr1 : tensor<1x2x1x24x4xf32> -> tensor<1x2x3x24x4xf32>
  %vr3 = graph.reshape %vr2 : tensor<1x2x3x24x4xf32> -> tensor<1x6x24x4xf32>
  %s = graph.matmul %q, %kr3 {transpose_b = true} : (tensor<1x6x16x8xf32>, tensor<1x6x24x8xf32>) -> tensor<1x6x16x24xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<1x6x16x24xf32>
  %o = graph.matmul %p, %vr3 : (tensor<1x6x16x24xf32>, tensor<1x6x24x4xf32>) -> tensor<1x6x16x4xf32>
  %r1 = graph.reshape %k : tensor<1x2x24x8xf32> -> tensor<1x2x1x24x8xf32>
  %r2 = graph.broadcast_to %r1 : tensor<1x2x1x24x8xf32> -> tensor<1x2x3x24x8xf32>
  %r3 = graph.reshape %r2 : tensor<1x2x3x24x8xf32> -> tensor<1x6x24x8xf32>
  %s2 = graph.matmul %q, %r3 {transpose_b = true} : (tensor<1x6x16x8xf32>, tensor<1x6x24x8xf32>) -> tensor<1x6x16x24xf32>
  %p2 = graph.softmax %s2 {axis = -1 : i64} : tensor<1x6x16x24xf32>
  %o2 = graph.matmul %p2, %v2 : (tensor<1x6x16x24xf32>, tensor<1x6x24x8xf32>) -> tensor<1x6x16x8xf32>
  %seq = graph.broadcast_to %k1 : tensor<1x6x8x1xf32> -> tensor<1x6x8x24xf32>
  %s3 = graph.matmul %q, %seq : (tensor<1x6x16x8xf32>, tensor<1x6x8x24xf32>) -> tensor<1x6x16x24xf32>
  %p3 = graph.softmax %s3 {axis = -1 : i64} : tensor<1x6x16x24xf32>
  %o3 = graph.matmul %p3, %v2 : (tensor<1x6x16x24xf32>, tensor<1x6x24x8xf32>) -> tensor<1x6x16x8xf32>
  func.return %o, %o2, %r3, %o3 : tensor<1x6x16x4xf32>, tensor<1x6x16x8xf32>, tensor<1x6x24x8xf32>, tensor<1x6x16x8xf32>
}

// -----

// A decode step (one query) of grouped heads: each group's 3 query heads
// become 3 queries of its key/value head (reshapes, which are views), a
// per-head mask likewise; a shared mask and a prefill (16 queries) stay.
// CHECK-LABEL: func.func @attention_decode_groups
// CHECK-NEXT:    %[[Q:.*]] = graph.reshape %q : tensor<1x1x6x8xf32> -> tensor<1x2x3x8xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.reshape %m : tensor<1x6x1x24xf32> -> tensor<1x2x3x24xf32>
// CHECK-NEXT:    %[[G:.*]] = graph.attention %[[Q]], %k, %v, %[[M]] {scale = 5.000000e-01 : f32} : (tensor<1x2x3x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x4xf32>, tensor<1x2x3x24xf32>) -> tensor<1x2x3x4xf32>
// CHECK-NEXT:    %[[O:.*]] = graph.reshape %[[G]] : tensor<1x2x3x4xf32> -> tensor<1x1x6x4xf32>
// CHECK-NEXT:    %[[Q2:.*]] = graph.reshape %q2 : tensor<1x6x1x8xf32> -> tensor<1x2x3x8xf32>
// CHECK-NEXT:    %[[G2:.*]] = graph.attention %[[Q2]], %k, %v, %s : (tensor<1x2x3x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x4xf32>, tensor<1x1x1x24xf32>)
// CHECK-NEXT:    %[[O2:.*]] = graph.reshape %[[G2]]
// CHECK-NEXT:    %[[P:.*]] = graph.attention %p, %k, %v : (tensor<1x6x16x8xf32>
// CHECK-NEXT:    func.return %[[O]], %[[O2]], %[[P]]
func.func @attention_decode_groups(%q: tensor<1x1x6x8xf32>, %q2: tensor<1x6x1x8xf32>, %p: tensor<1x6x16x8xf32>, %k: tensor<1x2x24x8xf32>, %v: tensor<1x2x24x4xf32>, %m: tensor<1x6x1x24xf32>, %s: tensor<1x1x1x24xf32>) -> (tensor<1x1x6x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x16x4xf32>) {
  %o = graph.attention %q, %k, %v, %m {scale = 0.5 : f32, sequence_major = ["query", "result"]} : (tensor<1x1x6x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x4xf32>, tensor<1x6x1x24xf32>) -> tensor<1x1x6x4xf32>
  %o2 = graph.attention %q2, %k, %v, %s : (tensor<1x6x1x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x4xf32>, tensor<1x1x1x24xf32>) -> tensor<1x6x1x4xf32>
  %o3 = graph.attention %p, %k, %v : (tensor<1x6x16x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x4xf32>) -> tensor<1x6x16x4xf32>
  func.return %o, %o2, %o3 : tensor<1x1x6x4xf32>, tensor<1x6x1x4xf32>, tensor<1x6x16x4xf32>
}

// -----

// Not attention: softmax over the queries, a per-element scale, a constant
// divided by the scores, the scores used twice.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT:     graph.attention
func.func @not_attention(%q: tensor<16x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>, %w: tensor<16x24xf32>, %vt: tensor<16x4xf32>) -> (tensor<24x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x24xf32>) {
  %s0 = graph.matmul %q, %k {transpose_b = true} : (tensor<16x8xf32>, tensor<24x8xf32>) -> tensor<16x24xf32>
  %p0 = graph.softmax %s0 {axis = 0 : i64} : tensor<16x24xf32>
  %o0 = graph.matmul %p0, %vt {transpose_a = true} : (tensor<16x24xf32>, tensor<16x4xf32>) -> tensor<24x4xf32>
  %s1 = graph.matmul %q, %k {transpose_b = true} : (tensor<16x8xf32>, tensor<24x8xf32>) -> tensor<16x24xf32>
  %m1 = graph.mul %s1, %w : (tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
  %p1 = graph.softmax %m1 {axis = -1 : i64} : tensor<16x24xf32>
  %o1 = graph.matmul %p1, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  %c = graph.constant dense<4.0> : tensor<1xf32>
  %s2 = graph.matmul %q, %k {transpose_b = true} : (tensor<16x8xf32>, tensor<24x8xf32>) -> tensor<16x24xf32>
  %d2 = graph.div %c, %s2 : (tensor<1xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
  %p2 = graph.softmax %d2 {axis = -1 : i64} : tensor<16x24xf32>
  %o2 = graph.matmul %p2, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  %s3 = graph.matmul %q, %k {transpose_b = true} : (tensor<16x8xf32>, tensor<24x8xf32>) -> tensor<16x24xf32>
  %p3 = graph.softmax %s3 {axis = -1 : i64} : tensor<16x24xf32>
  %o3 = graph.matmul %p3, %v : (tensor<16x24xf32>, tensor<24x4xf32>) -> tensor<16x4xf32>
  func.return %o0, %o1, %o2, %o3, %s3 : tensor<24x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x24xf32>
}
