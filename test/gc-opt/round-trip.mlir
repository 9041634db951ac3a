// gc-opt's own output parses back: the llvm dialect of gc-cpu-pipeline
// (vector compares and selects included) goes through gc-opt again and
// through gc-translate.
// RUN: gc-opt %s --pass-pipeline='builtin.module(gc-cpu-pipeline)' > %t.mlir
// RUN: gc-opt %t.mlir | filecheck %s --check-prefix=DIALECT
// RUN: gc-translate %t.mlir --mlir-to-llvmir | filecheck %s --check-prefix=LLVM

// DIALECT: llvm.fcmp "ogt" %{{.*}}, %{{.*}} : vector<{{[0-9]+}}xf32>
// DIALECT: llvm.select %{{.*}}, %{{.*}}, %{{.*}} : vector<{{[0-9]+}}xi1>, vector<{{[0-9]+}}xf32>
// LLVM: fcmp ogt <{{[0-9]+}} x float>
// LLVM: select <{{[0-9]+}} x i1>
func.func @main(%x: tensor<3x127xf32>, %y: tensor<3x127xf32>) -> tensor<3x127xf32> {
  %c = graph.greater %x, %y : (tensor<3x127xf32>, tensor<3x127xf32>) -> tensor<3x127xi1>
  %0 = graph.select %c, %x, %y : (tensor<3x127xi1>, tensor<3x127xf32>, tensor<3x127xf32>) -> tensor<3x127xf32>
  func.return %0 : tensor<3x127xf32>
}
