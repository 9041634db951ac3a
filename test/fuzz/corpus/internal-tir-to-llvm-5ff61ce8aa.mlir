// fuzz-class: internal at tir-to-llvm: internal error in pass 'convert-tir-to-llvm': KeyError: <OpResult[none] name_hint: s1, index: 0, operation: tir.call, uses: 1>
// fuzz-signature: internal|tir-to-llvm|internal error in pass 'convert-tir-to-llvm': KeyError: <>
// fuzz-pipeline: builtin.module(graph-rewrite-rules,convert-graph-to-tir,tir-plan-memory,tir-outline-parallel,convert-tir-to-llvm)
// fuzz-origin: mutant 11:104 of test/Execution/intrinsics.mlir:0 op-family2 (minimized by hand)
tir.func @show(%v: f32) {
}
tir.func @conversions() {
  %one = tir.const 1.0 : f32
  %s1 = tir.call @show(%one) : (f32) -> none
  tir.return %s1 : none
}
