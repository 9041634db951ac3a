// fuzz-class: internal at parse: internal error while parsing: ZeroDivisionError: integer modulo by zero
// fuzz-signature: internal|parse|internal error while parsing: ZeroDivisionError: integer modulo by zero
// fuzz-pipeline: default
// fuzz-origin: mutant 2:729 of test/Transforms/graph-fuse.mlir:2 dim+dim+dtype
 graph.reduce_sum %x {axes = array<i0: 0
