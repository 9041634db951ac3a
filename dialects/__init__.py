"""graphcompiler's dialects: `graph` (Graph IR), `tir` (Tensor IR), and our `llvm` extensions."""
