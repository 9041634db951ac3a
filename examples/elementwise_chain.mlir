// exp(relu(x * 2 + 1)) - x on a 4096x4096 tensor: five element-wise ops that
// graph-fuse turns into one loop nest (no intermediate touches memory).
//   gc-run examples/elementwise_chain.mlir --random-inputs --bench 10
//   gc-run examples/elementwise_chain.mlir --random-inputs --bench 10 \
//     --pass-pipeline='builtin.module(convert-graph-to-tir,tir-plan-memory,tir-to-llvm)'
func.func @main(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %two = graph.constant dense<2.0> : tensor<1xf32>
  %one = graph.constant dense<1.0> : tensor<1xf32>
  %0 = graph.mul %x, %two : (tensor<4096x4096xf32>, tensor<1xf32>) -> tensor<4096x4096xf32>
  %1 = graph.add %0, %one : (tensor<4096x4096xf32>, tensor<1xf32>) -> tensor<4096x4096xf32>
  %2 = graph.relu %1 : tensor<4096x4096xf32>
  %3 = graph.exp %2 : tensor<4096x4096xf32>
  %4 = graph.sub %3, %x : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  func.return %4 : tensor<4096x4096xf32>
}
