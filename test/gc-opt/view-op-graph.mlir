// --view-op-graph writes each function's op graph as Graphviz DOT to stderr
// (stdout keeps the module), or to a file; it is also the pass
// `view-op-graph`, usable anywhere in a pipeline. Ops show their
// non-default properties and result types, edges the tensor type, large
// constants are elided.
// RUN: gc-opt %s --view-op-graph 2>&1 >/dev/null | filecheck %s
// RUN: gc-opt %s --view-op-graph=%t.dot | filecheck %s --check-prefix=MODULE
// RUN: filecheck %s < %t.dot
// RUN: gc-opt %s --pass-pipeline='builtin.module(view-op-graph,canonicalize)' 2>&1 >/dev/null | filecheck %s

// CHECK:      digraph G {
// CHECK:        subgraph [[F:cluster_[0-9]+]] {
// CHECK-NEXT:     label = "func.func @main\l";
// CHECK-NEXT:     [[X:arg[0-9]+]] [label = "%x\ltensor<4x8xf32>\l", shape = invhouse
// CHECK-NEXT:     [[W:op[0-9]+]] [label = "graph.constant\lvalue = dense_resource<__elided__> : tensor<16x8xf32>\l-> tensor<16x8xf32>\l", shape = box];
// CHECK-NEXT:     [[MM:op[0-9]+]] [label = "graph.matmul\ltranspose_b = true\l-> tensor<4x16xf32>\l", shape = box];
// CHECK-NEXT:     [[R:op[0-9]+]] [label = "func.return\l", shape = ellipse];
// CHECK-NEXT:   }
// CHECK-DAG:    [[X]] -> [[MM]] [label = "tensor<4x8xf32>\l"];
// CHECK-DAG:    [[W]] -> [[MM]] [label = "tensor<16x8xf32>\l"];
// CHECK-DAG:    [[MM]] -> [[R]] [label = "tensor<4x16xf32>\l"];
// CHECK:      }
// MODULE:     graph.matmul
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = graph.constant dense<1.0> : tensor<16x8xf32>
  %0 = graph.matmul %x, %w {transpose_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}
