"""Where generated code runs: the target description (ISA, lanes, caches)."""
