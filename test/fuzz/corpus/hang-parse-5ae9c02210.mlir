// fuzz-class: hang at parse: no result within 10 s
// fuzz-signature: hang|parse|no result within N s
// fuzz-pipeline: default
// fuzz-origin: mutant 1129:792 of test/Transforms/graph-integer-matmul.mlir:6 resize+dim+duplicate-token
  %qw = graph.constant dense<-3> : tensor<16x8x257x257xi8>
