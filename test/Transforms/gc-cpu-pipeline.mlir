// gc-cpu-pipeline takes a graph all the way to the llvm dialect.
// RUN: gc-opt %s --pass-pipeline='builtin.module(gc-cpu-pipeline)' --dump-pass-pipeline 2>%t.pipeline | filecheck %s
// RUN: filecheck %s --check-prefix=DUMP < %t.pipeline

// DUMP:      Pass Manager with 18 passes:
// DUMP-NEXT: builtin.module(graph-integer-matmul{target="" convolutions=auto},graph-merge-matmul,graph-constant-fold{max-elements=65536},graph-sink-pads,func.func(canonicalize,cse),graph-lookup-tables,graph-block-layout{target="" block=0},graph-rewrite-rules{rules=},graph-fuse{max-ops=32},graph-schedule-ops{policy=heuristic distance-weight=0.0},convert-graph-to-tir{target="" blob-constants=false},tir-plan-memory{match-range=16 arena-argument=false},tir-outline-parallel,tir-parallel-regions,tir-legalize-types,tir-expand-math{target=""},convert-tir-to-llvm)

// CHECK-NOT: graph.
// CHECK-NOT: tir.
// CHECK:     llvm.func @main(%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.noalias})
// CHECK:     llvm.func @relu__1(
// CHECK-NOT: graph.
// CHECK-NOT: tir.
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = graph.relu %x : tensor<8x8xf32>
  %1 = graph.relu %x : tensor<8x8xf32>
  func.return %0 : tensor<8x8xf32>
}
