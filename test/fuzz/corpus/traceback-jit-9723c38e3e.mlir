// fuzz-class: traceback at jit: RuntimeError: Intrinsic has incorrect return type! ptr @llvm.log.v16i16 Intrinsic has incorrect return type! ptr @llvm.tanh.v16i16 Intrinsic has incorrect return type! ptr @llvm.exp.v16i16 [jit.py:parse_llvm_ir]
// fuzz-signature: traceback|jit|RuntimeError|jit.py:parse_llvm_ir
// fuzz-pipeline: default
// fuzz-origin: mutant 22:239 of test/Conversion/convert-tir-to-llvm.mlir:9 dtype
tir.func @vector_math(%x: vector<16xbf16>) -> vector<16xbf16> { tir.log %x : vector<16xbf16> -> vector<16xbf16>
}
