// --version; an unknown flag is answered with the closest known ones; an
// empty input is an empty module, as in mlir-opt.
// RUN: gc-opt --version | filecheck %s --check-prefix=VERSION
// RUN: not gc-opt %s --mlir-print-ir-afterall 2>&1 | filecheck %s --check-prefix=TYPO
// RUN: not gc-translate %s --mlir-to-llvm-ir 2>&1 | filecheck %s --check-prefix=TRANSLATE
// RUN: printf '' | gc-opt | filecheck %s --check-prefix=EMPTY
// RUN: gc-opt %s | filecheck %s --check-prefix=EMPTY

// VERSION:   gc-opt (graphcompiler) {{[0-9]+\.[0-9]+}}
// TYPO:      gc-opt: error: unknown argument '--mlir-print-ir-afterall'; did you mean '--mlir-print-ir-after-all'
// TRANSLATE: gc-translate: error: unknown argument '--mlir-to-llvm-ir'; did you mean '--mlir-to-llvmir'?
// EMPTY:      builtin.module {
// EMPTY-NEXT: }
