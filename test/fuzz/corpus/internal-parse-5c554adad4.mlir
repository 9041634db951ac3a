// fuzz-class: internal at parse: internal error while parsing: NotImplementedError:
// fuzz-signature: internal|parse|internal error while parsing: NotImplementedError:
// fuzz-pipeline: default
// fuzz-origin: mutant 1:186 of test/Transforms/canonicalize.mlir:0 dim2+resize2+dtype
  %zero = graph.constant dense<0.0> : tensor<1xf80>
