"""The llvm dialect as LLVM IR text, and that text split into modules."""
