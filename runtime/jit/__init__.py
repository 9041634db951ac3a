"""LLVM IR to machine code: the JIT engine and its optimizer helper processes."""
