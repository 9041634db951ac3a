// fuzz-class: internal at tir-to-llvm: internal error in pass 'convert-tir-to-llvm': KeyError: <OpResult[i32] name_hint: None, index: 0, operation: tir.add, uses: 1>
// fuzz-signature: internal|tir-to-llvm|internal error in pass 'convert-tir-to-llvm': KeyError: <>
// fuzz-pipeline: default
// fuzz-origin: mutant 3:148 of test/Conversion/convert-tir-to-llvm.mlir:6 line
tir.func @division(%x: i32, %y: i32) -> i32 {
  %q = tir.div %x, %y : (i32, i32) -> i32
  %r = tir.mod %x, %y : (i32, i32) -> i32
  %seven = tir.const 7 : i32
  %s = tir.div %x, %seven : (i32, i32) -> i32
  %0 = tir.add %q, %r : (i32, i32) -> i32
  tir.return %1 : i32
  %1 = tir.add %0, %s : (i32, i32) -> i32
}
