// mlir-opt's filtered IR dumps: --mlir-print-ir-before=<pass>[,<pass>] and
// --mlir-print-ir-after=<pass> dump around the named passes only;
// --mlir-print-ir-after-change keeps the after-dumps of passes that changed
// the IR (cse changes @f, not @g); a pass name must be registered.
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' --mlir-print-ir-before=canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' --mlir-print-ir-after=cse,canonicalize --mlir-print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' --mlir-print-ir-after-all --mlir-print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: not gc-opt %s --mlir-print-ir-after=cze 2>&1 | filecheck %s --check-prefix=UNKNOWN

// BEFORE-NOT:  IR Dump Before cse
// BEFORE:      // -----// IR Dump Before canonicalize //----- //
// BEFORE-NEXT: builtin.module {
// BEFORE-NOT:  IR Dump

// CHANGE:      // -----// IR Dump After cse ('func.func' operation: @f) //----- //
// CHANGE-NEXT: func.func @f(%x: i32) -> i32 {
// CHANGE-NEXT:   %0 = arith.addi %x, %x : i32
// CHANGE-NEXT:   %1 = arith.muli %0, %0 : i32
// CHANGE-NOT:  IR Dump

// UNKNOWN: gc-opt: error: 'cze' is not a registered pass; did you mean {{.*}}'cse'

func.func @f(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i32
  %1 = arith.addi %x, %x : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

func.func @g(%x: i32) -> i32 {
  func.return %x : i32
}
