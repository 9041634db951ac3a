// IR dumps around each pass go to stderr with a header naming the pass and,
// for nested pipelines, the op it ran on; stdout keeps only the result.
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// RUN: gc-opt %s --pass-pipeline='builtin.module(func.func(cse),canonicalize)' -mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER

// BEFORE:      // -----// IR Dump Before cse ('func.func' operation: @f) //----- //
// BEFORE-NEXT: func.func @f(%x: i32) -> i32 {
// BEFORE-COUNT-2: arith.addi
// BEFORE:      // -----// IR Dump Before cse ('func.func' operation: @g) //----- //
// BEFORE:      // -----// IR Dump Before canonicalize //----- //
// BEFORE-NEXT: builtin.module {
// BEFORE-NOT:  IR Dump After

// AFTER:      // -----// IR Dump After cse ('func.func' operation: @f) //----- //
// AFTER-NEXT: func.func @f(%x: i32) -> i32 {
// AFTER-NEXT:   %0 = arith.addi %x, %x : i32
// AFTER-NEXT:   %1 = arith.muli %0, %0 : i32
// AFTER:      // -----// IR Dump After cse ('func.func' operation: @g) //----- //
// AFTER:      // -----// IR Dump After canonicalize //----- //
// AFTER-NOT:  IR Dump Before

func.func @f(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i32
  %1 = arith.addi %x, %x : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

func.func @g() {
  func.return
}
