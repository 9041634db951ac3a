// fuzz-class: internal at parse: internal error while parsing: KeyError: 'bb1'
// fuzz-signature: internal|parse|internal error while parsing: KeyError: 'bbN'
// fuzz-pipeline: default
// fuzz-origin: mutant 0:2952 of test/Transforms/two-block-function.mlir:1 line+dim2
func.func @matmul(%a: tensor<4x0xf32>) -> tensor<4x0xf32> {
  cf.br ^bb1
^bb1:
^bb1
