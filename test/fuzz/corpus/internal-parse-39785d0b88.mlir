// fuzz-class: internal at parse: internal error while parsing: OverflowError: float too large to pack with f format
// fuzz-signature: internal|parse|internal error while parsing: OverflowError: float too large to pack with f format
// fuzz-pipeline: builtin.module(graph-fuse,convert-graph-to-tir,tir-plan-memory,tir-outline-parallel,convert-tir-to-llvm)
// fuzz-origin: mutant 1:33 of test/Target/gc-translate.mlir:0 number+dim2
  %one = tir.const 1.0e+308 : f32
