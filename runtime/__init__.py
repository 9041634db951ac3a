"""JIT engine, runtime symbols, parallel call and memory for generated code."""
