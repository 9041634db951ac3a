"""Dialect conversions: graph -> tir -> llvm."""
