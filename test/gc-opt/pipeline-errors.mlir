// A misspelled pipeline is a one-line error naming the closest passes.
// RUN: not gc-opt %s --pass-pipeline='builtin.module(func.func(csee))' 2>&1 | filecheck %s --check-prefix=PASS
// PASS: gc-opt: error: unknown pass or pipeline 'csee'; did you mean 'cse'?
// PASS-NOT: Traceback

// RUN: not gc-opt %s --pass-pipeline='builtin.module(canonicalise)' 2>&1 | filecheck %s --check-prefix=CANON
// CANON: error: unknown pass or pipeline 'canonicalise'; did you mean 'canonicalize'

// Unknown and ill-typed options name the pass and what it accepts.
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants{factr=3}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: gc-opt: error: unknown option 'factr' for pass 'toy-scale-constants'; did you mean 'factor'?
// RUN: not gc-opt %s --load-plugin=%plugins/toy_plugin.py -p 'toy-scale-constants{factor=abc}' 2>&1 | filecheck %s --check-prefix=VALUE
// VALUE: gc-opt: error: invalid value 'abc' for option 'factor' of pass 'toy-scale-constants': expected int
// RUN: not gc-opt %s -p 'cse{level=3}' 2>&1 | filecheck %s --check-prefix=NOOPTS
// NOOPTS: gc-opt: error: unknown option 'level' for pass 'cse'; 'cse' has no options

// Syntax errors say what was expected and where.
// RUN: not gc-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | filecheck %s --check-prefix=PAREN
// PAREN: gc-opt: error: expected ')' to close 'builtin.module(', found end of pipeline at column 30
// RUN: not gc-opt %s -p 'toy-scale-constants{factor=3' --load-plugin=%plugins/toy_plugin.py 2>&1 | filecheck %s --check-prefix=BRACE
// BRACE: error: expected '}' to close the options of 'toy-scale-constants'
// RUN: not gc-opt %s --pass-pipeline='builtin.module(cse)' -p cse 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH: gc-opt: error: give either --pass-pipeline or -p, not both

func.func @f() {
  func.return
}

// A function over scalars goes through graph-schedule-ops and is reported
// where the lowering stops, at the function.
// RUN: not gc-opt %S/../../examples/simplify.mlir --pass-pipeline='builtin.module(gc-cpu-pipeline)' 2>&1 | filecheck %s --check-prefix=SCALAR
// SCALAR: simplify.mlir:5:1: error: 'func.func' op argument #0 has type f32: graph functions take and return tensors
// SCALAR-NOT: internal error
