// RUN: gc-opt %s --mlir-print-op-generic | filecheck %s
// RUN: gc-opt %s --mlir-print-debuginfo | filecheck %s --check-prefix=LOC

// CHECK: "func.func"() <{sym_name = "f", function_type = (i32) -> i32}> ({
// CHECK: %{{.*}} = "arith.addi"(%{{.*}}, %{{.*}}) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
// Locations are those of the op names in this file.
// LOC: arith.addi %x, %x : i32 loc("{{.*}}print-op-generic.mlir":[[# @LINE + 2]]:8)
func.func @f(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i32
  func.return %0 : i32
}
