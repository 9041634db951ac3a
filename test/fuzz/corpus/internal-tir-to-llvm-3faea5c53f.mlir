// fuzz-class: internal at tir-to-llvm: internal error in pass 'convert-tir-to-llvm': ZeroDivisionError: integer modulo by zero
// fuzz-signature: internal|tir-to-llvm|internal error in pass 'convert-tir-to-llvm': ZeroDivisionError: integer modulo by zero
// fuzz-pipeline: default
// fuzz-origin: mutant 100:2625 of test/Conversion/convert-tir-to-llvm.mlir:1 number
tir.func @intrinsics(%v: vector<8xf32>, %x: f32) -> f32 { tir.unpack_low %v, %v {elem_bits = 0} : vector<8xf32>
}
