// gc-translate lowers Tensor IR (outlining parallel loops first) and prints
// LLVM IR, or the optimized host assembly.
// RUN: gc-translate %s --mlir-to-llvmir | filecheck %s --check-prefix=LLVM
// RUN: gc-translate %s -emit-asm | filecheck %s --check-prefix=ASM
// RUN: gc-opt %s --pass-pipeline='builtin.module(tir-to-llvm)' | gc-translate --mlir-to-llvmir | filecheck %s --check-prefix=LLVM
// RUN: not gc-translate %s 2>&1 | filecheck %s --check-prefix=MODE
// Plugins load as in gc-opt and gc-run; a broken one is a one-line error.
// RUN: gc-translate %s --load-plugin=%plugins/toy_plugin.py --mlir-to-llvmir | filecheck %s --check-prefix=LLVM
// RUN: not gc-translate %s --load-plugin=%t.missing.py --mlir-to-llvmir 2>&1 | filecheck %s --check-prefix=PLUGIN
// PLUGIN: gc-translate: error: cannot load plugin '{{.*}}missing.py'
// RUN: not gc-translate %S/../Conversion/convert-tir-to-llvm-invalid.mlir --mlir-to-llvmir 2>&1 | filecheck %s --check-prefix=ERROR

// LLVM: define void @"for_body"(i64 %".1", ptr noalias %".2")
// LLVM: define void @"fill"(ptr noalias %".1")
// LLVM: call {{.*}}@"sc_parallel_call_cpu"
// LLVM: declare void @"sc_parallel_call_cpu"(ptr %".1", i64 %".2", i64 %".3", i64 %".4", ptr %".5", i64 %".6")
// ASM: fill:
// ASM: sc_parallel_call_cpu
// MODE: error: one of the arguments --mlir-to-llvmir/-mlir-to-llvmir --emit-asm/-emit-asm --import-onnx/-import-onnx --emit-shared/-emit-shared is required
// ERROR: convert-tir-to-llvm-invalid.mlir:19:8: error: 'arith.constant' op cannot be converted to the llvm dialect
tir.func @fill(%A: !tir.tensor<64xf32>) {
  %c0 = tir.const 0 : index
  %c1 = tir.const 1 : index
  %c64 = tir.const 64 : index
  %one = tir.const 1.0 : f32
  tir.for %i = %c0 to %c64 step %c1 parallel {
    tir.store %one, %A[%i] : !tir.tensor<64xf32>
  }
  tir.return
}

// A graph goes through gc-cpu-pipeline first.
// RUN: gc-translate %S/../../examples/mlp.mlir --mlir-to-llvmir | filecheck %s --check-prefix=GRAPH
// GRAPH: define void @"main"(ptr noalias
// GRAPH: define void @"fused__1"(
