// RUN: gc-opt %s --split-input-file --pass-pipeline='builtin.module(graph-schedule-ops)' --mlir-pass-statistics 2>%t.stats | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.stats
// RUN: gc-opt %s --pass-pipeline='builtin.module(graph-schedule-ops{policy=bfs})' | filecheck %s --check-prefix=BFS
// RUN: gc-opt %s --pass-pipeline='builtin.module(graph-schedule-ops{distance-weight=2.0})' | filecheck %s --check-prefix=DIST
// RUN: not gc-opt %s --pass-pipeline='builtin.module(graph-schedule-ops{policy=random})' 2>&1 | filecheck %s --check-prefix=BAD

// Seed 000: branch A (relu, add) and branch B (matmul, relu) joined by an
// add, written interleaved. The heuristic finishes one branch before
// starting the other; breadth-first keeps them interleaved. Live bytes count
// the inputs until their last use: interleaving keeps x, y, w, a1 and b1
// alive at once (5 x 64 KiB), the heuristic order at most 4. With the
// distance term (DIST), relu(b1) waits until branch A is done, as its user
// does. The statistics add the 192 KiB of @waits (its peak in either
// order) and the 32 bytes of @scalar_args below.
// CHECK-LABEL: func.func @branches
// CHECK-NEXT:    %b1 = graph.matmul
// CHECK-NEXT:    %b2 = graph.relu %b1
// CHECK-NEXT:    %a1 = graph.relu %x
// CHECK-NEXT:    %a2 = graph.add %a1, %x
// CHECK-NEXT:    %out = graph.add %a2, %b2
// BFS-LABEL: func.func @branches
// BFS-NEXT:    %a1 = graph.relu
// BFS-NEXT:    %b1 = graph.matmul
// BFS-NEXT:    %a2 = graph.add
// BFS-NEXT:    %b2 = graph.relu
// DIST-LABEL: func.func @branches
// DIST-NEXT:    %b1 = graph.matmul
// DIST-NEXT:    %a1 = graph.relu %x
// DIST-NEXT:    %a2 = graph.add %a1, %x
// DIST-NEXT:    %b2 = graph.relu %b1
// STATS:      graph-schedule-ops
// STATS-NEXT: (S) 524320 peak-bytes-before - peak live bytes before
// STATS-NEXT: (S) 458784 peak-bytes-after - peak live bytes after
// BAD: error: pass 'graph-schedule-ops' failed: unknown policy 'random' (heuristic, dfs or bfs)
func.func @branches(%x: tensor<128x128xf32>, %y: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %a1 = graph.relu %x : tensor<128x128xf32>
  %b1 = graph.matmul %y, %w : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %a2 = graph.add %a1, %x : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %b2 = graph.relu %b1 : tensor<128x128xf32>
  %out = graph.add %a2, %b2 : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %out : tensor<128x128xf32>
}

// The distance term (`distance-weight`, 0 by default): %v and %c1 score
// alike on their inputs and outputs, so the written order decides; with the
// seed's weight, %v's user also waits on the chain c1 -> c2 -> c3 (3 ops
// deep: a penalty of (3 - 1) * 2), so %v runs after the chain instead of
// living through it (see the pass's docstring for what it costs elsewhere).
// CHECK-LABEL: func.func @waits
// CHECK-NEXT:    %v = graph.relu %y
// CHECK-NEXT:    %c1 = graph.relu %x
// DIST-LABEL: func.func @waits
// DIST-NEXT:    %c1 = graph.relu %x
// DIST-NEXT:    %c2 = graph.exp %c1
// DIST-NEXT:    %c3 = graph.tanh %c2
// DIST-NEXT:    %v = graph.relu %y
// DIST-NEXT:    %out = graph.add %c3, %v
func.func @waits(%x: tensor<128x128xf32>, %y: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %v = graph.relu %y : tensor<128x128xf32>
  %c1 = graph.relu %x : tensor<128x128xf32>
  %c2 = graph.exp %c1 : tensor<128x128xf32>
  %c3 = graph.tanh %c2 : tensor<128x128xf32>
  %out = graph.add %c3, %v : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %out : tensor<128x128xf32>
}

// -----

// Scalar arguments count no bytes; a function of other ops than graph ops
// keeps its order (they may have effects or regions).
// CHECK-LABEL: func.func @scalar_args
// CHECK-NEXT:    %r = graph.relu %t
// CHECK-NEXT:    func.return %r, %s
func.func @scalar_args(%s: f32, %t: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %r = graph.relu %t : tensor<4xf32>
  func.return %r, %s : tensor<4xf32>, f32
}

// CHECK-LABEL: func.func @not_a_graph
// CHECK-NEXT:    %b = arith.mulf %x, %y
// CHECK-NEXT:    %a = arith.mulf %x, %x
// CHECK-NEXT:    %c = arith.addf %a, %b
func.func @not_a_graph(%x: f32, %y: f32) -> f32 {
  %b = arith.mulf %x, %y : f32
  %a = arith.mulf %x, %x : f32
  %c = arith.addf %a, %b : f32
  func.return %c : f32
}
