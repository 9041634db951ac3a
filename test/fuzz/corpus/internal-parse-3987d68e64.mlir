// fuzz-class: internal at parse: internal error while parsing: OverflowError: int too big to convert
// fuzz-signature: internal|parse|internal error while parsing: OverflowError: int too big to convert
// fuzz-pipeline: default
// fuzz-origin: mutant 1:777 of test/Conversion/convert-tir-to-llvm.mlir:8 number
  %c = tir.const 0x7F800000 : bf16
