// fuzz-class: internal at parse: internal error while parsing: OverflowError: float too large to pack with f format
// fuzz-signature: internal|parse|internal error while parsing: OverflowError: float too large to pack with f format
// fuzz-pipeline: default
// fuzz-origin: mutant 3:37 of test/Conversion/convert-tir-to-llvm.mlir:3 attribute (minimized by hand)
tir.global @table : !tir.tensor<2xf32> = dense<[1.0, 3.4e+39]> : tensor<2xf32>
