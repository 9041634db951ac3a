// A small function with redundant arithmetic: CSE and canonicalization
// collapse it. Run:
//   gc-opt examples/simplify.mlir \
//     --pass-pipeline='builtin.module(func.func(cse,canonicalize))'
func.func @scale_twice(%x: f32, %y: f32) -> f32 {
  %a = arith.mulf %x, %y : f32
  %b = arith.mulf %x, %y : f32
  %c = arith.addf %a, %b : f32
  func.return %c : f32
}

func.func @select_same(%cond: i1, %v: i32) -> i32 {
  %0 = arith.addi %v, %v : i32
  %1 = arith.addi %v, %v : i32
  %2 = arith.select %cond, %0, %1 : i32
  func.return %2 : i32
}
