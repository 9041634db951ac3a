// fuzz-class: internal at parse: internal error while parsing: AssertionError:
// fuzz-signature: internal|parse|internal error while parsing: AssertionError:
// fuzz-pipeline: default
// fuzz-origin: mutant 3:572 of test/Transforms/canonicalize.mlir:0 op-family+dtype+truncate
 graph.constant dense<0.0> : tensor<1xcomplex<f32>>
