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
// UNKNOWN: error: pass 'graph-rewrite-rules' failed: unknown rewrite rule(s) nope (known: conv2d-bias-relu, matmul-bias-gelu, log-of-exp)
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
