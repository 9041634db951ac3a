// fuzz-class: crash at jit: SIGABRT: LLVM ERROR: out of memory
// fuzz-signature: crash|jit|SIGABRT: LLVM ERROR: out of memory
// fuzz-pipeline: default
// fuzz-origin: mutant 0:358 of test/Conversion/convert-tir-to-llvm.mlir:5 resize2 (minimized by hand)
tir.func @nan_max_min(%a: vector<2147483648xf32>, %b: vector<2147483648xf32>) -> vector<2147483648xf32> {
  %max = tir.max %a, %b : (vector<2147483648xf32>, vector<2147483648xf32>) -> vector<2147483648xf32>
  tir.return %max : vector<2147483648xf32>
}
